// Implementation notes: one "key=value" word per setting, split at the first '=' (a value
// may hold any byte but NUL, which argv cannot carry). Single-valued keys may appear once;
// only, protect, prefer and reload-arg repeat, in order. Numbers are decimal without sign,
// space or suffix (std::from_chars over the whole value).
#include "guardian/worker_args.h"

#include <charconv>
#include <map>
#include <set>

namespace headroom {
namespace {

// A level past 1 PiB or a grace past a year is no setting headroom writes: refused.
constexpr uint64_t kMaxLevelBytes = uint64_t{1} << 50;
constexpr uint64_t kMaxGraceMs = uint64_t{365} * 24 * 3600 * 1000;

const std::set<std::string_view> kRepeated = {"only", "protect", "prefer", "reload-arg"};
const std::set<std::string_view> kSingle = {
    "min-available", "warn-available", "grace-ms",       "dry-run", "release-driver-pools",
    "events",        "journal",        "registry",       "nvml",    "on-event",
    "psi-kill",      "locale-dir",     "reload-program", "run-id"};

std::optional<uint64_t> Number(std::string_view text, uint64_t max) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v > max) return std::nullopt;
  return v;
}

Result<bool> Switch(const std::map<std::string, std::string, std::less<>>& one,
                    std::string_view key) {
  const auto it = one.find(key);
  if (it == one.end()) return false;
  if (it->second != "1") return Error{Msg("{}={}: not 1", std::string(key), it->second)};
  return true;
}

}  // namespace

std::vector<std::string> EncodeWorkerArgs(const GuardianRunSettings& s) {
  const GuardianOptions& o = s.options;
  std::vector<std::string> w = {
      "min-available=" + std::to_string(o.min_available_bytes),
      "warn-available=" + std::to_string(o.warn_available_bytes),
      "grace-ms=" + std::to_string(o.grace.count()),
  };
  if (o.dry_run) w.emplace_back("dry-run=1");
  if (o.release_driver_pools) w.emplace_back("release-driver-pools=1");
  for (const Scope& scope : o.choice.only) w.push_back("only=" + scope.text);
  for (const auto& p : o.choice.protect) w.push_back("protect=" + p);
  for (const auto& p : o.choice.prefer) w.push_back("prefer=" + p);
  if (!s.events_path.empty()) w.push_back("events=" + s.events_path);
  if (s.journal) w.push_back("journal=" + s.journal->string());
  if (s.run_id != 0) w.push_back("run-id=" + std::to_string(s.run_id));
  if (s.registry) w.push_back("registry=" + s.registry->string());
  if (s.nvml_library) w.push_back("nvml=" + *s.nvml_library);
  if (!s.on_event.empty()) w.push_back("on-event=" + s.on_event);
  if (s.psi_kill) w.emplace_back("psi-kill=1");
  if (!s.locale_dir.empty()) w.push_back("locale-dir=" + s.locale_dir);
  if (!s.reload_program.empty()) w.push_back("reload-program=" + s.reload_program);
  for (const auto& a : s.reload_args) w.push_back("reload-arg=" + a);
  return w;
}

Result<GuardianRunSettings> DecodeWorkerArgs(std::span<const std::string> words) {
  std::map<std::string, std::string, std::less<>> one;
  GuardianRunSettings s;
  GuardianOptions& o = s.options;
  for (const std::string& word : words) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos) return Error{Msg("'{}': not key=value", word)};
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    if (kRepeated.contains(key)) {
      if (value.empty()) return Error{Msg("{}: empty", key)};
      if (key == "only") {
        auto scope = ParseScope(value);
        if (!scope) return InContext("only", scope.error());
        o.choice.only.push_back(*scope);
      } else if (key == "protect") {
        o.choice.protect.push_back(value);
      } else if (key == "prefer") {
        o.choice.prefer.push_back(value);
      } else {
        s.reload_args.push_back(value);
      }
    } else if (!kSingle.contains(key)) {
      return Error{Msg("'{}': unknown setting", key)};
    } else if (!one.emplace(key, value).second) {
      return Error{Msg("{}: given twice", key)};
    }
  }
  for (const char* key : {"min-available", "warn-available", "grace-ms"}) {
    if (!one.contains(std::string_view(key))) return Error{Msg("{}: missing", std::string(key))};
  }
  const auto min = Number(one["min-available"], kMaxLevelBytes);
  const auto warn = Number(one["warn-available"], kMaxLevelBytes);
  const auto grace = Number(one["grace-ms"], kMaxGraceMs);
  if (!min || *min == 0) return Error{Msg("min-available={}: not a level", one["min-available"])};
  if (!warn || (*warn != 0 && *warn <= *min))
    return Error{Msg("warn-available={}: not a level above the kill level", one["warn-available"])};
  if (!grace) return Error{Msg("grace-ms={}: not a duration", one["grace-ms"])};
  o.min_available_bytes = *min;
  o.warn_available_bytes = *warn;
  o.grace = std::chrono::milliseconds(*grace);
  for (auto [key, flag] : {std::pair{"dry-run", &o.dry_run},
                           std::pair{"release-driver-pools", &o.release_driver_pools},
                           std::pair{"psi-kill", &s.psi_kill}}) {
    auto on = Switch(one, key);
    if (!on) return on.error();
    *flag = *on;
  }
  if (auto it = one.find("run-id"); it != one.end()) {
    const auto id = Number(it->second, uint64_t{1} << 62);
    if (!id || *id == 0) return Error{Msg("run-id={}: not a run", it->second)};
    s.run_id = static_cast<int64_t>(*id);
  }
  if (auto it = one.find("events"); it != one.end()) s.events_path = it->second;
  if (auto it = one.find("journal"); it != one.end()) s.journal = it->second;
  if (auto it = one.find("registry"); it != one.end()) s.registry = it->second;
  if (auto it = one.find("nvml"); it != one.end()) s.nvml_library = it->second;
  if (auto it = one.find("on-event"); it != one.end()) s.on_event = it->second;
  if (auto it = one.find("locale-dir"); it != one.end()) s.locale_dir = it->second;
  if (auto it = one.find("reload-program"); it != one.end()) s.reload_program = it->second;
  for (const char* key : {"events", "journal", "registry", "on-event", "reload-program"}) {
    if (auto it = one.find(std::string_view(key)); it != one.end() && it->second.empty())
      return Error{Msg("{}: empty", std::string(key))};
  }
  if (s.reload_program.empty() && !s.reload_args.empty())
    return Error{Msg("reload-arg without reload-program")};
  return s;
}

std::string EncodeReloadedLevels(const ReloadedLevels& l) {
  return "levels " + std::to_string(l.min_available_bytes) + " " +
         std::to_string(l.warn_available_bytes) + " " + std::to_string(l.grace.count()) + "\n";
}

Result<ReloadedLevels> DecodeReloadedLevels(std::string_view text) {
  if (text.ends_with('\n')) text.remove_suffix(1);
  if (text.starts_with("error: ") && text.find('\n') == std::string_view::npos)
    return Error{std::string(text.substr(7))};
  std::vector<std::string_view> f;
  while (!text.empty() && f.size() < 5) {
    const size_t sp = text.find(' ');
    f.push_back(text.substr(0, sp));
    text = sp == std::string_view::npos ? std::string_view() : text.substr(sp + 1);
  }
  if (f.size() != 4 || f[0] != "levels") return Error{Msg("not the levels line")};
  const auto min = Number(f[1], kMaxLevelBytes), warn = Number(f[2], kMaxLevelBytes),
             grace = Number(f[3], kMaxGraceMs);
  if (!min || *min == 0 || !warn || (*warn != 0 && *warn <= *min) || !grace)
    return Error{Msg("not the levels line")};
  return ReloadedLevels{*min, *warn, std::chrono::milliseconds(*grace)};
}

}  // namespace headroom
