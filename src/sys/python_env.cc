#include "sys/python_env.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <system_error>

#include "base/message.h"
#include "base/text.h"
#include "sys/sysroot.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;

// METADATA headers come first; a file this large is not one.
constexpr size_t kMetadataMaxBytes = 1 << 20;
constexpr size_t kVersionPyMaxBytes = 64 * 1024;
// A site directory with more entries than this is not scanned past it (a hostile or broken
// tree must not make doctor walk forever).
constexpr size_t kMaxSiteDirEntries = 100'000;

bool IsDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// Entries of `dir` whose names start with `prefix`, sorted; none on any error.
std::vector<fs::path> ChildrenStartingWith(const fs::path& dir, std::string_view prefix) {
  std::vector<fs::path> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  size_t seen = 0;
  for (; !ec && it != fs::directory_iterator() && seen < kMaxSiteDirEntries;
       it.increment(ec), ++seen) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) == 0) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The prefix of an interpreter path: PREFIX/bin/python3 -> PREFIX.
fs::path PrefixOfInterpreter(const fs::path& interpreter) {
  const fs::path bin = interpreter.parent_path();
  return bin.has_parent_path() ? bin.parent_path() : bin;
}

PythonEnv EnvAt(const fs::path& prefix, std::string found_by, fs::path interpreter = {}) {
  PythonEnv env;
  env.prefix = prefix;
  env.found_by = std::move(found_by);
  env.interpreter = std::move(interpreter);
  env.site_dirs = SiteDirs(prefix);
  return env;
}

// A simple Python string literal: 'x' or "x" (no escapes are needed for these values).
std::optional<std::string> StringLiteral(std::string_view v) {
  v = TrimBlanks(v);
  if (v.size() < 2) return std::nullopt;
  const char q = v.front();
  if ((q != '\'' && q != '"') || v.back() != q) return std::nullopt;
  const std::string_view inner = v.substr(1, v.size() - 2);
  if (inner.find(q) != std::string_view::npos || inner.size() > 256) return std::nullopt;
  return std::string(inner);
}

}  // namespace

std::vector<fs::path> SiteDirs(const fs::path& prefix) {
  std::vector<fs::path> out;
  auto add_versions = [&](const fs::path& lib, std::string_view leaf) {
    for (const auto& py : ChildrenStartingWith(lib, "python3")) {
      // python3 itself is Debian's version-less dist-packages directory, added below.
      if (py.filename() == "python3") continue;
      if (IsDir(py / leaf)) out.push_back(py / leaf);
    }
  };
  add_versions(prefix / "lib", "site-packages");
  add_versions(prefix / "lib", "dist-packages");
  add_versions(prefix / "lib64", "site-packages");
  add_versions(prefix / "local" / "lib", "dist-packages");
  if (IsDir(prefix / "lib" / "python3" / "dist-packages"))
    out.push_back(prefix / "lib" / "python3" / "dist-packages");
  return out;
}

Result<PythonEnv> FindPythonEnv(const PythonEnvQuery& query) {
  if (!query.python_flag.empty()) {
    std::error_code abs_ec;
    fs::path p = fs::absolute(query.python_flag, abs_ec);
    if (abs_ec) p = query.python_flag;
    if (IsDir(p)) return EnvAt(p, "--python");
    std::error_code ec;
    if (fs::exists(p, ec)) return EnvAt(PrefixOfInterpreter(p), "--python", p);
    return Error{
        Msg("--python: {}: no such interpreter or environment directory", query.python_flag)};
  }
  if (query.virtual_env && !query.virtual_env->empty() && IsDir(*query.virtual_env)) {
    return EnvAt(*query.virtual_env, "$VIRTUAL_ENV");
  }
  if (query.conda_prefix && !query.conda_prefix->empty() && IsDir(*query.conda_prefix)) {
    return EnvAt(*query.conda_prefix, "$CONDA_PREFIX");
  }
  if (query.path) {
    std::string_view rest = *query.path;
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
      if (dir.empty()) continue;
      const fs::path candidate = fs::path(dir) / "python3";
      if (IsFile(candidate) && ::access(candidate.c_str(), X_OK) == 0) {
        // pyenv and asdf put scripts named python3 on PATH that pick an interpreter when run.
        if (candidate.parent_path().filename() == "shims") {
          return Error{
              Msg("python3 on PATH is a version-manager shim ({}): pass --python "
                  "\"$(pyenv which python3)\" or the environment's directory",
                  candidate.string())};
        }
        return EnvAt(PrefixOfInterpreter(candidate), "python3 on PATH", candidate);
      }
    }
  }
  return Error{
      Msg("no Python environment found (no --python, $VIRTUAL_ENV, $CONDA_PREFIX, or python3 on "
          "PATH)")};
}

std::string NormalizeDistName(std::string_view name) {
  std::string out;
  bool in_sep = false;
  for (char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (!in_sep) out.push_back('-');
      in_sep = true;
    } else {
      out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
      in_sep = false;
    }
  }
  return out;
}

std::optional<Distribution> ParseDistMetadata(std::string_view text) {
  Distribution d;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;  // end of the headers: the description follows
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string key = AsciiLower(line.substr(0, colon));
    const std::string_view value = TrimBlanks(line.substr(colon + 1));
    if (value.size() > 256) continue;
    if (key == "name" && d.name.empty()) d.name = std::string(value);
    if (key == "version" && d.version.empty()) d.version = std::string(value);
  }
  if (d.name.empty() || d.version.empty()) return std::nullopt;
  return d;
}

std::optional<Distribution> FindDistribution(const PythonEnv& env, std::string_view name) {
  const std::string wanted = NormalizeDistName(name);
  for (const auto& site : env.site_dirs) {
    std::error_code ec;
    fs::directory_iterator it(site, ec);
    size_t seen = 0;
    for (; !ec && it != fs::directory_iterator() && seen < kMaxSiteDirEntries;
         it.increment(ec), ++seen) {
      const std::string dir = it->path().filename().string();
      fs::path metadata;
      std::string_view stem;
      const auto ends_with = [&](std::string_view suffix) {
        return dir.size() > suffix.size() &&
               dir.compare(dir.size() - suffix.size(), suffix.size(), suffix) == 0;
      };
      if (ends_with(".dist-info")) {
        stem = std::string_view(dir).substr(0, dir.size() - 10);
        metadata = it->path() / "METADATA";
      } else if (ends_with(".egg-info")) {
        stem = std::string_view(dir).substr(0, dir.size() - 9);
        metadata = it->path() / "PKG-INFO";
      } else {
        continue;
      }
      // NAME-VERSION: the name is everything before the first '-' (wheel names escape '-'
      // in names as '_').
      const std::string_view dir_name = stem.substr(0, stem.find('-'));
      if (NormalizeDistName(dir_name) != wanted) continue;
      auto text = ReadFileCapped(metadata, kMetadataMaxBytes);
      if (!text) continue;
      auto d = ParseDistMetadata(*text);
      if (!d || NormalizeDistName(d->name) != wanted) continue;
      d->metadata = metadata;
      return d;
    }
  }
  return std::nullopt;
}

Result<TorchBuild> ParseTorchVersionPy(std::string_view text) {
  TorchBuild b;
  bool have_version = false;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view lhs = TrimBlanks(line.substr(0, eq));
    if (const size_t colon = lhs.find(':'); colon != std::string_view::npos)
      lhs = TrimBlanks(lhs.substr(0, colon));
    const std::string_view rhs = TrimBlanks(line.substr(eq + 1));
    if (lhs == "__version__") {
      if (auto v = StringLiteral(rhs)) {
        b.version = *v;
        have_version = true;
      }
    } else if (lhs == "cuda") {
      b.cuda = StringLiteral(rhs);
    } else if (lhs == "hip") {
      b.hip = StringLiteral(rhs);
    }
  }
  if (!have_version) return Error{"no __version__ = '...' line"};
  return b;
}

std::optional<Result<TorchBuild>> FindTorchBuild(const PythonEnv& env) {
  for (const auto& site : env.site_dirs) {
    const fs::path file = site / "torch" / "version.py";
    if (!IsFile(file)) continue;
    auto text = ReadFileCapped(file, kVersionPyMaxBytes);
    if (!text) return Result<TorchBuild>(text.error());
    auto b = ParseTorchVersionPy(*text);
    if (!b) return Result<TorchBuild>(InContext(file.string(), b.error()));
    b->file = file;
    return b;
  }
  return std::nullopt;
}

std::optional<std::pair<int, int>> ParseMajorMinor(std::string_view text) {
  int major = 0, minor = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, major);
  if (ec != std::errc() || p == end || *p != '.') return std::nullopt;
  auto [q, ec2] = std::from_chars(p + 1, end, minor);
  if (ec2 != std::errc() || q != end || major < 0 || minor < 0) return std::nullopt;
  return std::pair{major, minor};
}

}  // namespace headroom
