// The command line of the balloon (tests/tools/balloon.cc): its options and --help.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace balloon {

inline constexpr uint64_t kNsPerS = 1'000'000'000;

enum class Mode { kAnon, kThp, kMemfd };

struct Options {
  uint64_t cap_bytes = 0;
  uint64_t rate_bytes_per_s = 0;  // 0 = unthrottled
  Mode mode = Mode::kAnon;
  std::optional<uint64_t> hold_ns;  // unset = until the timeout
  uint64_t timeout_ns = 60 * kNsPerS;
  int children = 0;
  bool setsid = false, double_fork = false, no_pdeathsig = false, ignore_term = false;
  bool stop_on_term = false;  // on SIGTERM: stop growing, hold until SIGKILL or --timeout
  bool allow_large = false, help = false;
  std::optional<int> oom_score_adj;
  std::string progress_path, pidfile_path;
};

// The --help text, exit statuses included.
extern const char* const kUsage;

// Parses the command line. On a usage error prints one line, "balloon: FLAG: reason (see
// --help)", on stderr and returns nullopt (the caller exits 2). With --help, returns
// options whose `help` is set and whose other fields are unchecked.
std::optional<Options> ParseArgs(int argc, char** argv);

}  // namespace balloon
