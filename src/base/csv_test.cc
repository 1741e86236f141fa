#include "base/csv.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

TEST(Csv, QuotesCommasNewlines) {
  auto rows = ParseCsv("a,b,c\n1,\"x, \"\"y\"\"\nz\",3\r\n\n4,,\n");
  ASSERT_TRUE(rows.ok()) << EnglishText(rows.error().what);
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[1][1], "x, \"y\"\nz");
  EXPECT_EQ((*rows)[1][2], "3");
  ASSERT_EQ((*rows)[2].size(), 3u);
  EXPECT_EQ((*rows)[2][1], "");
}

TEST(Csv, LastLineWithoutNewlineAndEmptyQuoted) {
  auto rows = ParseCsv("a,\"\"\n1,2");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0][1], "");
  EXPECT_EQ((*rows)[1][1], "2");
}

TEST(Csv, HostileInputIsAnErrorNotACrash) {
  EXPECT_FALSE(ParseCsv("a,\"unterminated\n1,2").ok());
  EXPECT_FALSE(ParseCsv("a,b\"c\n").ok());
  EXPECT_FALSE(ParseCsv("\"a\"b,c\n").ok());
  EXPECT_FALSE(ParseCsv(std::string(5000, ','), 4096).ok());
  auto err = ParseCsv("x\ny\n\"open");
  ASSERT_FALSE(err.ok());
  EXPECT_NE(EnglishText(err.error().what).find("line 3"), std::string::npos);
  EXPECT_TRUE(ParseCsv("").ok());
  EXPECT_TRUE(ParseCsv(std::string("\0,\0\n", 4)).ok());
}

TEST(CsvTable, ByColumnName) {
  auto t = CsvTable::Parse("id,model\nA,llama\nB\n");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->size(), 2u);
  EXPECT_EQ(t->Get(0, "model"), "llama");
  EXPECT_EQ(t->Get(1, "model"), "");  // short row
  EXPECT_EQ(t->Get(0, "nope"), "");
  EXPECT_FALSE(CsvTable::Parse("a,a\n1,2\n").ok());
  EXPECT_FALSE(CsvTable::Parse("").ok());
}

}  // namespace
}  // namespace headroom
