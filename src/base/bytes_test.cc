#include "base/bytes.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

TEST(ParseBytes, BinaryAndDecimalUnits) {
  EXPECT_EQ(*ParseBytes("16G"), 16 * kGiB);
  EXPECT_EQ(*ParseBytes("16GiB"), 16 * kGiB);
  EXPECT_EQ(*ParseBytes("16gib"), 16 * kGiB);
  EXPECT_EQ(*ParseBytes("100GB"), 100ULL * 1000 * 1000 * 1000);
  EXPECT_EQ(*ParseBytes("1.5T"), 3 * kTiB / 2);
  EXPECT_EQ(*ParseBytes("1.5TB"), 1500ULL * 1000 * 1000 * 1000);
  EXPECT_EQ(*ParseBytes("512M"), 512 * kMiB);
  EXPECT_EQ(*ParseBytes("4 KiB"), 4096u);
  EXPECT_EQ(*ParseBytes("4096"), 4096u);
  EXPECT_EQ(*ParseBytes("4096B"), 4096u);
  EXPECT_EQ(*ParseBytes(" 2g "), 2 * kGiB);
}

TEST(ParseBytes, RejectsBadInput) {
  for (const char* bad : {"", "G", "-1G", "abc", "12abc", "1.2.3G", "nanG", "inf", "1e999G",
                          "99999999999T", "16 GiBs", "1..5G", "--5"}) {
    auto r = ParseBytes(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_FALSE(EnglishText(r.error().what).empty());
      EXPECT_EQ(EnglishText(r.error().what).find('\n'), std::string::npos);
    }
  }
  EXPECT_FALSE(ParseBytes("0").ok());
  EXPECT_FALSE(ParseBytes("0G").ok());
  EXPECT_EQ(*ParseBytes("0", /*allow_zero=*/true), 0u);
}

TEST(ParseParamCount, Suffixes) {
  EXPECT_EQ(*ParseParamCount("70B"), 70'000'000'000ULL);
  EXPECT_EQ(*ParseParamCount("70b"), 70'000'000'000ULL);
  EXPECT_EQ(*ParseParamCount("1.5e9"), 1'500'000'000ULL);
  EXPECT_EQ(*ParseParamCount("350M"), 350'000'000ULL);
  EXPECT_EQ(*ParseParamCount("8030261248"), 8'030'261'248ULL);
  EXPECT_EQ(*ParseParamCount("0.5B"), 500'000'000ULL);
  for (const char* bad : {"", "0", "-8B", "8X", "B", "1e30", "0.1"}) {
    EXPECT_FALSE(ParseParamCount(bad).ok()) << bad;
  }
}

TEST(ParsePositiveInt, WholeNumbersOnly) {
  EXPECT_EQ(*ParsePositiveInt("4"), 4);
  EXPECT_EQ(*ParsePositiveInt("65536"), 65536);
  for (const char* bad : {"", "0", "-1", "4.5", "1e3", "x", "99999999999999999999"}) {
    EXPECT_FALSE(ParsePositiveInt(bad).ok()) << bad;
  }
}

TEST(Format, LabelsUnitsCorrectly) {
  EXPECT_EQ(FormatGiB(kGiB), "1.00 GiB");
  EXPECT_EQ(FormatGB(kGiB), "1.07 GB");
  EXPECT_EQ(FormatGB(40'000'000'000ULL), "40.00 GB");
  EXPECT_EQ(FormatGiB(40'000'000'000ULL), "37.25 GiB");
  EXPECT_EQ(FormatBoth(40'000'000'000ULL), "40.00 GB (37.25 GiB)");
  // MemTotal of a GB10: 127600748 kB.
  EXPECT_EQ(FormatGiB(127600748ULL * 1024), "121.69 GiB");
  EXPECT_EQ(FormatParamCount(8'030'261'248ULL), "8.03B");
  EXPECT_EQ(FormatParamCount(494'032'768ULL), "494M");
  EXPECT_EQ(FormatParamCount(1'572'864ULL), "1.57M");
}

}  // namespace
}  // namespace headroom
