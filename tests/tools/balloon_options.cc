// Implementation notes: parsing is hand-rolled over std::from_chars (no locale, no
// exceptions, no partial numbers such as "12abc"), because the balloon links nothing but libc
// and must not share code with the headroom library it helps to test. Limits are here, where
// the flags are: every cap, timeout and count has a ceiling so that a typo cannot make a
// balloon that freezes the machine or never ends.
#include "balloon_options.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <utility>

namespace balloon {
namespace {

constexpr uint64_t kGiB = 1ULL << 30;
constexpr uint64_t kMaxCapBytes = 8 * kGiB;         // above this, --allow-large
constexpr uint64_t kAbsurdCapBytes = 1024 * kGiB;   // refused even then
constexpr uint64_t kMaxTimeoutNs = 3600 * kNsPerS;  // a balloon is a test tool, not a job
constexpr int kMaxChildren = 64;

using Unit = std::pair<std::string_view, double>;
// Sizes follow headroom's own rule (src/base/bytes.h): a bare G is GiB, GB is 1e9.
constexpr Unit kSizeUnits[] = {{"", 1},         {"b", 1},        {"k", 0x1p10},   {"kib", 0x1p10},
                               {"kb", 1e3},     {"m", 0x1p20},   {"mib", 0x1p20}, {"mb", 1e6},
                               {"g", 0x1p30},   {"gib", 0x1p30}, {"gb", 1e9},     {"t", 0x1p40},
                               {"tib", 0x1p40}, {"tb", 1e12}};
constexpr Unit kDurationUnits[] = {{"", 1e9},   {"s", 1e9},    {"ms", 1e6},
                                   {"m", 60e9}, {"min", 60e9}, {"h", 3600e9}};

// Parses "1.5G" or "500ms" against a unit table (suffixes in lower case, matched without
// case). False for a negative, non-finite or unknown-unit value, or one at or past 2^62.
template <size_t N>
bool ParseScaled(std::string_view text, const Unit (&units)[N], uint64_t* out) {
  const char* end = text.data() + text.size();
  double number = 0;
  const auto [rest, ec] = std::from_chars(text.data(), end, number);
  if (ec != std::errc() || !std::isfinite(number) || number < 0) return false;
  std::string suffix;
  for (const char* c = rest; c < end; ++c) suffix.push_back(static_cast<char>(std::tolower(*c)));
  for (const auto& [name, scale] : units) {
    if (suffix == name && number * scale < 0x1p62) {
      *out = static_cast<uint64_t>(number * scale);
      return true;
    }
  }
  return false;
}

bool ParseInt(std::string_view text, int lo, int hi, int* out) {
  const auto [rest, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && rest == text.data() + text.size() && *out >= lo && *out <= hi;
}

// Prints one line about `flag` and returns nullopt, for ParseArgs.
std::optional<Options> UsageError(std::string_view flag, std::string_view why) {
  std::fprintf(stderr, "balloon: %.*s: %.*s (see --help)\n", static_cast<int>(flag.size()),
               flag.data(), static_cast<int>(why.size()), why.data());
  return std::nullopt;
}

}  // namespace

const char* const kUsage = R"(usage: balloon --cap SIZE [options]
Allocates and touches memory at a set rate up to a cap, then holds it. A test tool for
`headroom guard`; every process it creates ends by itself at --timeout.

  --cap SIZE            total to touch (required; e.g. 256M, 3G; above 8G needs --allow-large)
  --rate SIZE[/s]       pace, per second, for the whole tree (default 0 = unthrottled)
  --mode anon|thp|memfd anon: 4 KiB pages (MADV_NOHUGEPAGE); thp: 2 MiB-aligned with
                        MADV_HUGEPAGE; memfd: a memfd filled with fallocate, never mapped
                        (MemAvailable drops, RSS and AnonPages do not). Default anon
  --hold DURATION       hold this long after reaching the cap, then exit 0 (default: until
                        --timeout). Durations: 500ms, 2s, 1.5 (seconds), 1m
  --timeout DURATION    every process exits 0 by itself this long after the start (default
                        60s, at most 1h), reached cap or not
  --children N          fork N workers that touch cap/N each at rate/N; the parent touches
                        nothing, reaps them, and exits with the first nonzero child status
  --setsid              children call setsid() (escape the process group)
  --double-fork         each child double-forks; the grandchild is reparented
  --no-pdeathsig        plain children do not die with the parent (escapees never do)
  --ignore-term         ignore SIGTERM: only SIGKILL (or --timeout) ends it
  --stop-on-term        on SIGTERM stop touching memory and hold it: only SIGKILL (or
                        --timeout) ends it
  --oom-score-adj N     write N to /proc/self/oom_score_adj (a failure is noted, not fatal)
  --progress FILE       shared binary progress record (layout: balloon_progress.h)
  --pidfile FILE        every long-lived pid, one per line, appended as each starts
  --allow-large         allow --cap above 8G
  --help                this text
Prints "ready PID" on stdout once every worker's pid is in the pidfile.
Sizes: K, M, G, T and KiB... are binary; KB, MB, GB, TB decimal; a bare number is bytes.
Exit: 0 done (held, or timed out); 1 runtime failure (mmap, memfd, fork, files);
      2 bad usage; 143 SIGTERM caught (128 + 15); killed by SIGKILL shows as 137 in a shell.
)";

std::optional<Options> ParseArgs(int argc, char** argv) {
  Options o;
  bool have_cap = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i], value;
    bool inline_value = false;
    if (const size_t eq = flag.find('='); flag.starts_with("--") && eq != flag.npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      inline_value = true;
    }
    // Flags that take a value accept "--flag VALUE" and "--flag=VALUE".
    const auto take = [&] {
      if (inline_value || i + 1 >= argc) return inline_value;
      value = argv[++i];
      return true;
    };
    bool* const switch_flag = flag == "--setsid"         ? &o.setsid
                              : flag == "--double-fork"  ? &o.double_fork
                              : flag == "--no-pdeathsig" ? &o.no_pdeathsig
                              : flag == "--ignore-term"  ? &o.ignore_term
                              : flag == "--stop-on-term" ? &o.stop_on_term
                              : flag == "--allow-large"  ? &o.allow_large
                              : flag == "--help"         ? &o.help
                                                         : nullptr;
    if (switch_flag != nullptr) {
      if (inline_value) return UsageError(flag, "takes no value");
      *switch_flag = true;
      continue;
    }
    const bool known = flag == "--cap" || flag == "--rate" || flag == "--mode" ||
                       flag == "--hold" || flag == "--timeout" || flag == "--children" ||
                       flag == "--oom-score-adj" || flag == "--progress" || flag == "--pidfile";
    if (!known) return UsageError(flag, "unknown option");
    if (!take()) return UsageError(flag, "needs a value");
    const std::string shown = "'" + std::string(value) + "'";
    uint64_t hold_ns = 0;
    int adj = 0;
    if (flag == "--cap") {
      if (!ParseScaled(value, kSizeUnits, &o.cap_bytes) || o.cap_bytes == 0) {
        return UsageError(flag, shown + " is not a positive size (256M, 3G)");
      }
      have_cap = true;
    } else if (flag == "--rate") {
      if (value.ends_with("/s")) value.remove_suffix(2);
      if (!ParseScaled(value, kSizeUnits, &o.rate_bytes_per_s)) {
        return UsageError(flag, shown + " is not a rate (512M, 1G/s, 0)");
      }
    } else if (flag == "--mode") {
      if (value == "anon") {
        o.mode = Mode::kAnon;
      } else if (value == "thp") {
        o.mode = Mode::kThp;
      } else if (value == "memfd") {
        o.mode = Mode::kMemfd;
      } else {
        return UsageError(flag, shown + " is not anon, thp or memfd");
      }
    } else if (flag == "--hold") {
      if (!ParseScaled(value, kDurationUnits, &hold_ns)) {
        return UsageError(flag, shown + " is not a duration");
      }
      o.hold_ns = hold_ns;
    } else if (flag == "--timeout") {
      if (!ParseScaled(value, kDurationUnits, &o.timeout_ns) || o.timeout_ns == 0 ||
          o.timeout_ns > kMaxTimeoutNs) {
        return UsageError(flag, shown + " is not a duration above 0 and up to 1h");
      }
    } else if (flag == "--children") {
      if (!ParseInt(value, 0, kMaxChildren, &o.children)) {
        return UsageError(flag, shown + " is not a count from 0 to 64");
      }
    } else if (flag == "--oom-score-adj") {
      if (!ParseInt(value, -1000, 1000, &adj)) {
        return UsageError(flag, shown + " is not an integer from -1000 to 1000");
      }
      o.oom_score_adj = adj;
    } else {
      (flag == "--progress" ? o.progress_path : o.pidfile_path) = std::string(value);
    }
  }
  if (o.help) return o;
  if (!have_cap) return UsageError("--cap", "is required");
  if (o.cap_bytes > kAbsurdCapBytes) return UsageError("--cap", "above 1T is refused");
  if (o.cap_bytes > kMaxCapBytes && !o.allow_large) {
    return UsageError("--cap", "above 8G needs --allow-large");
  }
  if ((o.setsid || o.double_fork || o.no_pdeathsig) && o.children == 0) {
    return UsageError(o.setsid        ? "--setsid"
                      : o.double_fork ? "--double-fork"
                                      : "--no-pdeathsig",
                      "needs --children");
  }
  return o;
}

}  // namespace balloon
