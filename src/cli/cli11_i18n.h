// CLI11's own words in the user's language: the help screens' labels and group names
// ("Usage", "Options", "Positionals", "REQUIRED", "TEXT", ...), the help flag's text, and the
// fixed part of its parse errors. Every command gets them through ParseFlags (cli/cli.h).
//
// Where CLI11 builds a sentence around a value ("--seq: 1 required TEXT missing"), the value
// is taken back out of its English text by the error's type and a pattern, and put into a
// translated sentence; text matching no known pattern stays as CLI11 wrote it. In English
// (no catalog, or after UseEnglishMessages) every screen and message is byte for byte
// what CLI11 itself prints.
#pragma once

#include <string>

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace headroom {

// Gives `app` and its subcommands the translating help formatter and a translated help
// flag. Call after all options and subcommands are added (ParseFlags does).
void LocalizeHelp(CLI::App& app);

// `e.what()` in the user's language where its pattern is known (see above).
std::string ParseErrorText(const CLI::ParseError& e);

}  // namespace headroom
