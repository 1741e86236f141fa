#include "sys/zoneinfo.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

// The layout of Linux 6.18's /proc/zoneinfo (abridged: the per-zone counters between the
// header and "pagesets" are cut).
constexpr const char* kZoneinfo = R"(Node 0, zone      DMA
  per-node stats
      nr_inactive_anon 1234
  pages free     3840
        count    3840
  pagesets
    cpu: 0
              count:    0
              high:     0
              batch:    1
  vm stats threshold: 6
    cpu: 1
              count:    0
              high:     0
Node 0, zone   Normal
  pages free     5043049
  pagesets
    cpu: 0
              count:    34477
              high:     47533
              batch:    63
    cpu: 1
              count:    4484
              high:     59922
  node_unreclaimable:  0
  start_pfn:           1048576
Node 0, zone  Movable
  pages free     0
)";

TEST(Zoneinfo, SumsThePerCpuListsOfEveryZone) {
  EXPECT_EQ(ParsePerCpuFreePages(kZoneinfo), std::optional<uint64_t>(34477 + 4484));
}

TEST(Zoneinfo, HostileOrForeignTextHasNoCount) {
  EXPECT_FALSE(ParsePerCpuFreePages(""));
  EXPECT_FALSE(ParsePerCpuFreePages("count: 5\n"));  // not under pagesets
  EXPECT_FALSE(ParsePerCpuFreePages("pagesets\ncount: x5\ncount: 9999999999999999999999\n"));
  EXPECT_EQ(ParsePerCpuFreePages("pagesets\ncount: 7\nNode 1, zone Normal\ncount: 5\n"),
            std::optional<uint64_t>(7));
  EXPECT_EQ(ParsePerCpuFreePages(std::string_view("pagesets\n\0count: 3\ncount: 2", 27)),
            std::optional<uint64_t>(2));
}

TEST(Zoneinfo, TheRealFileReadsWhereTheKernelHasIt) {
  PerCpuFreeReader reader(SysRoot("/"));
  if (!SysRoot("/").ReadFile("proc/zoneinfo")) GTEST_SKIP() << "no /proc/zoneinfo here";
  const auto bytes = reader.ReadBytes();
  ASSERT_TRUE(bytes);
  EXPECT_EQ(*bytes % 4096, 0u);
  PerCpuFreeReader missing(SysRoot("/nonexistent"));
  EXPECT_FALSE(missing.ReadBytes());
}

}  // namespace
}  // namespace headroom
