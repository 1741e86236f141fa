#include "cli/config_view.h"

#include <cstdio>
#include <string>
#include <string_view>

#include "base/table.h"
#include "base/text.h"
#include "cli/cli.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "config/config_toml.h"

namespace headroom {
namespace {

// The origins as `show` prints them, translated (SettingOriginName's words; JSON keeps them).
[[maybe_unused]] constexpr const char* kOriginWords[] = {N_("default"), N_("file"),
                                                         N_("environment"), N_("flag")};

// The value a setting has, as `show` prints it: as written, or the default's description.
std::string ShownValue(const Settings& s, const SettingInfo& info) {
  if (info.id == SettingId::kJournal) {
    if (s.journal.value.empty()) return TrFormat("(none: {})", TranslatedText(s.journal_error));
    return s.journal.value;  // "~" expanded: the path commands open
  }
  if (s.OriginOf(info.id) != SettingOrigin::kDefault) return s.TextOf(info.id);
  return Tr(info.default_text);
}

}  // namespace

std::string PrintableText(std::string_view text) { return ControlsAsQuestionMarks(text); }

std::string ConfigFileLine(const LoadedConfig& c) {
  if (c.location.path.empty()) {
    return Tr("configuration file: none (HOME, XDG_CONFIG_HOME and HEADROOM_CONFIG are unset)");
  }
  return TrFormat("configuration file: {} ({}; named by {})", PrintableText(c.location.path),
                  c.exists ? Tr("found") : Tr("not found"), c.location.named_by);
}

void PrintConfigTable(const CliEnv& env, const LoadedConfig& c) {
  using A = TextTable::Align;
  TextTable table({A::kLeft, A::kLeft, A::kLeft, A::kLeft});
  table.AddRow({Tr("SETTING"), Tr("VALUE"), Tr("ORIGIN"), Tr("WHERE")});
  for (const SettingInfo& info : AllSettings()) {
    const std::string& where = c.settings.WhereOf(info.id);
    table.AddRow({SettingKey(info), PrintableText(ShownValue(c.settings, info)),
                  Tr(SettingOriginName(c.settings.OriginOf(info.id)).data()),
                  where.empty() ? "-" : PrintableText(where)});
  }
  std::fprintf(
      env.out, "%s\n\n%s\n%s\n", ConfigFileLine(c).c_str(), table.Render(0).c_str(),
      Tr("precedence: flag > environment (HEADROOM_*) > file > default; docs/config.md lists "
         "every key and variable"));
  if (!c.errors.empty()) {
    std::fprintf(
        env.out, "\n%s\n",
        TrFormat("{} error(s) on stderr: commands other than `headroom config` refuse to run until "
                 "they are fixed",
                 c.errors.size())
            .c_str());
  }
}

void PrintConfigValid(const CliEnv& env, const LoadedConfig& config) {
  std::fprintf(env.out, "%s\n%s\n", ConfigFileLine(config).c_str(),
               Tr("ok: the configuration file and the environment are valid"));
}

void PrintFileValid(const CliEnv& env, const std::string& file, const ConfigFile& read) {
  std::fprintf(env.out, "%s\n",
               TrFormat("{}: ok: {} settings (schema_version {})", PrintableText(file),
                        read.settings.size(), read.schema_version.value_or(kConfigSchemaVersion))
                   .c_str());
}

}  // namespace headroom
