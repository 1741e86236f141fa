// Where config.toml lives and reading it: the thin I/O around ParseConfigToml
// (config/config_toml.h), and LoadConfig, the one call the CLI makes at start.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "config/settings.h"

namespace headroom {

struct ConfigLocation {
  std::string path;  // "" when nothing names a place (no HOME, XDG_CONFIG_HOME or HEADROOM_CONFIG)
  bool explicit_path = false;  // named by HEADROOM_CONFIG: a missing file is an error
  std::string named_by;        // "HEADROOM_CONFIG", "XDG_CONFIG_HOME", "HOME"; "" with no path
};

// $HEADROOM_CONFIG, else $XDG_CONFIG_HOME/headroom/config.toml (absolute values only, as the
// XDG base directory spec says), else $HOME/.config/headroom/config.toml.
ConfigLocation LocateConfigFile(const GetEnvFn& getenv);

// Reads and parses the file at `path`: nullopt when there is no such file. Errors (one line,
// naming the path, lines as "PATH:LINE"): a directory, FIFO or device where the file should
// be (never read, so never a hang), unreadable, over kMaxConfigFileBytes, or what
// ParseConfigToml refuses. `unsearchable_is_missing`: a directory on the way that may not
// be searched (EACCES from stat) counts as no file, as for the default location of a user
// whose HOME is not theirs (sudo -u nobody with HOME=/root); a file that is there but
// cannot be read is an error either way.
Result<std::optional<ConfigFile>> ReadConfigFile(const std::string& path,
                                                 bool unsearchable_is_missing = false);

struct LoadedConfig {
  ConfigLocation location;
  bool exists = false;
  Settings settings;
  // "config: ..." lines; commands refuse to run while there are any (`config` commands show them).
  std::vector<Message> errors;
};

// Locates, reads and parses the file, then layers it with the environment and `flags`
// (ResolveSettings). Never fails: what went wrong is in `errors`, and the settings hold
// what could be read (defaults in place of a broken file).
LoadedConfig LoadConfig(const GetEnvFn& getenv, const std::vector<FlagSetting>& flags = {});

}  // namespace headroom
