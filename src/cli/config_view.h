// `config show` and `config check` on the terminal, in the user's language: the settings
// table with each value, origin and where, and the line naming the file looked at
// (config/config_json.h has --json).
#pragma once

#include <string>
#include <string_view>

#include "cli/cli.h"
#include "config/config_file.h"

namespace headroom {

// Control bytes from a file or a variable would garble the terminal: shown as '?'.
std::string PrintableText(std::string_view text);

// "configuration file: PATH (found; named by HEADROOM_CONFIG)", or that there is none.
std::string ConfigFileLine(const LoadedConfig& config);

// The table, the precedence line, and the count of errors when there are any.
void PrintConfigTable(const CliEnv& env, const LoadedConfig& config);

// `config check`: the file line, then "ok: the configuration file and the environment are
// valid".
void PrintConfigValid(const CliEnv& env, const LoadedConfig& config);

// `config check FILE`: "FILE: ok: 3 settings (schema_version 1)".
void PrintFileValid(const CliEnv& env, const std::string& file, const ConfigFile& read);

}  // namespace headroom
