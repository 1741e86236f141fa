#include "base/mem_level.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/message.h"

namespace headroom {
namespace {

constexpr uint64_t kTotal = 128 * kGiB;

TEST(MemLevel, SizesWithAUnitAndPercentages) {
  EXPECT_EQ(ParseMemLevel("8GiB")->bytes, 8 * kGiB);
  EXPECT_EQ(ParseMemLevel("8G")->bytes, 8 * kGiB);
  EXPECT_EQ(ParseMemLevel("8GB")->bytes, 8 * kGB);
  EXPECT_EQ(ParseMemLevel("512MiB")->bytes, 512 * kMiB);
  EXPECT_EQ(ParseMemLevel("1.5TiB")->bytes, 3 * kTiB / 2);
  EXPECT_EQ(ParseMemLevel("4096B")->bytes, 4096u);
  EXPECT_EQ(ParseMemLevel(" 2 GiB ")->bytes, 2 * kGiB);
  const auto pct = ParseMemLevel("8%");
  ASSERT_TRUE(pct.ok());
  EXPECT_TRUE(pct->is_percent);
  EXPECT_DOUBLE_EQ(pct->percent, 8.0);
  EXPECT_DOUBLE_EQ(ParseMemLevel("0.5%")->percent, 0.5);
  EXPECT_DOUBLE_EQ(ParseMemLevel("99.9%")->percent, 99.9);
  EXPECT_EQ(MemLevelBytes(*ParseMemLevel("50%"), kTotal), kTotal / 2);
  EXPECT_EQ(MemLevelBytes(*ParseMemLevel("8GiB"), kTotal), 8 * kGiB);
}

// The first line: `--min-available 10` was 10 bytes, a level that never fires.
TEST(MemLevel, BareNumbersNeedAUnit) {
  for (const char* bare : {"10", "4096", "1e9", "10.", "0.5", " 10 ", "+10", "1e1"}) {
    const auto r = ParseMemLevel(bare);
    ASSERT_FALSE(r.ok()) << bare;
    const std::string m = EnglishText(r.error().what);
    EXPECT_NE(m.find("has no unit"), std::string::npos) << bare << ": " << m;
    EXPECT_NE(m.find("8%"), std::string::npos) << m;
  }
}

TEST(MemLevel, HostileTextIsOneLineError) {
  const std::string nul("8G\0iB", 5);
  const std::vector<std::string> hostile = {"",
                                            " ",
                                            "%",
                                            " %",
                                            "8 %",
                                            "0%",
                                            "100%",
                                            "150%",
                                            "-1%",
                                            "nan%",
                                            "inf%",
                                            "1e1%",
                                            "0x10%",
                                            "8%%",
                                            "1.2.3%",
                                            ".%",
                                            "8%G",
                                            "0GiB",
                                            "-4G",
                                            "G",
                                            "GiB",
                                            "abc",
                                            "12abc",
                                            "8 Gibibytes",
                                            "nanG",
                                            "infG",
                                            "1e999G",
                                            "99999999999T",
                                            "8G8",
                                            "8\n%",
                                            "\xff\xfeG",
                                            nul,
                                            std::string(4096, '9') + "G",
                                            std::string(4096, '9') + "%"};
  for (const std::string& bad : hostile) {
    const auto r = ParseMemLevel(bad);
    ASSERT_FALSE(r.ok()) << "'" << bad << "'";
    const std::string m = EnglishText(r.error().what);
    EXPECT_FALSE(m.empty());
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

// A level at or above MemTotal: MemAvailable is always under it (`--min-available 100TiB`
// killed every job at once).
TEST(MemLevel, AtOrAboveMemTotalIsRefused) {
  for (const char* text : {"100TiB", "128GiB", "200GB"}) {
    const auto r = MemLevelBelowTotal(*ParseMemLevel(text), kTotal, text);
    ASSERT_FALSE(r.ok()) << text;
    const std::string m = EnglishText(r.error().what);
    EXPECT_NE(m.find("not below MemTotal (128.00 GiB)"), std::string::npos) << m;
    EXPECT_NE(m.find(text), std::string::npos) << m;
  }
  EXPECT_EQ(*MemLevelBelowTotal(*ParseMemLevel("127GiB"), kTotal, "127GiB"), 127 * kGiB);
  EXPECT_EQ(*MemLevelBelowTotal(*ParseMemLevel("99%"), kTotal, "99%"),
            static_cast<uint64_t>(0.99 * static_cast<double>(kTotal)));
  // A percentage of a tiny pool that truncates to nothing is no level either.
  EXPECT_FALSE(MemLevelBelowTotal(*ParseMemLevel("0.5%"), 100, "0.5%").ok());
  // MemTotal unknown: nothing to compare with.
  EXPECT_EQ(*MemLevelBelowTotal(*ParseMemLevel("100TiB"), 0, "100TiB"), 100 * kTiB);
}

}  // namespace
}  // namespace headroom
