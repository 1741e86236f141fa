#include "base/json_reader.h"

#include <gtest/gtest.h>

#include "testing_files.h"

namespace headroom {
namespace {

// Skips one whole document; returns "" when it is valid JSON, else the error.
std::string Check(std::string_view text) {
  JsonReader r(text);
  if (r.Skip() && r.Finish()) return "";
  return EnglishText(r.error());
}

TEST(JsonReaderTest, AcceptsValidJson) {
  for (std::string_view text :
       {"{}", "[]", " \t\r\n{ } ", "0", "-0", "1.5e-3", "-12E+4", "1E9", "\"\"", "true", "false",
        "null", R"({"a":[1,2,{"b":null}],"c":"\u00e9\ud83d\ude00\/\b\f\n\r\t\"\\"})",
        "\"\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80\x7F\""}) {
    EXPECT_EQ(Check(text), "") << text;
  }
  EXPECT_EQ(Check(std::string(64, '[') + std::string(64, ']')), "");  // the cap itself
}

TEST(JsonReaderTest, RejectsInvalidJsonWithTheByte) {
  struct Case {
    std::string_view text;
    std::string error;
  };
  const Case cases[] = {
      {"", "unexpected end of input at byte 0"},
      {"   ", "unexpected end of input at byte 3"},
      {"{", "unexpected end of input at byte 1"},
      {"{\"a\"}", "expected ':' at byte 4"},
      {"{\"a\":}", "expected a value at byte 5"},
      {"{\"a\":1,}", "expected a string key at byte 7"},
      {"{\"a\":1 \"b\":2}", "expected ',' or '}' at byte 7"},
      {"{1:2}", "expected a string key at byte 1"},
      {"[1,]", "expected a value at byte 3"},
      {"[1 2]", "expected ',' or ']' at byte 3"},
      {"[,1]", "expected a value at byte 1"},
      {"01", "trailing characters after the value at byte 1"},
      {"1.", "invalid number at byte 0"},
      {".5", "expected a value at byte 0"},
      {"+1", "expected a value at byte 0"},
      {"-", "invalid number at byte 0"},
      {"1e", "invalid number at byte 0"},
      {"tru", "invalid literal at byte 0"},
      {"nul", "invalid literal at byte 0"},
      {"truex", "trailing characters after the value at byte 4"},
      {"\"abc", "unterminated string at byte 0"},
      {"\"a\\", "unexpected end of input in string at byte 2"},
      {"\"\\u12\"", "invalid \\u escape in string at byte 1"},
      {"\"\\ud800\\u0041\"", "unpaired high surrogate in string at byte 1"},
      {"\"\x01\"", "control character in string at byte 1"},
      {"\"\x80\"", "invalid UTF-8 in string at byte 1"},
      {"\"\xC1\xBF\"", "invalid UTF-8 in string at byte 1"},
      {"\"\xE0\x80\xAF\"", "invalid UTF-8 in string at byte 1"},
      {"\"\xF0\x80\x80\xAF\"", "invalid UTF-8 in string at byte 1"},
      {"\"\xF5\x80\x80\x80\"", "invalid UTF-8 in string at byte 1"},
      {"\xEF\xBB\xBF{}", "expected a value at byte 0"},  // a byte-order mark is not JSON
      {"{}{}", "trailing characters after the value at byte 2"},
  };
  for (const Case& c : cases) EXPECT_EQ(Check(c.text), c.error) << c.text;
}

TEST(JsonReaderTest, CapsNestingDepth) {
  const std::string deep = std::string(65, '[') + std::string(65, ']');
  JsonReader r(deep);
  EXPECT_FALSE(r.Skip());
  EXPECT_TRUE(r.depth_exceeded());
  EXPECT_EQ(EnglishText(r.error()), "nesting deeper than 64 levels at byte 64");
  // A 16 MiB wall of brackets fails at the same place, without recursion or allocation.
  EXPECT_EQ(Check(std::string(16 << 20, '[')), "nesting deeper than 64 levels at byte 64");
}

TEST(JsonReaderTest, PullsMembersAndValues) {
  JsonReader r(R"( {"n": -42, "s": "a\"b", "b": true, "z": null, "arr": [1, "x"], "o": {}} )");
  ASSERT_EQ(r.Peek(), JsonReader::Type::kObject);
  ASSERT_TRUE(r.BeginObject());
  std::string key, s;
  std::string_view number;
  bool b = false;
  ASSERT_TRUE(r.NextMember(&key));
  EXPECT_EQ(key, "n");
  ASSERT_TRUE(r.ReadNumber(&number));
  EXPECT_EQ(number, "-42");
  ASSERT_TRUE(r.NextMember(&key));
  ASSERT_TRUE(r.ReadString(&s));
  EXPECT_EQ(s, "a\"b");
  ASSERT_TRUE(r.NextMember(&key));
  ASSERT_TRUE(r.ReadBool(&b));
  EXPECT_TRUE(b);
  ASSERT_TRUE(r.NextMember(nullptr));
  EXPECT_EQ(r.Peek(), JsonReader::Type::kNull);
  ASSERT_TRUE(r.ReadNull());
  ASSERT_TRUE(r.NextMember(&key));
  EXPECT_EQ(key, "arr");
  ASSERT_TRUE(r.BeginArray());
  int elements = 0;
  while (r.NextElement()) {
    ++elements;
    ASSERT_TRUE(r.Skip());
  }
  EXPECT_EQ(elements, 2);
  ASSERT_TRUE(r.NextMember(&key));
  EXPECT_EQ(key, "o");
  ASSERT_TRUE(r.Skip());
  EXPECT_FALSE(r.NextMember(&key));
  EXPECT_FALSE(r.failed());
  EXPECT_TRUE(r.Finish());
}

TEST(JsonReaderTest, ErrorsStick) {
  JsonReader r("[1,]");
  ASSERT_TRUE(r.BeginArray());
  ASSERT_TRUE(r.NextElement());
  ASSERT_TRUE(r.Skip());
  EXPECT_FALSE(r.NextElement());
  EXPECT_TRUE(r.failed());
  EXPECT_EQ(r.Peek(), JsonReader::Type::kNone);
  EXPECT_FALSE(r.Skip());
  EXPECT_FALSE(r.Finish());
  EXPECT_EQ(EnglishText(r.error()), "expected a value at byte 3");
  // Reading the wrong type is an error too.
  JsonReader wrong("\"4\"");
  EXPECT_FALSE(wrong.ReadNumber(nullptr));
  EXPECT_EQ(EnglishText(wrong.error()), "expected a number at byte 0");
}

TEST(JsonReaderTest, IntegerLiterals) {
  EXPECT_EQ(JsonInt64("4096"), 4096);
  EXPECT_EQ(JsonInt64("-4"), -4);
  EXPECT_EQ(JsonInt64("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(JsonInt64("9223372036854775808"), std::nullopt);
  EXPECT_EQ(JsonInt64("4096.0"), std::nullopt);
  EXPECT_EQ(JsonInt64("1e3"), std::nullopt);
  EXPECT_EQ(JsonInt64(""), std::nullopt);
  EXPECT_EQ(JsonUint64("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(JsonUint64("18446744073709551616"), std::nullopt);
  EXPECT_EQ(JsonUint64("-0"), std::nullopt);
  EXPECT_EQ(JsonUint64("0"), 0u);
}

TEST(JsonReaderTest, QuotesForMessages) {
  EXPECT_EQ(QuoteForMessage("w"), "\"w\"");
  EXPECT_EQ(QuoteForMessage("a\nb\x7F"), "\"a?b?\"");
  EXPECT_EQ(QuoteForMessage("abcdef", 3), "\"abc...\"");
  // Cut before a UTF-8 sequence, never inside it.
  EXPECT_EQ(QuoteForMessage("ab\xE6\x97\xA5", 3), "\"ab...\"");
}

TEST(JsonReaderTest, ReadsFilesWithACap) {
  testing::TempDir dir("json");
  testing::WriteFile(dir / "a.json", "{}");
  EXPECT_EQ(ReadJsonFileText(dir / "a.json", 16).value().text(), "{}");
  testing::WriteFile(dir / "empty.json", "");
  EXPECT_EQ(ReadJsonFileText(dir / "empty.json", 16).value().text(), "");
  // Moves hand the mapping over; the moved-from object is empty.
  Result<FileText> a = ReadJsonFileText(dir / "a.json", 16);
  FileText b = std::move(*a);
  FileText c;
  c = std::move(b);
  EXPECT_EQ(c.text(), "{}");
  EXPECT_EQ(b.text(), "");  // NOLINT(bugprone-use-after-move): checking the moved-from state
  EXPECT_EQ(EnglishText(ReadJsonFileText(dir / "a.json", 1).error().what),
            (dir / "a.json").string() + ": file is 2 bytes, over the 1-byte limit");
  EXPECT_EQ(EnglishText(ReadJsonFileText(dir.path(), 16).error().what),
            dir.path().string() + ": not a regular file");
  const Error missing = ReadJsonFileText(dir / "b.json", 16).error();
  EXPECT_EQ(EnglishText(missing.what),
            (dir / "b.json").string() + ": open: No such file or directory");
  EXPECT_EQ(missing.errno_value, ENOENT);
}

}  // namespace
}  // namespace headroom
