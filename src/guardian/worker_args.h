// The lean guardian's command line (docs/guardian.md "Its own memory"). `headroom guardian`
// reads its flags and configuration, then execs `headroom-guardian` (src/guardian_main.cc)
// with what it resolved, one "key=value" word each, so that the process that stays up for
// months maps and touches only the loop, not the flag parser, the configuration's parser and
// every other command. The worker parses the words back here: a word it does not know, a
// number out of range, a level missing or a warning level not above the kill level is an
// error, since anybody can run the worker by hand.
//
// SIGHUP: the worker runs `reload_program reload_args... --print-levels`, which prints the
// levels read again from the same flags and a fresh config.toml in the one-line form of
// EncodeReloadedLevels, or "error: TEXT" when they are refused.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "guardian/guardian_loop.h"

namespace headroom {

struct GuardianRunSettings {
  GuardianOptions options;                       // options.choice.self: set by the worker
  std::string events_path;                       // "": no events file
  std::optional<std::filesystem::path> journal;  // nullopt: --no-journal
  int64_t run_id = 0;  // the journal's run that `headroom guardian` began (0: none)
  std::optional<std::filesystem::path> registry;  // the running guards' registry
  std::optional<std::string> nvml_library;        // nullopt: --no-nvml; "": the default name
  std::string on_event;                           // "": no --on-event
  bool psi_kill = false;
  std::string locale_dir;  // the message catalogs ("": English)
  // SIGHUP: the program and its words (`guardian` and the user's flags); "": no reload.
  std::string reload_program;
  std::vector<std::string> reload_args;
};

std::vector<std::string> EncodeWorkerArgs(const GuardianRunSettings& s);
Result<GuardianRunSettings> DecodeWorkerArgs(std::span<const std::string> words);

// The levels that SIGHUP may change, as `--print-levels` prints them: "levels MIN WARN
// GRACE_MS" (bytes, bytes, milliseconds), or "error: TEXT".
struct ReloadedLevels {
  uint64_t min_available_bytes = 0;
  uint64_t warn_available_bytes = 0;
  std::chrono::milliseconds grace{0};
};
std::string EncodeReloadedLevels(const ReloadedLevels& levels);
Result<ReloadedLevels> DecodeReloadedLevels(std::string_view text);

}  // namespace headroom
