// Implementation notes: the JSON goes through nlohmann::json (the message escaped, invalid
// UTF-8 replaced). The file is opened O_CREAT | O_EXCL | O_NOFOLLOW: an existing file (the
// worker's own, or a link someone planted) is left alone.
#include "guard/torchelastic.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <string>

#include "base/message.h"
#include "base/safe_file.h"

namespace headroom {

namespace {
constexpr std::string_view kVariable = "TORCHELASTIC_ERROR_FILE=";
}  // namespace

std::optional<std::string> TorchelasticErrorFileIn(std::string_view environ) {
  while (!environ.empty()) {
    const size_t end = environ.find('\0');
    const std::string_view entry = environ.substr(0, end);
    if (entry.substr(0, kVariable.size()) == kVariable && entry.size() > kVariable.size()) {
      return std::string(entry.substr(kVariable.size()));
    }
    if (end == std::string_view::npos) break;
    environ.remove_prefix(end + 1);
  }
  return std::nullopt;
}

std::optional<std::string> TorchelasticErrorFileOf(const SysRoot& root, pid_t pid) {
  auto text = root.ReadFile("proc/" + std::to_string(pid) + "/environ", 1 << 20);
  if (!text) return std::nullopt;
  return TorchelasticErrorFileIn(*text);
}

std::string TorchelasticErrorJson(std::string_view message, uint64_t unix_s) {
  const nlohmann::ordered_json j = {
      {"message",
       {{"message", std::string(message)},
        {"extraInfo",
         {{"py_callstack", std::string(message)}, {"timestamp", std::to_string(unix_s)}}}}}};
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Result<bool> WriteTorchelasticErrorFile(const std::string& path, std::string_view json) {
  FileFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (fd.get() < 0) {
    if (errno == EEXIST) return false;
    return ErrnoError(Msg("torchelastic error file {}", path));
  }
  if (::write(fd.get(), json.data(), json.size()) != static_cast<ssize_t>(json.size())) {
    return ErrnoError(Msg("torchelastic error file {}: write", path));
  }
  return true;
}

}  // namespace headroom
