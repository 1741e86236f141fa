#include "sys/processes.h"

#include <dirent.h>
#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <map>
#include <set>
#include <vector>

namespace headroom {
namespace {

template <typename T>
bool ToNumber(std::string_view s, T* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

std::optional<ProcStat> ParseProcStat(std::string_view text) {
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  ProcStat s;
  std::string_view pid_text = text.substr(0, open);
  while (!pid_text.empty() && pid_text.back() == ' ') pid_text.remove_suffix(1);
  if (!ToNumber(pid_text, &s.pid)) return std::nullopt;
  s.comm = std::string(text.substr(open + 1, close - open - 1));
  // Fields after the comm, 1-based from field 3 (state).
  std::vector<std::string_view> fields;
  std::string_view rest = text.substr(close + 1);
  size_t i = 0;
  while (i < rest.size() && fields.size() < 24) {
    while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\n')) ++i;
    size_t j = i;
    while (j < rest.size() && rest[j] != ' ' && rest[j] != '\n') ++j;
    if (j > i) fields.push_back(rest.substr(i, j - i));
    i = j;
  }
  // fields[0] = state (3), [1] ppid (4), [2] pgrp (5), [3] session (6), [6] flags (9),
  // [19] starttime (22), [21] rss (24).
  if (fields.size() < 22 || fields[0].size() != 1) return std::nullopt;
  s.state = fields[0][0];
  if (!ToNumber(fields[1], &s.ppid) || !ToNumber(fields[2], &s.pgrp) ||
      !ToNumber(fields[3], &s.session) || !ToNumber(fields[19], &s.starttime_ticks)) {
    return std::nullopt;
  }
  if (!ToNumber(fields[6], &s.flags)) s.flags = 0;
  int64_t rss = 0;
  if (!ToNumber(fields[21], &rss)) return std::nullopt;
  s.rss_pages = rss > 0 ? static_cast<uint64_t>(rss) : 0;
  return s;
}

std::optional<ProcStat> ReadProcStat(const SysRoot& root, pid_t pid) {
  auto text = root.ReadFile(fmt::format("proc/{}/stat", pid), 64 * 1024);
  if (!text) return std::nullopt;
  return ParseProcStat(*text);
}

std::vector<pid_t> ListPids(const SysRoot& root) {
  std::vector<pid_t> out;
  DIR* dir = ::opendir(root.Path("proc").c_str());
  if (!dir) return out;
  while (const dirent* e = ::readdir(dir)) {
    pid_t pid = 0;
    if (ToNumber(std::string_view(e->d_name), &pid) && pid > 0) out.push_back(pid);
  }
  ::closedir(dir);
  return out;
}

std::vector<ProcStat> Descendants(const SysRoot& root, pid_t ancestor) {
  std::multimap<pid_t, ProcStat> by_parent;
  for (pid_t pid : ListPids(root)) {
    if (auto s = ReadProcStat(root, pid)) by_parent.emplace(s->ppid, std::move(*s));
  }
  std::vector<ProcStat> out;
  std::vector<pid_t> frontier{ancestor};
  std::set<pid_t> seen{ancestor};
  while (!frontier.empty()) {
    const pid_t parent = frontier.back();
    frontier.pop_back();
    auto [lo, hi] = by_parent.equal_range(parent);
    for (auto it = lo; it != hi; ++it) {
      if (!seen.insert(it->second.pid).second) continue;  // a cycle in hostile fixtures
      frontier.push_back(it->second.pid);
      out.push_back(it->second);
    }
  }
  return out;
}

std::optional<std::vector<ProcStat>> DescendantsByChildLinks(const SysRoot& root, pid_t ancestor) {
  std::vector<ProcStat> out;
  std::vector<pid_t> frontier{ancestor};
  std::set<pid_t> seen{ancestor};
  bool any_children_file = false;
  while (!frontier.empty()) {
    const pid_t pid = frontier.back();
    frontier.pop_back();
    DIR* tasks = ::opendir(root.Path(fmt::format("proc/{}/task", pid)).c_str());
    if (!tasks) continue;  // gone since its parent listed it
    while (const dirent* e = ::readdir(tasks)) {
      if (e->d_name[0] == '.') continue;
      auto text = root.ReadFile(fmt::format("proc/{}/task/{}/children", pid, e->d_name), 1 << 20);
      if (!text) continue;
      any_children_file = true;
      size_t i = 0;
      while (i < text->size()) {
        while (i < text->size() && (*text)[i] == ' ') ++i;
        size_t j = i;
        while (j < text->size() && (*text)[j] != ' ' && (*text)[j] != '\n') ++j;
        pid_t child = 0;
        if (j > i && ToNumber(std::string_view(*text).substr(i, j - i), &child) &&
            seen.insert(child).second) {
          if (auto st = ReadProcStat(root, child)) {
            out.push_back(std::move(*st));
            frontier.push_back(child);
          }
        }
        i = j + 1;
      }
    }
    ::closedir(tasks);
  }
  // No children file even for the ancestor itself: the kernel lacks CONFIG_PROC_CHILDREN.
  std::error_code ec;  // an unreadable root reads as no children file, never an exception
  if (!any_children_file &&
      !std::filesystem::exists(
          root.Path(fmt::format("proc/{}/task/{}/children", ancestor, ancestor)), ec)) {
    return std::nullopt;
  }
  return out;
}

std::optional<uint64_t> ParseStatusRssBytes(std::string_view text) {
  const size_t at = text.find("\nVmRSS:");
  if (at == std::string_view::npos) return std::nullopt;
  size_t i = at + 7;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  size_t j = i;
  while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
  uint64_t kb = 0;
  if (!ToNumber(text.substr(i, j - i), &kb) || kb > (UINT64_MAX >> 10)) return std::nullopt;
  return kb * 1024;
}

}  // namespace headroom
