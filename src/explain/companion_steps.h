// Steps from the companion's step records (samples/companion_records.h, docs/companion.md)
// instead of a scraped log: the trainer's own step numbers, stamped with the wall clock when
// each step ended, so every interval is exact (no tqdm EMA, no whole-second stamps). `explain`
// and `report` take them when the file they are given is a step-records file, and say so.
#pragma once

#include <string_view>
#include <vector>

#include "explain/step_log.h"
#include "explain/step_record.h"
#include "samples/companion_records.h"

namespace headroom {

// The "step" records as StepRecords: format kCompanion, time from "wall" (kLine), the loss,
// one stream per (pid, rank), measured (the trainer's own clock, not a display).
std::vector<StepRecord> StepRecordsFromCompanion(const CompanionRecords& records);

// Whether `text` is a step-records file: its first non-blank line is a record of this schema.
bool IsCompanionRecordsText(std::string_view text);

// The step series of a log or of a step-records file, whichever `text` is; `from_records`
// says which.
std::vector<StepRecord> ParseStepSource(std::string_view text, StepLogOptions options,
                                        bool* from_records);

}  // namespace headroom
