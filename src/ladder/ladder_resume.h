// Where a ladder's job can resume from (docs/ladder.md, "Resuming from the checkpoint"): the
// checkpoint that the guard asked for before its kill (guard/checkpoint_request.h), as the
// journal's summary of the job's last guarded run records it, and the resume command for the
// framework that wrote it (the companion's "source", docs/companion.md). Pure: the CLI reads
// the runs and prints (cli/ladder_view.cc).
//
// The commands, as each framework documents its resume:
//   transformers (the Trainer, which TRL's trainers inherit): Trainer.train's
//     resume_from_checkpoint (huggingface/transformers src/transformers/trainer.py), and the
//     scripts' --resume_from_checkpoint flag (TrainingArguments, training_args.py);
//   lightning: Trainer.fit's ckpt_path (Lightning-AI/pytorch-lightning
//     src/lightning/pytorch/trainer/trainer.py);
//   loop (headroom.on_save's function): the file it wrote, loaded with torch.load.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/journal.h"

namespace headroom {

enum class ResumeFramework : uint8_t { kTransformers, kLightning, kLoop, kUnknown };
std::string_view Name(ResumeFramework f);  // "transformers", "lightning", "loop", "unknown"
// The companion's "source" as recorded; anything else (or "") is kUnknown.
ResumeFramework ResumeFrameworkFromSource(std::string_view source);

// A checkpoint the guard asked for and the job finished writing.
struct FinishedCheckpoint {
  int64_t run_id = 0;
  std::string run_started_at;
  std::string path;
  std::optional<int64_t> step;  // the step it holds (the save came at its end)
  std::optional<double> duration_s;
  std::string source;  // as recorded ("" when the records did not say)
};

// The run's checkpoint when its summary says one was asked for, finished, succeeded and has a
// path; nullopt otherwise (no summary, not JSON, no checkpoint, a failed or cut-short save).
std::optional<FinishedCheckpoint> FinishedCheckpointOf(const RunRow& run);

// The job's last guarded run: the newest guard run (of `newest_first`, as Journal::RecentRuns
// gives them) whose command line contains `match` (CmdlineMatchesJob), and its checkpoint when
// it finished one. nullopt when there is no such run or its last run left no checkpoint: an
// older run's checkpoint is older than what that run did since.
std::optional<FinishedCheckpoint> LastJobCheckpoint(const std::vector<RunRow>& newest_first,
                                                    std::string_view match);

struct ResumeAdvice {
  ResumeFramework framework = ResumeFramework::kUnknown;
  // Code as typed (never translated), the path quoted for the language: a Python string
  // literal, a shell word. Empty when the framework is not known.
  std::vector<std::string> commands;
  std::optional<int64_t> next_step;  // the checkpoint's step + 1
};
ResumeAdvice ResumeFor(const FinishedCheckpoint& checkpoint);

// `text` as a Python string literal ("..." with JSON's escapes, which Python reads the same;
// bytes that are not UTF-8 replaced).
std::string PythonStringLiteral(std::string_view text);

}  // namespace headroom
