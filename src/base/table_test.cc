#include "base/table.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

TEST(TextTable, AlignsColumns) {
  TextTable t({TextTable::Align::kLeft, TextTable::Align::kRight});
  t.AddRow({"weights", "39.53"});
  t.AddRule();
  t.AddRow({"peak", "1.5"});
  EXPECT_EQ(t.Render(0),
            "weights  39.53\n"
            "--------------\n"
            "peak       1.5\n");
}

TEST(TextTable, CountsUtf8CodePoints) {
  TextTable t({TextTable::Align::kLeft, TextTable::Align::kLeft});
  t.AddRow({"µs", "x"});
  t.AddRow({"ab", "y"});
  EXPECT_EQ(t.Render(0), "µs  x\nab  y\n");
}

TEST(TextTable, WideCharactersTakeTwoColumns) {
  TextTable t({TextTable::Align::kLeft, TextTable::Align::kRight});
  t.AddRow({"權重", "1"});
  t.AddRow({"weights", "22"});
  t.AddRow({"活化值（sdpa）", "3"});
  EXPECT_EQ(t.Render(0),
            "權重             1\n"
            "weights         22\n"
            "活化值（sdpa）   3\n");
}

}  // namespace
}  // namespace headroom
