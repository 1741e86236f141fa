// The body of fuzz/config_fuzz.cc, shared with tests/fuzz_corpus_test.cc (which replays
// fuzz/corpus/config/ in every build).
#pragma once

#include <algorithm>
#include <set>
#include <string>
#include <string_view>

#include "base/mem_level.h"
#include "config/config_toml.h"
#include "config/settings.h"

namespace headroom::fuzz {

// Invariants of the configuration file's parser and resolver: an error is one line that
// names the file ("PATH:" first) and holds none of the parser's plane-15 stand-ins; a parsed file
// holds each setting at most once, on a line the text has, with a text its setting accepts;
// resolving it gives no error but the sustained-above-rated check, and every setting it names comes
// out with origin "file". Whether `s` holds a code point of plane 15 (UTF-8 F3 B0..BF ..): the
// parser's stand-ins for BMP characters must never leak out of it.
inline bool HoldsPlane15(std::string_view s) {
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    const auto b = static_cast<unsigned char>(s[i + 1]);
    if (static_cast<unsigned char>(s[i]) == 0xF3 && b >= 0xB0 && b <= 0xBF) return true;
  }
  return false;
}

// A level (base/mem_level.h) from any text: a one-line error, or a size above zero or a
// percentage in (0, 100); below a MemTotal, never at or above it.
inline bool MemLevelHolds(std::string_view text) {
  auto level = ParseMemLevel(text);
  if (!level) {
    const std::string& m = EnglishText(level.error().what);
    return !m.empty() && m.find('\n') == std::string::npos;
  }
  if (level->is_percent ? !(level->percent > 0 && level->percent < 100) : level->bytes == 0)
    return false;
  for (const uint64_t total : {uint64_t{0}, uint64_t{1} << 20, uint64_t{128} << 30}) {
    auto below = MemLevelBelowTotal(*level, total, text);
    if (below && total > 0 && (*below >= total || *below == 0)) return false;
  }
  return true;
}

inline bool ConfigTomlHolds(std::string_view text) {
  // The raw text as a level too (config.toml's kill_level and warn_level are parsed below).
  if (!MemLevelHolds(text.substr(0, 256))) return false;
  constexpr std::string_view kPath = "fuzz.toml";
  auto parsed = ParseConfigToml(text, kPath);
  if (!parsed) {
    const std::string& m = EnglishText(parsed.error().what);
    return !m.empty() && m.find('\n') == std::string::npos &&
           m.starts_with(std::string(kPath) + ":") && (HoldsPlane15(text) || !HoldsPlane15(m));
  }
  const int lines = 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  std::set<SettingId> seen;
  for (const FileSetting& s : parsed->settings) {
    if (!seen.insert(s.id).second || s.line < 1 || s.line > lines || HoldsPlane15(s.text))
      return false;
    Settings scratch;
    if (!SetSettingFromText(scratch, s.id, s.text, SettingOrigin::kFile, "")) return false;
  }
  if (parsed->schema_version && *parsed->schema_version != kConfigSchemaVersion) return false;
  const auto env = [](const char* name) -> const char* {
    return std::string_view(name) == "HOME" ? "/home/f" : nullptr;
  };
  const ResolvedSettings r = ResolveSettings(&*parsed, env, {});
  for (const auto& e : r.errors) {
    if (EnglishText(e).find("sustained power") == std::string::npos) return false;
  }
  for (const FileSetting& s : parsed->settings) {
    if (r.settings.OriginOf(s.id) != SettingOrigin::kFile) return false;
  }
  return true;
}

}  // namespace headroom::fuzz
