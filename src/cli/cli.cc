#include "cli/cli.h"

#include <string>

namespace headroom {

void PrintError(const CliEnv& env, std::string_view message) {
  std::string line(message);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(env.err, "headroom: %s\n", line.c_str());
}

}  // namespace headroom
