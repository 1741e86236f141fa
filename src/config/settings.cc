// Implementation notes.
//  - Every value goes through SetSettingFromText, whatever its origin: the file's values
//    reach it as text (the parser turns TOML numbers into their decimal text), so "8%" in
//    config.toml, HEADROOM_KILL_LEVEL=8% and `config show --kill-level 8%` cannot differ.
//  - Layering is "later wins": defaults (the constructor), then the file in file order,
//    then the environment, then flags. A value that does not parse is an error line and
//    leaves the layer below in place, so `config show` can still print everything else.
//  - The sizes, levels and durations reuse base/bytes.h, base/mem_level.h and
//    base/duration.h: a level here is read as the commands' level flags read it.
#include "config/settings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "base/bytes.h"
#include "base/duration.h"
#include "base/message.h"
#include "base/text.h"
#include "store/journal.h"  // ResolveJournalPath: the journal setting's default is the store's

namespace headroom {
namespace {

constexpr size_t kMaxValueBytes = 64;

constexpr SettingInfo kSettings[] = {
    {SettingId::kJournal, SettingKind::kPath, "", "journal", "HEADROOM_JOURNAL", "--journal",
     N_("$XDG_STATE_HOME/headroom/journal.db, else ~/.local/state/headroom/journal.db"),
     N_("every command's --journal: guard, watch, sweep, history, ladder, explain and report "
        "--run, "
        "export, plan's measured anchors")},
    {SettingId::kReserve, SettingKind::kSize, "plan", "reserve", "HEADROOM_RESERVE", "--reserve",
     "4GiB",
     N_("plan --reserve (and plan's flags in ladder, report --plan-args, doctor --workload)")},
    {SettingId::kKillLevel, SettingKind::kLevel, "guard", "kill_level", "HEADROOM_KILL_LEVEL",
     "--kill-level", N_("the larger of 4GiB and 8% of MemTotal"),
     N_("guard and sweep --min-available, watch --guard, ps --need (the reserve kept free)")},
    {SettingId::kWarnLevel, SettingKind::kLevel, "guard", "warn_level", "HEADROOM_WARN_LEVEL",
     "--warn-level", N_("twice the kill level"), N_("guard --warn-available, watch --guard")},
    {SettingId::kWatchInterval, SettingKind::kDuration, "watch", "interval",
     "HEADROOM_WATCH_INTERVAL", "--watch-interval", "30s", N_("watch --interval")},
    {SettingId::kTopInterval, SettingKind::kDuration, "top", "interval", "HEADROOM_TOP_INTERVAL",
     "--top-interval", "1s", N_("top --interval")},
    {SettingId::kExportInterval, SettingKind::kDuration, "export", "interval",
     "HEADROOM_EXPORT_INTERVAL", "--export-interval", "1s", N_("export --interval")},
    {SettingId::kPlatformKind, SettingKind::kPlatform, "platform", "kind", "HEADROOM_PLATFORM",
     "--platform", "auto",
     N_("the platform watch, explain, report, export and doctor assume (explain and report "
        "--platform)")},
    {SettingId::kSustainedPower, SettingKind::kWatts, "platform", "sustained_power_w",
     "HEADROOM_SUSTAINED_POWER_W", "--sustained-power-w",
     N_("from the platform (GB10: 100 W; discrete: its power limit)"),
     N_("the sustained power figure of watch, explain, report, export and doctor")},
    {SettingId::kRatedPower, SettingKind::kWatts, "platform", "rated_power_w",
     "HEADROOM_RATED_POWER_W", "--rated-power-w",
     N_("from the platform (GB10: 240 W; discrete: its power limit)"),
     N_("the rated power figure of watch, explain, report, export and doctor")},
    {SettingId::kGuardianMinAvailable, SettingKind::kLevel, "guardian", "kill_level",
     "HEADROOM_GUARDIAN_KILL_LEVEL", "--guardian-kill-level",
     N_("guard.kill_level, else the larger of 4GiB and 8% of MemTotal"),
     N_("guardian --min-available")},
    {SettingId::kGuardianWarnAvailable, SettingKind::kLevel, "guardian", "warn_level",
     "HEADROOM_GUARDIAN_WARN_LEVEL", "--guardian-warn-level", N_("twice guardian's kill level"),
     N_("guardian --warn-available")},
    {SettingId::kGuardianGrace, SettingKind::kDuration, "guardian", "grace",
     "HEADROOM_GUARDIAN_GRACE", "--guardian-grace", "3s", N_("guardian --grace")},
};

// Calls `f` with the member that holds setting `id`.
template <typename S, typename F>
decltype(auto) WithSetting(S& s, SettingId id, F&& f) {
  switch (id) {
    case SettingId::kJournal:
      return f(s.journal);
    case SettingId::kReserve:
      return f(s.reserve_bytes);
    case SettingId::kKillLevel:
      return f(s.kill_level);
    case SettingId::kWarnLevel:
      return f(s.warn_level);
    case SettingId::kWatchInterval:
      return f(s.watch_interval);
    case SettingId::kTopInterval:
      return f(s.top_interval);
    case SettingId::kExportInterval:
      return f(s.export_interval);
    case SettingId::kPlatformKind:
      return f(s.platform_kind);
    case SettingId::kSustainedPower:
      return f(s.sustained_power_mw);
    case SettingId::kRatedPower:
      return f(s.rated_power_mw);
    case SettingId::kGuardianMinAvailable:
      return f(s.guardian_min_available);
    case SettingId::kGuardianWarnAvailable:
      return f(s.guardian_warn_available);
    case SettingId::kGuardianGrace:
      return f(s.guardian_grace);
  }
  return f(s.journal);  // not reached: the switch names every id
}

template <typename T>
void Store(Setting<T>& s, T value, std::string_view text, SettingOrigin origin, std::string where) {
  s.value = std::move(value);
  s.text = std::string(text);
  s.origin = origin;
  s.where = std::move(where);
}

// At least 100ms; at most ParseDuration's week (watch), or an hour for a live view (top,
// export).
Result<std::chrono::milliseconds> ParseInterval(std::string_view text, bool live_view) {
  auto parsed = ParseDuration(text);
  if (!parsed) return parsed.error();
  // Compared before rounding to milliseconds, as the commands compare their flags.
  if (*parsed < kMinIntervalMs) return Error{Msg("'{}' is below the minimum of 100ms", text)};
  if (live_view && *parsed > kMaxLiveIntervalMs)
    return Error{Msg("'{}' is above the maximum of 1h", text)};
  return std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
}

Result<std::optional<PlatformKind>> ParsePlatformKind(std::string_view text) {
  if (text == "auto") return std::optional<PlatformKind>{};
  if (text == "gb10") return std::optional<PlatformKind>{PlatformKind::kGb10};
  if (text == "discrete") return std::optional<PlatformKind>{PlatformKind::kDiscrete};
  if (text == "integrated") return std::optional<PlatformKind>{PlatformKind::kIntegrated};
  if (text == "none") return std::optional<PlatformKind>{PlatformKind::kNoGpu};
  return Error{Msg("'{}' is not one of auto, gb10, discrete, integrated, none", text)};
}

// Watts as a decimal number ("100", "97.5"), to milliwatts.
Result<uint32_t> ParseWatts(std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  const double w = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || s.front() == ' ' || !std::isfinite(w)) {
    return Error{Msg("'{}' is not a number of watts (e.g. 100 or 97.5)", text)};
  }
  if (!(w > 0) || w > kMaxPowerW) return Error{Msg("{} W is outside (0, 10000]", text)};
  const double mw = std::round(w * 1000);
  if (mw < 1) return Error{Msg("{} W is below 1 mW", text)};
  return static_cast<uint32_t>(mw);
}

// "~" and "~/x" with HOME; other paths unchanged. Error when HOME is needed and unset.
Result<std::string> ExpandHome(const std::string& path, const GetEnvFn& getenv) {
  if (path != "~" && path.rfind("~/", 0) != 0) return path;
  const char* home = getenv("HOME");
  if (home == nullptr || *home == '\0') return Error{Msg("'~' needs HOME, which is unset")};
  return std::string(home) + path.substr(1);
}

}  // namespace

std::string_view SettingOriginName(SettingOrigin origin) {
  switch (origin) {
    case SettingOrigin::kFile:
      return "file";
    case SettingOrigin::kEnvironment:
      return "environment";
    case SettingOrigin::kFlag:
      return "flag";
    case SettingOrigin::kDefault:
      break;
  }
  return "default";
}

std::span<const SettingInfo> AllSettings() { return kSettings; }

const SettingInfo& InfoOf(SettingId id) {
  for (const auto& info : kSettings) {
    if (info.id == id) return info;
  }
  return kSettings[0];  // not reached: the table names every id (a test checks)
}

std::string SettingKey(const SettingInfo& info) {
  return info.table.empty() ? std::string(info.key) : fmt::format("{}.{}", info.table, info.key);
}

Settings::Settings() {
  reserve_bytes.value = kDefaultReserveBytes;
  watch_interval.value = std::chrono::seconds(30);
  top_interval.value = std::chrono::seconds(1);
  export_interval.value = std::chrono::seconds(1);
  guardian_grace.value = std::chrono::seconds(3);
}

PlatformOverride Settings::platform_override() const {
  return PlatformOverride{platform_kind.value, sustained_power_mw.value, rated_power_mw.value};
}

SettingOrigin Settings::OriginOf(SettingId id) const {
  return WithSetting(*this, id, [](const auto& s) { return s.origin; });
}

const std::string& Settings::WhereOf(SettingId id) const {
  return WithSetting(*this, id, [](const auto& s) -> const std::string& { return s.where; });
}

const std::string& Settings::TextOf(SettingId id) const {
  return WithSetting(*this, id, [](const auto& s) -> const std::string& { return s.text; });
}

Result<bool> SetSettingFromText(Settings& s, SettingId id, std::string_view text,
                                SettingOrigin origin, std::string where) {
  if (text.find('\0') != std::string_view::npos) return Error{Msg("holds a NUL byte")};
  // Sizes, levels, durations, kinds and watts are a few bytes; a longer value is no typo
  // worth quoting whole in an error line.
  if (id != SettingId::kJournal && text.size() > kMaxValueBytes) {
    return Error{Msg("a value of {} bytes, longer than any this setting takes", text.size())};
  }
  switch (id) {
    case SettingId::kJournal:
      if (text.empty()) return Error{Msg("an empty path")};
      Store(s.journal, std::string(text), text, origin, std::move(where));
      return true;
    case SettingId::kReserve: {
      auto bytes = ParseBytes(text, /*allow_zero=*/true);  // as plan --reserve: 0 is allowed
      if (!bytes) return bytes.error();
      Store(s.reserve_bytes, *bytes, text, origin, std::move(where));
      return true;
    }
    case SettingId::kKillLevel:
    case SettingId::kWarnLevel:
    case SettingId::kGuardianMinAvailable:
    case SettingId::kGuardianWarnAvailable: {
      auto level = ParseMemLevel(text);
      if (!level) return level.error();
      auto& target = id == SettingId::kKillLevel              ? s.kill_level
                     : id == SettingId::kWarnLevel            ? s.warn_level
                     : id == SettingId::kGuardianMinAvailable ? s.guardian_min_available
                                                              : s.guardian_warn_available;
      Store(target, std::optional<MemLevel>(*level), text, origin, std::move(where));
      return true;
    }
    case SettingId::kGuardianGrace: {
      // As guard's --grace: zero allowed (SIGKILL at once), at most an hour.
      auto grace = ParseDuration(text, /*allow_zero=*/true);
      if (!grace) return grace.error();
      if (*grace > kMaxLiveIntervalMs) return Error{Msg("'{}' is above the maximum of 1h", text)};
      Store(s.guardian_grace, std::chrono::duration_cast<std::chrono::milliseconds>(*grace), text,
            origin, std::move(where));
      return true;
    }
    case SettingId::kWatchInterval:
    case SettingId::kTopInterval:
    case SettingId::kExportInterval: {
      auto interval = ParseInterval(text, /*live_view=*/id != SettingId::kWatchInterval);
      if (!interval) return interval.error();
      auto& target = id == SettingId::kWatchInterval ? s.watch_interval
                     : id == SettingId::kTopInterval ? s.top_interval
                                                     : s.export_interval;
      Store(target, *interval, text, origin, std::move(where));
      return true;
    }
    case SettingId::kPlatformKind: {
      auto kind = ParsePlatformKind(text);
      if (!kind) return kind.error();
      Store(s.platform_kind, *kind, text, origin, std::move(where));
      return true;
    }
    case SettingId::kSustainedPower:
    case SettingId::kRatedPower: {
      auto mw = ParseWatts(text);
      if (!mw) return mw.error();
      Store(id == SettingId::kSustainedPower ? s.sustained_power_mw : s.rated_power_mw,
            std::optional<uint32_t>(*mw), text, origin, std::move(where));
      return true;
    }
  }
  return Error{"unknown setting"};  // not reached
}

GetEnvFn FileOnlyEnv(GetEnvFn getenv) {
  return [getenv = std::move(getenv)](const char* name) -> const char* {
    const std::string_view n(name);
    return n == "HOME" || n == "XDG_STATE_HOME" ? getenv(name) : nullptr;
  };
}

ResolvedSettings ResolveSettings(const ConfigFile* file, const GetEnvFn& getenv,
                                 const std::vector<FlagSetting>& flags) {
  ResolvedSettings r;
  Settings& s = r.settings;
  if (file) {
    for (const FileSetting& f : file->settings) {
      const std::string where = fmt::format("{}:{}", file->path, f.line);
      const SettingInfo& info = InfoOf(f.id);
      std::string text = f.text;
      if (f.id == SettingId::kJournal) {
        auto expanded = ExpandHome(text, getenv);
        if (!expanded) {
          r.errors.push_back(Message("config: {}: {}: {}", {where, std::string(SettingKey(info)),
                                                            std::make_shared<const Message>(
                                                                ErrorLine(expanded.error()))}));
          continue;
        }
        text = std::move(*expanded);
      }
      if (auto set = SetSettingFromText(s, f.id, text, SettingOrigin::kFile, where); !set) {
        r.errors.push_back(Message("config: {}: {}: {}",
                                   {where, std::string(SettingKey(info)),
                                    std::make_shared<const Message>(ErrorLine(set.error()))}));
      } else if (f.id == SettingId::kJournal) {
        s.journal.text = f.text;  // as written, "~" and all
      }
    }
  }
  for (const SettingInfo& info : kSettings) {
    const std::string name(info.env);
    const char* value = getenv(name.c_str());
    if (value == nullptr || *value == '\0') continue;
    if (auto set = SetSettingFromText(s, info.id, value, SettingOrigin::kEnvironment, name); !set) {
      r.errors.push_back(Message("config: {}: {}",
                                 {name, std::make_shared<const Message>(ErrorLine(set.error()))}));
    }
  }
  for (const FlagSetting& f : flags) {
    const SettingInfo& info = InfoOf(f.id);
    if (auto set =
            SetSettingFromText(s, f.id, f.text, SettingOrigin::kFlag, std::string(info.flag));
        !set) {
      r.errors.push_back(Message(
          "config: {}: {}",
          {std::string(info.flag), std::make_shared<const Message>(ErrorLine(set.error()))}));
    }
  }
  // Sustained above rated is a swapped pair or a typo, wherever each came from.
  if (s.sustained_power_mw.value && s.rated_power_mw.value &&
      *s.sustained_power_mw.value > *s.rated_power_mw.value) {
    auto place = [](const auto& setting) {
      return setting.where.empty() ? Msg("default") : Message::Literal(setting.where);
    };
    r.errors.push_back(Msg("config: sustained power {} W ({}) is above the rated {} W ({})",
                           s.sustained_power_mw.text, place(s.sustained_power_mw),
                           s.rated_power_mw.text, place(s.rated_power_mw)));
  }
  if (s.journal.origin == SettingOrigin::kDefault) {
    // The journal's own default, without HEADROOM_JOURNAL (already taken above when set).
    auto path = ResolveJournalPath("", [&](const char* name) -> const char* {
      return std::string_view(name) == "HEADROOM_JOURNAL" ? nullptr : getenv(name);
    });
    if (path)
      s.journal.value = path->string();
    else
      s.journal_error = path.error().what;
  }
  return r;
}

std::string OneLineText(std::string_view text, size_t max_bytes) {
  size_t cut = std::min(max_bytes, text.size());
  while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;
  std::string out;
  for (char c : text.substr(0, cut)) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else
      out += c;
  }
  if (cut < text.size()) out += "...";
  return out;
}

std::string NearestSettingName(std::string_view table, std::string_view key) {
  // Keys longer than any known one by more than two cannot be within two edits.
  if (key.size() > 24) return "";
  std::string best;
  size_t best_distance = 3;
  auto consider = [&](std::string_view candidate, std::string shown) {
    const size_t d = EditDistance(key, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = std::move(shown);
    }
  };
  for (const SettingInfo& info : kSettings) {
    if (info.table == table) consider(info.key, std::string(info.key));
  }
  if (!best.empty()) return best;
  // The key of another table ("reserve" at the top level), or a table's name.
  for (const SettingInfo& info : kSettings) {
    if (info.table != table && !info.table.empty() && info.key == key) {
      return fmt::format("[{}] {}", info.table, info.key);
    }
  }
  if (table.empty()) {
    for (const SettingInfo& info : kSettings) {
      if (!info.table.empty()) consider(info.table, fmt::format("[{}]", info.table));
    }
  }
  return best;
}

}  // namespace headroom

namespace headroom {

Message ErrorLine(const Error& e) {
  const std::string english = EnglishText(e.what);
  const bool plain = std::none_of(english.begin(), english.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if (english.size() <= 300 && plain) return e.what;
  return Message::Literal(OneLineText(english, 300));
}

}  // namespace headroom
