// The settings a user sets once (docs/config.md): each value with its origin, and the pure
// resolver that layers them: flag > environment > file > default.
//
// One table (AllSettings) names every setting once: its key in config.toml, its
// environment variable, its flag in `headroom config show`, its default and who uses it.
// The parser (config/config_toml.h), the resolver, `config show`, docs/config.md and
// share/config/config.toml.example all follow it; tests check the last two against it.
// Values are parsed from text by one function per kind (SetSettingFromText), so a value
// means the same in the file, in the environment and on the command line.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/mem_level.h"  // MemLevel: the guard's levels' type
#include "base/result.h"
#include "gpu/platform.h"     // PlatformKind, PlatformOverride: the [platform] settings' types
#include "sys/pool_levels.h"  // kDefaultReserveBytes: plan.reserve's default, one of the levels

namespace headroom {

// Reads one environment variable (nullptr when unset); the CLI passes std::getenv, tests a
// table. Set but empty counts as unset, as for HEADROOM_JOURNAL.
using GetEnvFn = std::function<const char*(const char*)>;

enum class SettingOrigin { kDefault, kFile, kEnvironment, kFlag };
std::string_view SettingOriginName(
    SettingOrigin origin);  // "default", "file", "environment", "flag"

enum class SettingId {
  kJournal,
  kReserve,
  kKillLevel,
  kWarnLevel,
  kWatchInterval,
  kTopInterval,
  kExportInterval,
  kPlatformKind,
  kSustainedPower,
  kRatedPower,
  kGuardianMinAvailable,
  kGuardianWarnAvailable,
  kGuardianGrace,
};

// What a setting's value is, for the parser's type check and for `config show --json`.
enum class SettingKind { kPath, kSize, kLevel, kDuration, kPlatform, kWatts };

struct SettingInfo {
  SettingId id;
  SettingKind kind;
  std::string_view table;  // config.toml table; "" for the top level
  std::string_view key;
  std::string_view env;      // its environment variable
  std::string_view flag;     // its flag in `headroom config show`
  const char* default_text;  // English, marked N_: "4GiB", "the larger of 4GiB and 8%..."
  const char* used_by;       // English, marked N_: "plan --reserve"
};

// Every setting, in the order `config show` lists them.
std::span<const SettingInfo> AllSettings();
const SettingInfo& InfoOf(SettingId id);
// "plan.reserve"; "journal" for a top-level key.
std::string SettingKey(const SettingInfo& info);

// A memory level (MemLevel, ParseMemLevel, MemLevelBytes): base/mem_level.h.

template <typename T>
struct Setting {
  T value{};
  SettingOrigin origin = SettingOrigin::kDefault;
  std::string where;  // "PATH:12", "HEADROOM_RESERVE", "--reserve"; "" for a default
  std::string text;   // as written ("8%", "30s"); "" for a default
};

// Interval limits (the commands enforce the same): watch's 100 ms minimum (NVML's power is
// a 1 s average; faster rows repeat it) and ParseDuration's week; top and export refresh a
// live view, for which an hour between readings is already a typo.
inline constexpr std::chrono::milliseconds kMinIntervalMs{100};
inline constexpr std::chrono::milliseconds kMaxLiveIntervalMs{3'600'000};
// Power figures: above 0 and at most 10 kW (an 8-GPU board is about 6 kW; more is a typo).
inline constexpr double kMaxPowerW = 10'000;

struct Settings {
  // The journal every command records to or reads (--journal). Empty when nothing names a
  // place (no HOME, XDG_STATE_HOME or HEADROOM_JOURNAL): journal_error says so.
  Setting<std::string> journal;
  Message journal_error;
  Setting<uint64_t> reserve_bytes;              // plan --reserve
  Setting<std::optional<MemLevel>> kill_level;  // nullopt: the guard's default
  Setting<std::optional<MemLevel>> warn_level;  // nullopt: twice the kill level
  Setting<std::chrono::milliseconds> watch_interval;
  Setting<std::chrono::milliseconds> top_interval;
  Setting<std::chrono::milliseconds> export_interval;
  Setting<std::optional<PlatformKind>> platform_kind;   // nullopt: auto (detect)
  Setting<std::optional<uint32_t>> sustained_power_mw;  // nullopt: the platform's figure
  Setting<std::optional<uint32_t>> rated_power_mw;
  // `headroom guardian` (docs/guardian.md): nullopt levels fall back to [guard]'s.
  Setting<std::optional<MemLevel>> guardian_min_available;
  Setting<std::optional<MemLevel>> guardian_warn_available;
  Setting<std::chrono::milliseconds> guardian_grace;

  Settings();  // every value at its default (the journal's needs the environment: Resolve)
  PlatformOverride platform_override() const;
  // The origin, where and text of one setting, for `config show`.
  SettingOrigin OriginOf(SettingId id) const;
  const std::string& WhereOf(SettingId id) const;
  const std::string& TextOf(SettingId id) const;
};

// Parses `text` as setting `id` and stores it with its origin. Errors name neither the
// file nor the variable (the caller prefixes them): "'4x' has an unknown unit 'x' ...".
// A journal path is taken as given (the resolver expands "~" for the file's).
Result<bool> SetSettingFromText(Settings& settings, SettingId id, std::string_view text,
                                SettingOrigin origin, std::string where);

// One value of config.toml, already checked by the parser: its text (a TOML number as
// written by fmt, e.g. "100" or "97.5") and the line it is on.
struct FileSetting {
  SettingId id;
  std::string text;
  int line = 0;
};

struct ConfigFile {
  std::string path;  // as named in errors and `where`
  std::optional<int64_t> schema_version;
  std::vector<FileSetting> settings;  // file order
};

// A setting given on the command line (`config show --reserve 8GiB`).
struct FlagSetting {
  SettingId id;
  std::string text;
};

struct ResolvedSettings {
  Settings settings;
  // One line each, "config: HEADROOM_RESERVE: ...", "config: PATH:7: ..."; the setting
  // keeps its lower-precedence value. Commands refuse to run while there are any.
  std::vector<Message> errors;
};

// Layers default < file < environment < flags. `file` may be null (no file). `getenv`
// also supplies HOME (for "~" in the file's journal) and XDG_STATE_HOME (the journal's
// default, store/journal.h ResolveJournalPath).
ResolvedSettings ResolveSettings(const ConfigFile* file, const GetEnvFn& getenv,
                                 const std::vector<FlagSetting>& flags);

// The environment a file is checked in on its own (`config check FILE`): HOME and
// XDG_STATE_HOME from `getenv`, which the file's paths need; no HEADROOM_* variable counts.
GetEnvFn FileOnlyEnv(GetEnvFn getenv);

// `text` fit for a one-line error: control bytes as \xNN (a value may hold a newline),
// cut after `max_bytes` on a character boundary, "..." after a cut.
std::string OneLineText(std::string_view text, size_t max_bytes = 40);
// An error as one line of at most 300 bytes: its message value when its English text is one
// already (rendered later in the reader's language), else its text as OneLineText cuts it.
Message ErrorLine(const Error& e);

// The known key of table `table` (or of another table, or a table name) closest to a
// mistyped one, within two edits: "reserve", "[plan] reserve", "[watch]"; "" when none.
std::string NearestSettingName(std::string_view table, std::string_view key);

}  // namespace headroom
