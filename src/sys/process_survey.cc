// Implementation notes: every parser takes the whole file text and finds lines by key.
// Numbers are parsed with std::from_chars, so a value with trailing garbage or one that
// overflows is "absent", not a wrong number. Reads go through SysRoot so `--root` works.
#include "sys/process_survey.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "base/text.h"
#include "sys/processes.h"

namespace headroom {
namespace {

// The text of the line starting with `key` (e.g. "Pss:"), after the key; npos-safe.
std::optional<std::string_view> LineValue(std::string_view text, std::string_view key) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    if (line.substr(0, key.size()) == key) return line.substr(key.size());
    at = end + 1;
  }
  return std::nullopt;
}

template <typename T>
std::optional<T> WholeNumber(std::string_view s) {
  T value{};
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

}  // namespace

std::vector<std::string> ParseCmdline(std::string_view text) {
  std::vector<std::string> argv;
  if (text.empty()) return argv;
  // The kernel ends each argument with a NUL; drop the final one so it does not read as an
  // empty last argument. Empty arguments in the middle ("a\0\0b") are real and kept.
  if (text.back() == '\0') text.remove_suffix(1);
  size_t at = 0;
  for (;;) {
    const size_t nul = text.find('\0', at);
    argv.emplace_back(
        text.substr(at, nul == std::string_view::npos ? std::string_view::npos : nul - at));
    if (nul == std::string_view::npos) break;
    at = nul + 1;
  }
  return argv;
}

std::map<std::string, std::string> ParseEnviron(std::string_view text) {
  std::map<std::string, std::string> env;
  size_t at = 0;
  while (at < text.size()) {
    size_t nul = text.find('\0', at);
    if (nul == std::string_view::npos) nul = text.size();
    const std::string_view entry = text.substr(at, nul - at);
    const size_t eq = entry.find('=');
    if (eq != std::string_view::npos && eq > 0) {
      env.emplace(std::string(entry.substr(0, eq)),
                  std::string(entry.substr(eq + 1)));  // first wins
    }
    at = nul + 1;
  }
  return env;
}

std::optional<uint64_t> ParseSmapsRollupPssBytes(std::string_view text) {
  // "Pss:                1234 kB"; "Pss_Anon:" and friends do not match the key "Pss:".
  const auto value = LineValue(text, "Pss:");
  if (!value) return std::nullopt;
  std::string_view v = TrimBlanks(*value);
  if (v.size() < 3 || v.substr(v.size() - 3) != " kB") return std::nullopt;
  const auto kib = WholeNumber<uint64_t>(TrimBlanks(v.substr(0, v.size() - 3)));
  if (!kib || *kib > (UINT64_MAX >> 10)) return std::nullopt;
  return *kib * 1024;
}

bool MapsHasTorch(std::string_view maps_text) {
  // The path is the last column; a mapping of ".../torch/lib/libtorch_cuda.so" has
  // "/libtorch" in it. A file merely named "notlibtorch" elsewhere does not.
  size_t at = 0;
  while ((at = maps_text.find("/libtorch", at)) != std::string_view::npos) {
    const size_t name = at + 1;
    const size_t end = maps_text.find_first_of("\n", name);
    const std::string_view base =
        maps_text.substr(name, end == std::string_view::npos ? std::string_view::npos : end - name);
    if (base.find('/') == std::string_view::npos && base.find(".so") != std::string_view::npos)
      return true;
    at = name;
  }
  return false;
}

std::optional<uid_t> ParseStatusUid(std::string_view status_text) {
  const auto value = LineValue(status_text, "Uid:");
  if (!value) return std::nullopt;
  std::string_view v = TrimBlanks(*value);
  const size_t end = v.find_first_of(" \t");
  return WholeNumber<uid_t>(v.substr(0, end));
}

std::map<uid_t, std::string> ParsePasswdNames(std::string_view text) {
  std::map<uid_t, std::string> names;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    const size_t c1 = line.find(':');
    if (c1 == 0 || c1 == std::string_view::npos) continue;
    const size_t c2 = line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    const size_t c3 = line.find(':', c2 + 1);
    if (c3 == std::string_view::npos) continue;
    if (auto uid = WholeNumber<uid_t>(line.substr(c2 + 1, c3 - c2 - 1))) {
      names.emplace(*uid, std::string(line.substr(0, c1)));
    }
  }
  return names;
}

std::optional<std::string> ParseCgroupV2Path(std::string_view text) {
  const auto value = LineValue(text, "0::");
  if (!value) return std::nullopt;
  return std::string(TrimBlanks(*value));
}

std::optional<FilePrefix> ReadFilePrefix(const SysRoot& root, std::string_view relative,
                                         size_t max_bytes) {
  const std::string path = root.Path(relative).string();
  const int fd = OpenKernelFile(path);  // a regular file only, never waits
  if (fd < 0) return std::nullopt;
  FilePrefix out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;  // EACCES on environ of another user's process, ESRCH if gone
    }
    if (n == 0) break;
    out.text.append(buf, static_cast<size_t>(n));
    if (out.text.size() > max_bytes) {
      out.text.resize(max_bytes);
      out.truncated = true;
      break;
    }
  }
  ::close(fd);
  return out;
}

namespace {

// Caps on what one process may make the survey read. A command line is at most ARG_MAX
// (2 MiB by default, often less); the flags that matter come early, so 256 KiB keeps every
// real server's and stops a hostile one from costing more. maps of a CUDA process runs to
// a few MB (one line per mapping); 64 MiB is the cap FindLeftovers always used.
constexpr size_t kCmdlineMaxBytes = 256 * 1024;
constexpr size_t kEnvironMaxBytes = 1 << 20;
constexpr size_t kMapsMaxBytes = 64 << 20;

std::string ProcFile(pid_t pid, std::string_view name) {
  return "proc/" + std::to_string(pid) + "/" + std::string(name);
}

}  // namespace

std::optional<ProcessFacts> ReadProcessBasics(const SysRoot& root, pid_t pid) {
  const auto stat = ReadProcStat(root, pid);
  if (!stat) return std::nullopt;
  ProcessFacts facts;
  facts.pid = pid;
  facts.ppid = stat->ppid;
  facts.comm = stat->comm;
  if (auto cmd = ReadFilePrefix(root, ProcFile(pid, "cmdline"), kCmdlineMaxBytes)) {
    facts.argv = ParseCmdline(cmd->text);
    facts.argv_truncated = cmd->truncated;
  }
  return facts;
}

void ReadProcessDetails(const SysRoot& root, ProcessFacts& facts) {
  const pid_t pid = facts.pid;
  if (auto status = root.ReadFile(ProcFile(pid, "status"), 64 * 1024)) {
    facts.uid = ParseStatusUid(*status);
    facts.rss_bytes = ParseStatusRssBytes(*status);
  }
  if (auto rollup = root.ReadFile(ProcFile(pid, "smaps_rollup"), 64 * 1024)) {
    facts.pss_bytes = ParseSmapsRollupPssBytes(*rollup);
  }
  if (auto env = ReadFilePrefix(root, ProcFile(pid, "environ"), kEnvironMaxBytes)) {
    facts.environ = ParseEnviron(env->text);
  }
  if (auto cg = root.ReadFile(ProcFile(pid, "cgroup"), 64 * 1024)) {
    facts.cgroup = ParseCgroupV2Path(*cg);
  }
}

bool ReadMapsHasTorch(const SysRoot& root, pid_t pid) {
  auto maps = root.ReadFile(ProcFile(pid, "maps"), kMapsMaxBytes);
  return maps && MapsHasTorch(*maps);
}

}  // namespace headroom
