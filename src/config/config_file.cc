// Implementation notes: the file is stat'ed before it is opened, so a directory or a FIFO
// planted at the path is refused by name; ReadFileCapped opens with O_NONBLOCK besides, so
// a FIFO swapped in between the two calls still cannot hang a command.
#include "config/config_file.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "base/message.h"
#include "config/config_toml.h"
#include "sys/sysroot.h"

namespace headroom {

ConfigLocation LocateConfigFile(const GetEnvFn& getenv) {
  auto var = [&](const char* name) -> std::string {
    const char* value = getenv(name);
    return value ? value : "";
  };
  if (auto named = var("HEADROOM_CONFIG"); !named.empty()) return {named, true, "HEADROOM_CONFIG"};
  if (auto xdg = var("XDG_CONFIG_HOME"); !xdg.empty() && xdg.front() == '/') {
    return {xdg + "/headroom/config.toml", false, "XDG_CONFIG_HOME"};
  }
  if (auto home = var("HOME"); !home.empty())
    return {home + "/.config/headroom/config.toml", false, "HOME"};
  return {};
}

Result<std::optional<ConfigFile>> ReadConfigFile(const std::string& path,
                                                 bool unsearchable_is_missing) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<ConfigFile>{};
    if (errno == EACCES && unsearchable_is_missing) return std::optional<ConfigFile>{};
    return ErrnoError(fmt::format("{}: stat", path));
  }
  if (S_ISDIR(st.st_mode)) return Error{Msg("{}: a directory, not a file", path)};
  if (!S_ISREG(st.st_mode))
    return Error{Msg("{}: not a regular file (a FIFO, socket or device)", path)};
  if (static_cast<uint64_t>(st.st_size) > kMaxConfigFileBytes) {
    return Error{Msg("{}: larger than {} bytes (a configuration file is a few hundred)", path,
                     kMaxConfigFileBytes)};
  }
  auto text = ReadFileCapped(path, kMaxConfigFileBytes);
  if (!text) return text.error();
  auto parsed = ParseConfigToml(*text, path);
  if (!parsed) return parsed.error();
  return std::optional<ConfigFile>(std::move(*parsed));
}

LoadedConfig LoadConfig(const GetEnvFn& getenv, const std::vector<FlagSetting>& flags) {
  LoadedConfig loaded;
  loaded.location = LocateConfigFile(getenv);
  std::optional<ConfigFile> file;
  std::vector<Message> file_errors;
  if (!loaded.location.path.empty()) {
    auto read = ReadConfigFile(loaded.location.path,
                               /*unsearchable_is_missing=*/!loaded.location.explicit_path);
    if (!read) {
      loaded.exists = true;  // something is there, or could not be looked at
      file_errors.push_back(InContext("config", read.error()).what);
    } else if (*read) {
      loaded.exists = true;
      file = std::move(**read);
    } else if (loaded.location.explicit_path) {
      file_errors.push_back(
          Msg("config: {}: no such file (named by HEADROOM_CONFIG)", loaded.location.path));
    }
  }
  ResolvedSettings resolved = ResolveSettings(file ? &*file : nullptr, getenv, flags);
  loaded.settings = std::move(resolved.settings);
  loaded.errors = std::move(file_errors);
  loaded.errors.insert(loaded.errors.end(), resolved.errors.begin(), resolved.errors.end());
  return loaded;
}

}  // namespace headroom
