#include "cli/cli.h"

#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace headroom {

void PrintError(const CliEnv& env, std::string_view message) {
  std::string line(message);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(env.err, "headroom: %s\n", line.c_str());
}

std::optional<int> ParseFlags(CLI::App& app, const CliEnv& env, std::string_view command,
                              const std::vector<std::string>& args) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses it reversed
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), env.out);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    PrintError(env, fmt::format("{}: {}", command, e.what()));
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace headroom
