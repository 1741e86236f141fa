// `headroom config`: the configuration as the commands see it (docs/config.md).
//   config [show] [--json] [--reserve SIZE ...]   every setting: value, origin and where
//   config path                                    the file looked at
//   config check [FILE]                            validate: exit 0 ok, 2 errors
//
// Implementation notes.
//  - main has loaded the configuration already (CliEnv::config); `show` loads it again
//    only to layer its own flags on top, through the same resolver, so what it prints is
//    what a command given those flags would use.
//  - These commands run even when the configuration is broken (main lets them through):
//    they print each error on stderr as "headroom: config: ..." and exit 2.
//  - --json (schema_version 1) is never translated: main turns messages off for it.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_view.h"
#include "cli/i18n.h"
#include "cli/levels_text.h"
#include "cli/message_text.h"
#include "config/config_file.h"
#include "config/config_json.h"
#include "config/config_toml.h"
#include "config/pool_levels_config.h"
#include "config/settings.h"
#include "sys/meminfo.h"

namespace headroom {
namespace {

int Show(const CliEnv& env, const std::vector<FlagSetting>& flags, bool json) {
  const LoadedConfig c = LoadConfig(std::getenv, flags);
  // The levels on this machine need its MemTotal; a Spark's is its profile's.
  std::optional<uint64_t> mem_total;
  if (auto info = ReadMemInfo(SysRoot(env.default_root)); info) mem_total = info->total_bytes();
  if (json) {
    auto j = ConfigShowJson(c);
    j["levels"] = LevelsJson(c.settings, mem_total);
    PrintJson(env, j);
  } else {
    PrintConfigTable(env, c);
    PrintLevelsTable(env, c.settings, mem_total);
  }
  for (const auto& e : c.errors) PrintError(env, e);
  return c.errors.empty() ? kExitOk : kExitUsage;
}

int Check(const CliEnv& env, const std::string& file) {
  if (file.empty()) {
    // What commands would see: the file named by the environment, and the variables.
    for (const auto& e : env.config.errors) PrintError(env, e);
    if (!env.config.errors.empty()) return kExitUsage;
    PrintConfigValid(env, env.config);
    return kExitOk;
  }
  auto read = ReadConfigFile(file);
  if (!read) {
    PrintError(env, "config: " + TranslatedText(read.error().what));
    return kExitUsage;
  }
  if (!*read) {
    PrintError(env, TrFormat("config: {}: no such file", file));
    return kExitUsage;
  }
  // The file alone: HEADROOM_* variables do not count here, HOME does (for "~").
  const ResolvedSettings resolved = ResolveSettings(&**read, FileOnlyEnv(std::getenv), {});
  for (const auto& e : resolved.errors) PrintError(env, e);
  if (!resolved.errors.empty()) return kExitUsage;
  PrintFileValid(env, file, **read);
  return kExitOk;
}

// config's flags: the app, then the variables its options write.
struct ConfigCommandFlags final : CommandFlags {
  CLI::App app{
      Tr("Show and check the configuration: the defaults set once in config.toml or HEADROOM_* "
         "variables (reserve, kill level, intervals, platform, journal).\n\n"
         "  headroom config [show] [--json] [SETTING FLAGS]   every setting, its value, origin "
         "and where\n"
         "  headroom config path                            the configuration file's path\n"
         "  headroom config check [FILE]                    validate the file (and the "
         "environment)\n\n"
         "The file is $HEADROOM_CONFIG, else $XDG_CONFIG_HOME/headroom/config.toml, else "
         "~/.config/headroom/config.toml; precedence: flag > environment > file > default "
         "(docs/config.md).\n\n"
         "exit status: 0 valid; 2 a broken file or variable (each error on stderr), or a usage "
         "error"),
      "headroom config"};
  bool json = false;
  std::vector<std::string> values = std::vector<std::string>(AllSettings().size());
  std::string check_file;
  CLI::App* show = nullptr;
  CLI::App* path = nullptr;
  CLI::App* check = nullptr;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineConfigFlags() {
  auto defined = std::make_unique<ConfigCommandFlags>();
  auto& [app, json, values, check_file, show, path, check] = *defined;
  app.require_subcommand(0, 1);
  show = app.add_subcommand(
      "show", Tr("every setting: its value, origin (default, file, environment, flag) and where"));
  AddJsonFlag(*show, json);
  for (size_t i = 0; i < AllSettings().size(); ++i) {
    const SettingInfo& info = AllSettings()[i];
    show->add_option(std::string(info.flag), values[i],
                     TrFormat("show {} as if a command were given this (the command's flag: {})",
                              SettingKey(info), Tr(info.used_by)));
  }
  path = app.add_subcommand(
      "path", Tr("print the path of the configuration file looked at (it may not exist)"));
  check = app.add_subcommand(
      "check", Tr("validate FILE, or the configuration commands would read (exit 0 valid, 2 not)"));
  check->add_option("file", check_file,
                    Tr("a config.toml to check on its own (default: the one commands read, with "
                       "the environment)"));
  return defined;
}

int RunConfigCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& [app, json, values, check_file, show, path, check] =
      FlagsOf<ConfigCommandFlags>(given_flags);
  if (path->parsed()) {
    if (env.config.location.path.empty()) {
      PrintError(env, Tr("config: no place for a configuration file: HOME, XDG_CONFIG_HOME and "
                         "HEADROOM_CONFIG are unset"));
      return kExitUsage;
    }
    std::fprintf(env.out, "%s\n", env.config.location.path.c_str());
    return kExitOk;
  }
  if (check->parsed()) return Check(env, check_file);
  std::vector<FlagSetting> flags;
  for (size_t i = 0; i < AllSettings().size(); ++i) {
    if (show->count(std::string(AllSettings()[i].flag)) > 0)
      flags.push_back({AllSettings()[i].id, values[i]});
  }
  return Show(env, flags, json);
}

}  // namespace headroom
