// Implementation notes: the option letters are CPython's, as `python3 --help` lists them
// (docs/companion.md, "Without code changes"): -c, -m, -W and -X take a value, the others
// none; the first word that is not an option is the script, and everything after it is the
// script's.
#include "guard/python_flags.h"

#include <cctype>
#include <string_view>

namespace headroom {
namespace {

// python, python3, python3.12 (any folder in front).
bool IsPythonProgram(std::string_view path) {
  const size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (!name.starts_with("python")) return false;
  name.remove_prefix(6);
  for (const char c : name) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') return false;
  }
  return true;
}

bool IsEnvProgram(std::string_view path) { return path == "env" || path.ends_with("/env"); }

constexpr std::string_view kTakesValue = "cmWX";  // the rest of the word, else the next one
constexpr std::string_view kEndsOptions = "cm";   // what follows is the program's

}  // namespace

std::optional<std::string> PythonFlagSkippingHooks(const std::vector<std::string>& command) {
  size_t i = 0;
  if (i < command.size() && IsEnvProgram(command[i])) {
    ++i;
    while (i < command.size() && command[i].find('=') != std::string::npos &&
           !command[i].starts_with("-")) {
      ++i;
    }
  }
  if (i >= command.size() || !IsPythonProgram(command[i])) return std::nullopt;
  for (++i; i < command.size(); ++i) {
    const std::string_view word = command[i];
    if (word.size() < 2 || word[0] != '-' || word == "--") return std::nullopt;
    if (word[1] == '-') {
      if (word == "--check-hash-based-pycs") ++i;  // its value is the next word
      continue;
    }
    for (size_t k = 1; k < word.size(); ++k) {
      const char c = word[k];
      if (c == 'S' || c == 'E' || c == 'I') return std::string{'-', c};
      if (kTakesValue.find(c) != std::string_view::npos) {
        if (kEndsOptions.find(c) != std::string_view::npos) return std::nullopt;
        if (k + 1 == word.size()) ++i;  // -W ignore, -X dev: the value is the next word
        break;
      }
    }
  }
  return std::nullopt;
}

}  // namespace headroom
