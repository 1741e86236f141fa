// Test helpers (tests only) for the tests that run a real PyTorch job (Debian's python3-torch
// under /usr/bin/python3) beside headroom: whether torch is there, and the JSON-lines files
// (the guard's events, the companion's step records) such a run leaves.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace headroom::testing {

// Debian's python3 with torch importable (the tests skip without it).
inline bool HaveTorch() {
  return ::access("/usr/bin/python3", X_OK) == 0 &&
         std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
}

// The non-empty lines of `path`, each parsed; a line that is not JSON (the torn last line of a
// file still being written) is a discarded value, never an exception.
inline std::vector<nlohmann::json> ReadJsonLines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line, nullptr, false));
  }
  return out;
}

// The number of lines ReadJsonLines could not parse.
inline size_t UnparsedLines(const std::vector<nlohmann::json>& lines) {
  size_t n = 0;
  for (const auto& l : lines) n += l.is_discarded();
  return n;
}

// Index of the first object whose "type" is `type`, or -1.
inline int FirstEvent(const std::vector<nlohmann::json>& events, const std::string& type) {
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].is_object() && events[i]["type"] == type) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace headroom::testing
