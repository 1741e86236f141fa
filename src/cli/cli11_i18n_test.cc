// cli/cli11_i18n without a catalog (English): the help screens are byte for byte CLI11's
// own and the parse errors keep CLI11's text (the display width it pads by is tested in
// base/display_width_test.cc).
// The translated screens are tested through the real binary (tests/cli/i18n_cli_test.cc).
#include "cli/cli11_i18n.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <limits>
#include <string>
#include <vector>

namespace headroom {
namespace {

// An app with every part of a help screen our commands use: description, positionals (one
// required), a required option, a vector, a flag, a validator, subcommands.
struct Sample {
  std::string text, model, job;
  std::vector<std::string> words;
  int64_t count = 0;
  bool flag = false;
  CLI::App app{"A description.\n\nexit status: 0", "headroom sample"};
  Sample() {
    app.add_option("model", model, "the model");
    app.add_option("--text", text, "some text")->required();
    app.add_option("--words", words, "repeatable");
    app.add_option("--count", count, "a bounded count")
        ->check(CLI::Range(int64_t{1}, int64_t{10000}));
    app.add_flag("--flag", flag, "a flag");
    app.add_option("--a-very-long-option-name-past-the-column", text, "wraps to the next line");
    auto* start = app.add_subcommand("start", "begin something");
    start->add_option("job", job, "the job's name")->required();
    app.add_subcommand("stop", "end it");
  }
};

TEST(Cli11I18n, EnglishHelpIsCli11sOwn) {
  Sample plain, localized;
  LocalizeHelp(localized.app);
  EXPECT_EQ(localized.app.help(), plain.app.help());
  EXPECT_EQ(localized.app.get_subcommand("start")->help(),
            plain.app.get_subcommand("start")->help());
  EXPECT_EQ(localized.app.help("", CLI::AppFormatMode::All),
            plain.app.help("", CLI::AppFormatMode::All));
}

// The error CLI11 throws for `args` (reversed, as ParseFlags hands them over).
std::string ParseError(std::vector<std::string> args, bool localized) {
  Sample s;
  if (localized) LocalizeHelp(s.app);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    s.app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return localized ? ParseErrorText(e) : e.what();
  }
  return "(parsed)";
}

TEST(Cli11I18n, EnglishParseErrorsAreCli11sText) {
  const std::vector<std::vector<std::string>> cases = {
      {"--text", "x", "--bogus"},             // one unexpected argument
      {"--text", "x", "m", "extra", "more"},  // several
      {"--text", "x", "--count", "0"},        // out of range
      {"--text", "x", "--count", "abc"},      // not a number
      {"--text", "x", "--flag=maybe"},        // not a flag value
      {"m"},                                  // a required option missing
      {"--text"},                             // its value missing
      {"--text", "x", "start"},               // a subcommand's required positional
  };
  for (const auto& args : cases) {
    const std::string english = ParseError(args, false);
    EXPECT_NE(english, "(parsed)") << args.back();
    EXPECT_EQ(ParseError(args, true), english);
  }
}

}  // namespace
}  // namespace headroom
