// `headroom watch`'s run in the journal (a RecordedRun, store/recorded_run.h): begun with a
// "files" event naming the samples, log and events files by absolute path (committed at
// once, so a run cut by a power-off still points at its files; `explain --run` and `report
// --run` read it), with --guard the guard's "start" record (guard/guard_record.h), finished
// with the row count beside the files. A journal that cannot be opened or written is handed
// to `note` (the CLI prints it), never a reason not to sample.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "store/recorded_run.h"
#include "sys/sysroot.h"

namespace headroom {

class WatchRecord {
 public:
  using Note = std::function<void(const Error& error)>;
  // name -> path ("" for a file not written: null in the record).
  using Files = std::vector<std::pair<std::string, std::string>>;

  WatchRecord() = default;  // --no-journal: records nothing
  // Begins the run in the journal at `journal` (its error, when the path could not be had,
  // goes to `note`). `command`: the job; none: recorded as "headroom watch".
  WatchRecord(const Result<std::filesystem::path>& journal, const std::vector<std::string>& command,
              const Files& files, Note note);

  // The run's id, when it is recorded.
  std::optional<int64_t> id() const;
  // With --guard: who guards at which levels, for `headroom top`.
  void Guarding(const SysRoot& real_root, uint64_t kill_below_bytes, uint64_t warn_below_bytes);
  void Finish(std::string_view status, int exit_status, uint64_t rows);

 private:
  Note note_;
  std::optional<RecordedRun> run_;
  std::string files_json_ = "{}";  // the "files" event's data, a JSON object
};

}  // namespace headroom
