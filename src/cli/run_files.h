// Shared by `explain` and `report` (cli/run_files.cc): their input files and flags.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cli/cli.h"
#include "explain/step_pattern.h"
#include "gpu/platform.h"
#include "samples/samples_csv.h"

namespace headroom {

// Input files are read whole up to this size.
inline constexpr size_t kMaxFileBytes = size_t{1} << 30;

// The whole file, or a UsageError naming the flag and the file.
std::string ReadWhole(const std::string& flag, const std::string& path);

// --samples: watch's samples CSV (up to kMaxFileBytes), or a UsageError naming the flag.
// With `keep`, only the rows it wants are stored (samples/samples_csv.h).
SampleSeries ReadSamplesFlag(const std::string& path, const SampleRowFilter& keep = nullptr);

// --step-regex compiled; nullopt for "" (the built-in formats); a UsageError when it does not
// compile.
std::optional<StepPattern> StepPatternFlag(const std::string& regex);

// The files a command reads from a `headroom watch` run: the flags' paths, which
// FilesFromRun fills where they are empty.
struct WatchRunFiles {
  std::string& log;
  std::string& samples;
  std::string& events;
};

// Which run, in which journal, for which command (`reader` names it in the messages);
// need_log: the command cannot go on without the run's log.
struct WatchRunQuery {
  int64_t id = 0;
  const std::string& journal_flag;
  bool need_log = false;
  std::string_view reader;
};

// The files of a `headroom watch` run, from its "files" event in the journal; a path given
// by flag (a non-empty argument) wins. Errors name --run: no such run, not a watch run, no
// files recorded, and (with need_log) a watch run without --log.
void FilesFromRun(const CliEnv& env, const WatchRunQuery& query, WatchRunFiles files);

// --platform: gb10, discrete, none; nullopt for "" (detect).
std::optional<PlatformKind> PlatformFlag(const std::string& text);

}  // namespace headroom
