// The parser of config.toml against literal files, hostile ones included.
#include "config/config_toml.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "base/bytes.h"
#include "testing_files.h"

namespace headroom {
namespace {

constexpr const char* kPath = "/home/u/.config/headroom/config.toml";

ConfigFile Parsed(std::string_view text) {
  auto r = ParseConfigToml(text, kPath);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : EnglishText(r.error().what));
  return r.ok() ? *r : ConfigFile{};
}

// The one-line error for `text`; "" when it parsed.
std::string ErrorOf(std::string_view text) {
  auto r = ParseConfigToml(text, kPath);
  return r.ok() ? "" : EnglishText(r.error().what);
}

const FileSetting* Find(const ConfigFile& f, SettingId id) {
  for (const auto& s : f.settings) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

TEST(ConfigToml, EmptyFileHasNoSettings) {
  const ConfigFile f = Parsed("");
  EXPECT_TRUE(f.settings.empty());
  EXPECT_FALSE(f.schema_version);
  EXPECT_EQ(f.path, kPath);
}

TEST(ConfigToml, EveryKeyWithItsLine) {
  const ConfigFile f = Parsed(
      "schema_version = 1\n"
      "journal = \"~/state/journal.db\"\n"
      "[plan]\n"
      "reserve = \"6GiB\"\n"
      "[guard]\n"
      "kill_level = \"8%\"\n"
      "warn_level = \"16GiB\"\n"
      "[watch]\n"
      "interval = \"10s\"\n"
      "[top]\n"
      "interval = \"2s\"\n"
      "[export]\n"
      "interval = \"500ms\"\n"
      "[platform]\n"
      "kind = \"discrete\"\n"
      "sustained_power_w = 550\n"
      "rated_power_w = 700.5\n");
  EXPECT_EQ(f.schema_version, 1);
  ASSERT_EQ(f.settings.size(), 10u);
  const struct {
    SettingId id;
    const char* text;
    int line;
  } want[] = {{SettingId::kJournal, "~/state/journal.db", 2},
              {SettingId::kReserve, "6GiB", 4},
              {SettingId::kKillLevel, "8%", 6},
              {SettingId::kWarnLevel, "16GiB", 7},
              {SettingId::kWatchInterval, "10s", 9},
              {SettingId::kTopInterval, "2s", 11},
              {SettingId::kExportInterval, "500ms", 13},
              {SettingId::kPlatformKind, "discrete", 15},
              {SettingId::kSustainedPower, "550", 16},
              {SettingId::kRatedPower, "700.5", 17}};
  for (const auto& w : want) {
    const FileSetting* s = Find(f, w.id);
    ASSERT_NE(s, nullptr) << SettingKey(InfoOf(w.id));
    EXPECT_EQ(s->text, w.text);
    EXPECT_EQ(s->line, w.line);
  }
  // File order, whatever toml++'s table order.
  for (size_t i = 1; i < f.settings.size(); ++i)
    EXPECT_LT(f.settings[i - 1].line, f.settings[i].line);
}

TEST(ConfigToml, InlineAndDottedTablesAreTheSameTables) {
  const ConfigFile f = Parsed("plan = { reserve = \"1GiB\" }\nwatch.interval = \"1m\"\n");
  ASSERT_NE(Find(f, SettingId::kReserve), nullptr);
  EXPECT_EQ(Find(f, SettingId::kReserve)->text, "1GiB");
  ASSERT_NE(Find(f, SettingId::kWatchInterval), nullptr);
  EXPECT_EQ(Find(f, SettingId::kWatchInterval)->line, 2);
}

TEST(ConfigToml, SyntaxErrorNamesFileAndLine) {
  const std::string e = ErrorOf("[plan]\nreserve = \"4GiB\n");
  EXPECT_EQ(e.rfind(std::string(kPath) + ":2: ", 0), 0u) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos);
  EXPECT_EQ(ErrorOf("[plan\n").rfind(std::string(kPath) + ":1: ", 0), 0u);
  EXPECT_NE(ErrorOf("= 3\n"), "");
}

TEST(ConfigToml, UnknownKeysAndTablesSayDidYouMean) {
  EXPECT_EQ(ErrorOf("[plan]\nresrve = \"4GiB\"\n"),
            std::string(kPath) + ":2: unknown key 'resrve' in [plan] (did you mean reserve?)");
  EXPECT_EQ(ErrorOf("\n[wath]\ninterval = \"1s\"\n"),
            std::string(kPath) + ":2: unknown table [wath] (did you mean [watch]?)");
  EXPECT_EQ(ErrorOf("reserve = \"4GiB\"\n"),
            std::string(kPath) + ":1: unknown key 'reserve' (did you mean [plan] reserve?)");
  EXPECT_EQ(ErrorOf("[guard]\nmin_available = \"4GiB\"\n"),
            std::string(kPath) + ":2: unknown key 'min_available' in [guard]");
  EXPECT_EQ(ErrorOf("colour = true\n"), std::string(kPath) + ":1: unknown key 'colour'");
}

TEST(ConfigToml, FirstErrorInFileOrder) {
  // toml++ orders keys by name ("aaa" < "zzz"); the error must be the first line's.
  EXPECT_EQ(ErrorOf("zzz = 1\naaa = 2\n"), std::string(kPath) + ":1: unknown key 'zzz'");
}

TEST(ConfigToml, WrongTypes) {
  EXPECT_EQ(
      ErrorOf("[plan]\nreserve = 4294967296\n"),
      std::string(kPath) + ":2: plan.reserve must be a string, such as \"4GiB\", not an integer");
  EXPECT_EQ(
      ErrorOf("[watch]\ninterval = 30\n"),
      std::string(kPath) + ":2: watch.interval must be a string, such as \"30s\", not an integer");
  EXPECT_EQ(ErrorOf("[platform]\nsustained_power_w = \"100\"\n"),
            std::string(kPath) +
                ":2: platform.sustained_power_w must be a number of watts, not a string");
  EXPECT_EQ(ErrorOf("plan = 3\n"),
            std::string(kPath) + ":1: 'plan' must be a table ([plan]), not an integer");
  EXPECT_EQ(ErrorOf("[[plan]]\nreserve = \"4GiB\"\n"),
            std::string(kPath) + ":1: 'plan' must be a table ([plan]), not an array");
  EXPECT_EQ(
      ErrorOf("[plan.reserve]\n"),
      std::string(kPath) + ":1: plan.reserve must be a string, such as \"4GiB\", not a table");
  EXPECT_EQ(ErrorOf("journal = [\"/a\"]\n"),
            std::string(kPath) +
                ":1: journal must be a string, such as \"~/.local/state/headroom/journal.db\", not "
                "an array");
  EXPECT_EQ(
      ErrorOf("[guard]\nkill_level = 1979-05-27\n"),
      std::string(kPath) + ":2: guard.kill_level must be a string, such as \"8%\", not a date");
  EXPECT_EQ(ErrorOf("schema_version = \"1\"\n"),
            std::string(kPath) + ":1: schema_version must be an integer, not a string");
}

TEST(ConfigToml, BadValuesUseTheSettingsRules) {
  EXPECT_EQ(ErrorOf("[plan]\nreserve = \"-4GiB\"\n"),
            std::string(kPath) + ":2: plan.reserve: '-4GiB' is negative");
  EXPECT_EQ(ErrorOf("[plan]\nreserve = \"4 parsecs\"\n"),
            std::string(kPath) +
                ":2: plan.reserve: '4 parsecs' has an unknown unit 'parsecs' (use K, M, G, T, "
                "KiB..TiB, KB..TB)");
  EXPECT_EQ(ErrorOf("[plan]\nreserve = \"99999999999T\"\n"),
            std::string(kPath) + ":2: plan.reserve: '99999999999T' is too large");
  EXPECT_EQ(ErrorOf("[guard]\nkill_level = \"100%\"\n"),
            std::string(kPath) + ":2: guard.kill_level: '100%' is not a percentage in (0, 100)");
  EXPECT_EQ(ErrorOf("[guard]\nkill_level = \"0\"\n"),
            std::string(kPath) + ":2: guard.kill_level: '0' is zero");
  EXPECT_EQ(ErrorOf("[watch]\ninterval = \"50ms\"\n"),
            std::string(kPath) + ":2: watch.interval: '50ms' is below the minimum of 100ms");
  EXPECT_EQ(ErrorOf("[watch]\ninterval = \"8d\"\n"),
            std::string(kPath) +
                ":2: watch.interval: '8d' has an unknown unit 'd' (use us, ms, s, m, h)");
  EXPECT_EQ(ErrorOf("[export]\ninterval = \"2h\"\n"),
            std::string(kPath) + ":2: export.interval: '2h' is above the maximum of 1h");
  EXPECT_EQ(ErrorOf("[top]\ninterval = \"0s\"\n"),
            std::string(kPath) + ":2: top.interval: '0s' is zero");
  EXPECT_EQ(ErrorOf("[platform]\nkind = \"GB10\"\n"),
            std::string(kPath) +
                ":2: platform.kind: 'GB10' is not one of auto, gb10, discrete, integrated, none");
  EXPECT_EQ(ErrorOf("[platform]\nrated_power_w = -240\n"),
            std::string(kPath) + ":2: platform.rated_power_w: -240 W is outside (0, 10000]");
  EXPECT_EQ(ErrorOf("[platform]\nrated_power_w = 0\n"),
            std::string(kPath) + ":2: platform.rated_power_w: 0 W is outside (0, 10000]");
  EXPECT_EQ(ErrorOf("[platform]\nrated_power_w = inf\n"),
            std::string(kPath) +
                ":2: platform.rated_power_w: 'inf' is not a number of watts (e.g. 100 or 97.5)");
  EXPECT_EQ(ErrorOf("[platform]\nrated_power_w = nan\n"),
            std::string(kPath) +
                ":2: platform.rated_power_w: 'nan' is not a number of watts (e.g. 100 or 97.5)");
  EXPECT_EQ(ErrorOf("[platform]\nrated_power_w = 9223372036854775807\n"),
            std::string(kPath) +
                ":2: platform.rated_power_w: 9223372036854775807 W is outside (0, 10000]");
  EXPECT_EQ(ErrorOf("journal = \"\"\n"), std::string(kPath) + ":1: journal: an empty path");
  EXPECT_EQ(
      ErrorOf("journal = \"state/j.db\"\n"),
      std::string(kPath) +
          ":1: journal: 'state/j.db' is relative: give an absolute path or one starting with ~/");
}

TEST(ConfigToml, HugeIntegersAreTomlErrors) {
  // Past int64: toml++ refuses the literal itself.
  const std::string e = ErrorOf("[platform]\nrated_power_w = 99999999999999999999999\n");
  EXPECT_EQ(e.rfind(std::string(kPath) + ":2: ", 0), 0u) << e;
}

TEST(ConfigToml, SchemaVersions) {
  EXPECT_EQ(Parsed("schema_version = 1\n").schema_version, 1);
  EXPECT_EQ(ErrorOf("schema_version = 2\n"),
            std::string(kPath) +
                ":1: schema_version 2 is newer than this headroom reads (1): upgrade headroom, "
                "or write the file for version 1");
  EXPECT_EQ(ErrorOf("schema_version = 0\n"),
            std::string(kPath) + ":1: schema_version 0 is not a version (this headroom reads 1)");
}

TEST(ConfigToml, DuplicateKeysAreRefused) {
  const std::string e = ErrorOf("[plan]\nreserve = \"4GiB\"\nreserve = \"8GiB\"\n");
  EXPECT_EQ(e.rfind(std::string(kPath) + ":3: ", 0), 0u) << e;
  EXPECT_NE(ErrorOf("[plan]\n[plan]\n"), "");
}

TEST(ConfigToml, NulBytesAndBadUtf8NameTheLine) {
  using namespace std::string_literals;
  EXPECT_EQ(ErrorOf("[plan]\nreserve = \"4\0GiB\"\n"s), std::string(kPath) + ":2: a NUL byte");
  EXPECT_EQ(ErrorOf("# caf\xe9\n"), std::string(kPath) + ":1: not UTF-8 (byte 0xe9)");
  EXPECT_EQ(ErrorOf("\n\n# \xc0\xaf overlong\n"), std::string(kPath) + ":3: not UTF-8 (byte 0xc0)");
  EXPECT_EQ(ErrorOf("# \xed\xa0\x80 surrogate\n"),
            std::string(kPath) + ":1: not UTF-8 (byte 0xed)");
  EXPECT_EQ(ErrorOf("# cut \xe4\xb8"), std::string(kPath) + ":1: not UTF-8 (byte 0xe4)");
  // A NUL written as an escape is a string value holding one: refused too.
  EXPECT_EQ(ErrorOf("journal = \"/a\\u0000b\"\n"),
            std::string(kPath) + ":1: journal: holds a NUL byte");
  // Valid UTF-8 in comments and strings is fine.
  EXPECT_TRUE(ParseConfigToml("# 設定檔\njournal = \"/資料/j.db\"\n", kPath).ok());
}

// toml++ 3.3 reaches __builtin_unreachable on most non-ASCII BMP code points wherever it
// asks whether one is whitespace (fuzz/corpus/config/toml-*.toml): outside strings they are
// refused by name, inside strings they pass through it unharmed and come back unchanged.
TEST(ConfigToml, NonAsciiOutsideStringsIsRefusedInsideIsKept) {
  EXPECT_EQ(ErrorOf("\xc3\xa9 = 1\n"),
            std::string(kPath) + ":1: a non-ASCII character outside a string or comment");
  // toml++ scans this bad number across the quote, asking of U+FCFF whether it is
  // whitespace: with the stand-in it is an ordinary error.
  EXPECT_EQ(ErrorOf("[plan]\nreserve = -\"\xef\xb3\xbf\"*\n").rfind(std::string(kPath) + ":2: ", 0),
            0u);
  EXPECT_EQ(ErrorOf("\xef\xb9\xbf[guard]\n"),
            std::string(kPath) + ":1: a non-ASCII character outside a string or comment");
  // Kana, CJK punctuation and accents in strings and comments, a line-ending backslash
  // before one in a multi-line string: the value comes back byte for byte.
  const ConfigFile f = Parsed("# 設定、。カタカナ é\njournal = \"\"\"/x\\\n   /資料、é.db\"\"\"\n");
  ASSERT_EQ(f.settings.size(), 1u);
  EXPECT_EQ(f.settings[0].text, "/x/資料、é.db");
  EXPECT_EQ(f.settings[0].line, 2);
  // Keys and toml++'s own messages speak the file's characters, not the stand-ins.
  EXPECT_EQ(ErrorOf("\"é、\" = 1\n"), std::string(kPath) + ":1: unknown key 'é、'");
  // Plane 15 holds the stand-ins, so the file may not.
  EXPECT_EQ(ErrorOf("# \xf3\xb0\x80\x80\n"), std::string(kPath) +
                                                 ":1: a code point of plane 15 (U+F0000-U+FFFFF, "
                                                 "private use), which headroom does not read");
  // Emoji (plane 1) are no trouble.
  EXPECT_TRUE(ParseConfigToml("journal = \"/\xf0\x9f\x98\x80.db\"\n", kPath).ok());
}

TEST(ConfigToml, TomlAssumptionsAreErrorsNotUndefinedBehaviour) {
  // parse_key assumes a table header starts with a key character; here it does not.
  const std::string e = ErrorOf("[%\nb = 1\n");
  EXPECT_EQ(e.rfind(std::string(kPath) + ":1: ", 0), 0u) << e;
  // Six quotes cannot end a multi-line string.
  EXPECT_EQ(ErrorOf("journal = \"\"\"/a\"\"\"\"\"\"\n"),
            std::string(kPath) + ":1: six or more quotes in a row end a multi-line string");
  // Five can: two belong to the string.
  EXPECT_TRUE(ParseConfigToml("journal = \"\"\"/a\"\"\"\"\"\n", kPath).ok());
}

TEST(ConfigToml, MessagesStayOneLine) {
  // A multi-line string as a duration; toml++ quoting a newline in its own message.
  EXPECT_EQ(ErrorOf("[watch]\ninterval = \"\"\"1\ns\"\"\"\n"),
            std::string(kPath) +
                ":2: watch.interval: '1\\x0as' has an unknown unit '\\x0as' (use us, ms, s, m, h)");
  const std::string e = ErrorOf("x = i\n");
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  // Values far longer than any setting takes are not quoted whole.
  EXPECT_EQ(ErrorOf("[plan]\nreserve = \"" + std::string(1000, '9') + "\"\n"),
            std::string(kPath) +
                ":2: plan.reserve: a value of 1000 bytes, longer than any this setting takes");
}

TEST(ConfigToml, ByteOrderMarkIsSkipped) {
  const ConfigFile f = Parsed("\xEF\xBB\xBF[plan]\nreserve = \"2GiB\"\n");
  ASSERT_EQ(f.settings.size(), 1u);
  EXPECT_EQ(f.settings[0].line, 2);
}

TEST(ConfigToml, SizeCap) {
  std::string big(kMaxConfigFileBytes + 1, '#');
  EXPECT_EQ(ErrorOf(big), std::string(kPath) +
                              ": larger than 65536 bytes (a configuration file is a few hundred)");
  // Just under the cap, one very long comment line: parsed.
  std::string line = "#" + std::string(kMaxConfigFileBytes - 2, 'x') + "\n";
  EXPECT_TRUE(ParseConfigToml(line, kPath).ok());
}

TEST(ConfigToml, VeryLongKeysAreCutInTheMessage) {
  const std::string key(5000, 'k');
  const std::string e = ErrorOf(key + " = 1\n");
  EXPECT_LT(e.size(), 200u);
  EXPECT_NE(e.find("..."), std::string::npos);
  // Control characters in a quoted key are escaped, so the line stays one line.
  EXPECT_EQ(ErrorOf("\"a\\nb\" = 1\n"), std::string(kPath) + ":1: unknown key 'a\\x0ab'");
}

TEST(ConfigToml, DeepNestingIsRefusedWithoutRecursion) {
  std::string header = "[a";
  for (int i = 0; i < 20000; ++i) header += ".a";
  header += "]\n";
  EXPECT_EQ(ErrorOf(header),
            std::string(kPath) + ":1: more than 64 dots in one line: keys nest too deeply");
  // Inline nesting is bounded by toml++ itself.
  std::string inline_deep = "x = ";
  for (int i = 0; i < 5000; ++i) inline_deep += "[";
  EXPECT_NE(ErrorOf(inline_deep), "");
  std::string tables = "x = ";
  for (int i = 0; i < 3000; ++i) tables += "{a = ";
  EXPECT_NE(ErrorOf(tables), "");
  // Dots inside strings and comments do not count.
  EXPECT_TRUE(
      ParseConfigToml(
          "journal = \"/" + std::string(100, '.') + "/j\" # " + std::string(100, '.') + "\n", kPath)
          .ok());
}

TEST(ConfigToml, LinesEndingInCrLf) {
  const ConfigFile f = Parsed("[plan]\r\nreserve = \"3GiB\"\r\n");
  ASSERT_EQ(f.settings.size(), 1u);
  EXPECT_EQ(f.settings[0].text, "3GiB");
}

std::string SourceFile(const std::string& relative) {
  std::ifstream in(testing::SourcePath(relative), std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// share/config/config.toml.example (installed by the package) parses as it is, and with
// its commented-out lines uncommented it sets every setting the code knows, to its default
// where the default is a value: the example and the code cannot drift apart.
TEST(ConfigExample, ParsesAndListsEverySetting) {
  const std::string example = SourceFile("share/config/config.toml.example");
  ASSERT_FALSE(example.empty());
  const ConfigFile as_is = Parsed(example);
  EXPECT_EQ(as_is.schema_version, kConfigSchemaVersion);
  EXPECT_TRUE(as_is.settings.empty());  // every key is commented out
  std::string uncommented;
  std::istringstream lines(example);
  const std::regex key_line(R"(^# ?((\[[a-z]+\])|([a-z_]+ = .*))$)");
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    uncommented += (std::regex_match(line, m, key_line) ? m[1].str() : line) + "\n";
  }
  const ConfigFile all = Parsed(uncommented);
  ASSERT_EQ(all.settings.size(), AllSettings().size()) << uncommented;
  Settings defaults;
  for (const SettingInfo& info : AllSettings()) {
    const FileSetting* s = Find(all, info.id);
    ASSERT_NE(s, nullptr) << SettingKey(info);
    // The env variable is named beside each key.
    EXPECT_NE(example.find(std::string(info.env)), std::string::npos) << info.env;
  }
  for (SettingId id : {SettingId::kReserve, SettingId::kWatchInterval, SettingId::kTopInterval,
                       SettingId::kExportInterval, SettingId::kPlatformKind}) {
    EXPECT_EQ(Find(all, id)->text, InfoOf(id).default_text) << SettingKey(InfoOf(id));
  }
}

// docs/config.md names every key (as table and key) and every variable.
TEST(ConfigExample, DocsNameEverySetting) {
  const std::string docs = SourceFile("docs/config.md");
  ASSERT_FALSE(docs.empty());
  for (const SettingInfo& info : AllSettings()) {
    EXPECT_NE(docs.find("`" + SettingKey(info) + "`"), std::string::npos) << SettingKey(info);
    EXPECT_NE(docs.find(std::string(info.env)), std::string::npos) << info.env;
    EXPECT_NE(docs.find(std::string(info.flag)), std::string::npos) << info.flag;
  }
}

}  // namespace
}  // namespace headroom
