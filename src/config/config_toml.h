// config.toml's format (docs/config.md): TOML, checked against the settings table
// (config/settings.h). A pure parser: text in, the file's settings out; reading the file
// is config/config_file.h's job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/result.h"
#include "config/settings.h"

namespace headroom {

// The format this binary reads and the example file states (docs/style.md rule 13). A file
// without schema_version is read as version 1; a newer one is refused, since its keys may
// mean what this binary cannot know.
inline constexpr int64_t kConfigSchemaVersion = 1;

// A configuration file is a few hundred bytes; 64 KiB bounds what a wrong path (a log, a
// disk image) can make the parser do.
inline constexpr size_t kMaxConfigFileBytes = 64 * 1024;

// Parses config.toml's text; `path` names the file in errors and in each setting's place.
// One error, the first in file order, as "PATH:LINE: what": a TOML syntax error, bytes
// that are not UTF-8 or a NUL, an unknown table or key ("did you mean" for near misses), a
// value of the wrong type or that does not parse as its setting, a schema_version newer
// than kConfigSchemaVersion, a text over kMaxConfigFileBytes. A UTF-8 byte order mark is
// skipped.
Result<ConfigFile> ParseConfigToml(std::string_view text, std::string_view path);

}  // namespace headroom
