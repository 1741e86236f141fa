#include "sys/psi.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string>

#include "testing_files.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;

// Writes `text` to dir/proc/pressure/memory.
void WritePressure(const fs::path& dir, const std::string& text) {
  fs::create_directories(dir / "proc" / "pressure");
  FILE* f = std::fopen((dir / "proc" / "pressure" / "memory").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
}

TEST(PsiParse, KernelText) {
  // psi_show() output, as on any 4.20+ kernel.
  auto p = ParsePsi(
      "some avg10=1.25 avg60=0.50 avg300=0.10 total=123456\n"
      "full avg10=0.75 avg60=0.25 avg300=0.05 total=65432\n");
  ASSERT_TRUE(p) << EnglishText(p.error().what);
  EXPECT_DOUBLE_EQ(p->some.avg10, 1.25);
  EXPECT_DOUBLE_EQ(p->some.avg60, 0.50);
  EXPECT_DOUBLE_EQ(p->some.avg300, 0.10);
  EXPECT_EQ(p->some.total_us, 123456u);
  ASSERT_TRUE(p->full);
  EXPECT_DOUBLE_EQ(p->full->avg10, 0.75);
  EXPECT_EQ(p->full->total_us, 65432u);
}

TEST(PsiParse, FullLineMayBeMissing) {
  // /proc/pressure/cpu before 5.13 has only "some".
  auto p = ParsePsi("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->full);
  EXPECT_EQ(p->some.total_us, 0u);
}

TEST(PsiParse, TolerantOfLayout) {
  // Extra spaces and tabs, keys reordered, unknown keys and lines, CRLF, no final newline,
  // "full" before "some".
  auto p = ParsePsi(
      "  full   total=9 avg300=3.00\tavg60=2.00 avg10=1.00 new_key=5 junk\r\n"
      "cpu avg10=oops\r\n"
      "some avg10=4.00 avg60=5.00 avg300=6.00 total=18446744073709551615");
  ASSERT_TRUE(p) << EnglishText(p.error().what);
  EXPECT_DOUBLE_EQ(p->some.avg10, 4.0);
  EXPECT_DOUBLE_EQ(p->some.avg300, 6.0);
  EXPECT_EQ(p->some.total_us, 18446744073709551615ULL);
  ASSERT_TRUE(p->full);
  EXPECT_DOUBLE_EQ(p->full->avg10, 1.0);
  EXPECT_DOUBLE_EQ(p->full->avg300, 3.0);
  EXPECT_EQ(p->full->total_us, 9u);
}

TEST(PsiParse, FirstLineWins) {
  auto p = ParsePsi(
      "some avg10=1.00 avg60=1.00 avg300=1.00 total=1\n"
      "some avg10=2.00 avg60=2.00 avg300=2.00 total=2\n");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->some.total_us, 1u);
}

TEST(PsiParse, GarbageIsAnError) {
  for (const char* bad : {
           "", "\n", "hello world\n",
           "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",  // no "some"
           "some avg10=0.00 avg60=0.00 avg300=0.00\n",          // no total
           "some avg60=0.00 avg300=0.00 total=0\n",             // no avg10
           "some avg10=abc avg60=0.00 avg300=0.00 total=0\n",
           "some avg10=-1.00 avg60=0.00 avg300=0.00 total=0\n",
           "some avg10=nan avg60=0.00 avg300=0.00 total=0\n",
           "some avg10=inf avg60=0.00 avg300=0.00 total=0\n",
           "some avg10=1.0x avg60=0.00 avg300=0.00 total=0\n",
           "some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n",
           "some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551616\n",
           "some avg10= avg60=0.00 avg300=0.00 total=0\n",
           "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
           "full avg10=0.00 avg60=0.00 avg300=0.00 total=zz\n",  // a broken "full" too
       }) {
    auto p = ParsePsi(bad);
    EXPECT_FALSE(p) << bad;
    if (!p) {
      EXPECT_FALSE(EnglishText(p.error().what).empty());
      EXPECT_EQ(EnglishText(p.error().what).find('\n'), std::string::npos);
    }
  }
}

TEST(PsiFixture, Gb10Idle) {
  auto p = ReadMemoryPsi(testing::FixtureRoot("gb10-idle"));
  ASSERT_TRUE(p) << EnglishText(p.error().what);
  ASSERT_TRUE(*p);
  EXPECT_DOUBLE_EQ((*p)->some.avg10, 0.0);
  EXPECT_EQ((*p)->some.total_us, 184233u);
  ASSERT_TRUE((*p)->full);
  EXPECT_EQ((*p)->full->total_us, 96511u);
}

TEST(PsiFixture, Gb10PageCache) {
  auto p = ReadMemoryPsi(testing::FixtureRoot("gb10-pagecache"));
  ASSERT_TRUE(p && *p);
  EXPECT_DOUBLE_EQ((*p)->some.avg10, 0.0);
  EXPECT_DOUBLE_EQ((*p)->some.avg60, 0.04);
  EXPECT_EQ((*p)->some.total_us, 1893722u);
}

TEST(PsiFixture, Gb10Pressure) {
  auto p = ReadMemoryPsi(testing::FixtureRoot("gb10-pressure"));
  ASSERT_TRUE(p && *p);
  EXPECT_DOUBLE_EQ((*p)->some.avg10, 35.14);
  EXPECT_DOUBLE_EQ((*p)->some.avg60, 27.92);
  EXPECT_DOUBLE_EQ((*p)->some.avg300, 11.06);
  EXPECT_EQ((*p)->some.total_us, 412336815u);
  ASSERT_TRUE((*p)->full);
  EXPECT_DOUBLE_EQ((*p)->full->avg10, 20.47);
  EXPECT_DOUBLE_EQ((*p)->full->avg60, 15.31);
  EXPECT_DOUBLE_EQ((*p)->full->avg300, 5.89);
  EXPECT_EQ((*p)->full->total_us, 236904212u);
}

TEST(PsiFixture, OldKernelHasNoPsi) {
  auto p = ReadMemoryPsi(testing::FixtureRoot("old-kernel"));
  ASSERT_TRUE(p) << EnglishText(p.error().what);  // absent is not an error
  EXPECT_FALSE(*p);
}

TEST(PsiFixture, Hostile) {
  auto p = ReadMemoryPsi(testing::FixtureRoot("hostile"));
  ASSERT_TRUE(p) << EnglishText(p.error().what);
  ASSERT_TRUE(*p);
  EXPECT_DOUBLE_EQ((*p)->some.avg10, 1.5);
  EXPECT_EQ((*p)->some.total_us, 12345u);
  ASSERT_TRUE((*p)->full);
  EXPECT_DOUBLE_EQ((*p)->full->avg300, 0.10);
  EXPECT_EQ((*p)->full->total_us, 678u);
}

TEST(PsiRead, ThisMachine) {
  // Either no PSI here (nullopt) or a well-formed reading; never an error.
  auto p = ReadMemoryPsi(SysRoot("/"));
  ASSERT_TRUE(p) << EnglishText(p.error().what);
  if (*p) {
    EXPECT_GE((*p)->some.avg10, 0.0);
  }
}

TEST(PsiRead, ErrorsNameThePath) {
  const fs::path dir = fs::temp_directory_path() / ("headroom-psi-" + std::to_string(::getpid()));
  fs::remove_all(dir);

  // A file that exists but is garbage.
  WritePressure(dir, "garbage\n");
  auto g = ReadMemoryPsi(SysRoot(dir));
  ASSERT_FALSE(g);
  const std::string path = (dir / "proc" / "pressure" / "memory").string();
  EXPECT_NE(EnglishText(g.error().what).find(path), std::string::npos)
      << EnglishText(g.error().what);
  EXPECT_NE(EnglishText(g.error().what).find("some"), std::string::npos)
      << EnglishText(g.error().what);

  // A directory where the file should be: exists, unreadable.
  fs::remove(dir / "proc" / "pressure" / "memory");
  fs::create_directories(dir / "proc" / "pressure" / "memory");
  auto d = ReadMemoryPsi(SysRoot(dir));
  ASSERT_FALSE(d);
  EXPECT_NE(EnglishText(d.error().what).find(path), std::string::npos)
      << EnglishText(d.error().what);

  // A missing root is "no PSI" like a kernel without it: the meminfo reader reports the root.
  fs::remove_all(dir);
  auto m = ReadMemoryPsi(SysRoot(dir));
  ASSERT_TRUE(m);
  EXPECT_FALSE(*m);
}

}  // namespace
}  // namespace headroom
