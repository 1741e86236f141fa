#include "sys/loader_libs.h"

#include <fnmatch.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <system_error>

#include "base/text.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxIncludeDepth = 8;
constexpr size_t kMaxConfFiles = 256;
constexpr size_t kMaxEntriesPerDir = 100'000;

// "/etc/ld.so.conf.d/*.conf" -> the matching files (paths on the target), sorted. Only the
// last component may hold wildcards, as in every distribution's ld.so.conf.
std::vector<std::string> Glob(const SysRoot& root, const std::string& pattern) {
  const fs::path p(pattern);
  const std::string leaf = p.filename().string();
  if (leaf.find_first_of("*?[") == std::string::npos) return {pattern};
  std::vector<std::string> out;
  std::error_code ec;
  const fs::path dir = p.parent_path();
  fs::directory_iterator it(root.Path(dir.relative_path().string()), ec);
  size_t seen = 0;
  for (; !ec && it != fs::directory_iterator() && seen < kMaxEntriesPerDir;
       it.increment(ec), ++seen) {
    const std::string name = it->path().filename().string();
    if (::fnmatch(leaf.c_str(), name.c_str(), 0) == 0) out.push_back((dir / name).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void ReadConf(const SysRoot& root, const std::string& file, int depth, size_t& files_read,
              std::vector<std::string>& dirs) {
  if (depth > kMaxIncludeDepth || files_read >= kMaxConfFiles) return;
  ++files_read;
  auto text = root.ReadFile(fs::path(file).relative_path().string(), 1 << 20);
  if (!text) return;
  std::string_view rest = *text;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (const size_t hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    line = TrimBlanks(line);
    if (line.empty()) continue;
    if (line.substr(0, 8) == "include " || line.substr(0, 8) == "include\t") {
      std::string pattern(TrimBlanks(line.substr(8)));
      if (pattern.empty()) continue;
      if (pattern.front() != '/') pattern = (fs::path(file).parent_path() / pattern).string();
      for (const auto& f : Glob(root, pattern)) ReadConf(root, f, depth + 1, files_read, dirs);
      continue;
    }
    if (line.substr(0, 6) == "hwcap ") continue;  // old syntax, not a directory
    if (line.front() != '/') continue;            // the loader ignores relative directories
    dirs.emplace_back(line);
  }
}

}  // namespace

std::vector<std::string> LoaderDirectories(const SysRoot& root) {
  std::vector<std::string> dirs;
  size_t files_read = 0;
  ReadConf(root, "/etc/ld.so.conf", 0, files_read, dirs);
  for (const char* d : {"/lib", "/usr/lib", "/lib64", "/usr/lib64"}) dirs.emplace_back(d);
  for (const auto& d : Glob(root, "/usr/lib/*-linux-gnu")) dirs.push_back(d);
  std::vector<std::string> unique;
  for (auto& d : dirs) {
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    if (std::find(unique.begin(), unique.end(), d) == unique.end()) unique.push_back(d);
  }
  return unique;
}

int LibraryMajor(std::string_view filename, std::string_view stem) {
  if (filename.size() <= stem.size() + 1 || filename.substr(0, stem.size()) != stem ||
      filename[stem.size()] != '.') {
    return -1;
  }
  const std::string_view rest = filename.substr(stem.size() + 1);
  int major = -1;
  const char* end = rest.data() + rest.size();
  auto [p, ec] = std::from_chars(rest.data(), end, major);
  if (ec != std::errc() || p == rest.data() || major < 0 || major > 1000) return -1;
  // What follows the major is ".minor..." or nothing.
  if (p != end && *p != '.') return -1;
  return major;
}

std::map<int, std::vector<SharedLibFile>> FindLibraryMajors(const SysRoot& root,
                                                            const std::vector<std::string>& dirs,
                                                            std::string_view stem) {
  std::map<int, std::vector<SharedLibFile>> out;
  for (const auto& dir : dirs) {
    std::error_code ec;
    fs::directory_iterator it(root.Path(fs::path(dir).relative_path().string()), ec);
    std::vector<std::string> names;
    size_t seen = 0;
    for (; !ec && it != fs::directory_iterator() && seen < kMaxEntriesPerDir;
         it.increment(ec), ++seen) {
      names.push_back(it->path().filename().string());
    }
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      const int major = LibraryMajor(name, stem);
      if (major >= 0) out[major].push_back({major, (fs::path(dir) / name).string()});
    }
  }
  return out;
}

}  // namespace headroom
