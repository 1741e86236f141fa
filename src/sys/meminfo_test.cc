#include "sys/meminfo.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string>

#include "base/bytes.h"
#include "testing_files.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;

// The fixture trees of tests/fixtures/ (numbers in tests/fixtures/README.md).

// Literal text as fs/proc/meminfo.c prints it on an x86_64 6.x kernel (this build machine,
// abridged): 16-column keys, values right-aligned in 8, HugePages_* counts without a unit.
constexpr std::string_view kX86Text =
    "MemTotal:       24683620 kB\n"
    "MemFree:        24439472 kB\n"
    "MemAvailable:   24394412 kB\n"
    "Buffers:            1312 kB\n"
    "Cached:           139460 kB\n"
    "SwapCached:            0 kB\n"
    "Active(file):      65244 kB\n"
    "Inactive(file):    66576 kB\n"
    "SwapTotal:             0 kB\n"
    "SwapFree:              0 kB\n"
    "Shmem:              8952 kB\n"
    "SReclaimable:      16864 kB\n"
    "VmallocTotal:   34359738367 kB\n"
    "HugePages_Total:       0\n"
    "HugePages_Free:        0\n"
    "HugePages_Rsvd:        0\n"
    "HugePages_Surp:        0\n"
    "Hugepagesize:       2048 kB\n"
    "DirectMap2M:    25137152 kB\n";

TEST(MemInfoParse, KernelTextToBytes) {
  const MemInfo m = ParseMemInfo(kX86Text);
  EXPECT_EQ(m.total_bytes(), 24683620ULL * kKiB);
  EXPECT_EQ(m.free_bytes(), 24439472ULL * kKiB);
  EXPECT_EQ(m.available_bytes(), 24394412ULL * kKiB);
  EXPECT_EQ(m.buffers_bytes(), 1312ULL * kKiB);
  EXPECT_EQ(m.cached_bytes(), 139460ULL * kKiB);
  EXPECT_EQ(m.sreclaimable_bytes(), 16864ULL * kKiB);
  EXPECT_EQ(m.swap_total_bytes(), 0u);  // present and zero: no swap, not "unknown"
  EXPECT_EQ(m.swap_free_bytes(), 0u);
  EXPECT_EQ(m.Get("VmallocTotal"), 34359738367ULL * kKiB);
  EXPECT_EQ(m.Get("DirectMap2M"), 25137152ULL * kKiB);  // unknown to the code, still kept
  EXPECT_EQ(m.malformed_lines(), 0u);
  EXPECT_EQ(m.duplicate_lines(), 0u);
}

TEST(MemInfoParse, HugePagesAreCountsNotBytes) {
  const MemInfo m = ParseMemInfo(
      "HugePages_Total:     512\nHugePages_Free:      500\nHugepagesize:    1048576 kB\n");
  EXPECT_EQ(m.Get("HugePages_Total"), 512u);
  EXPECT_EQ(m.Get("HugePages_Free"), 500u);
  EXPECT_FALSE(m.fields().at("HugePages_Total").in_bytes);
  EXPECT_EQ(m.Get("Hugepagesize"), kGiB);
  EXPECT_TRUE(m.fields().at("Hugepagesize").in_bytes);
}

TEST(MemInfoParse, OrderDoesNotMatter) {
  const MemInfo a = ParseMemInfo("MemTotal: 100 kB\nMemFree: 40 kB\nCached: 20 kB\n");
  const MemInfo b = ParseMemInfo("Cached: 20 kB\nMemFree: 40 kB\nMemTotal: 100 kB\n");
  EXPECT_EQ(a.total_bytes(), b.total_bytes());
  EXPECT_EQ(a.free_bytes(), b.free_bytes());
  EXPECT_EQ(a.cached_bytes(), b.cached_bytes());
}

TEST(MemInfoParse, MissingFieldIsNulloptNotZero) {
  const MemInfo m = ParseMemInfo("MemTotal: 100 kB\n");
  EXPECT_FALSE(m.available_bytes());
  EXPECT_FALSE(m.cached_bytes());
  EXPECT_FALSE(m.reclaimable_page_cache_bytes());
  EXPECT_FALSE(m.EstimatedAvailable());  // neither MemAvailable nor MemFree
  EXPECT_FALSE(m.Get("memtotal"));       // keys are case-sensitive, as the kernel prints them
}

TEST(MemInfoParse, ReclaimableSubtractsShmem) {
  // 1000 cached, of which 300 is tmpfs/shm that cannot be dropped.
  const MemInfo m =
      ParseMemInfo("Cached: 1000 kB\nBuffers: 10 kB\nSReclaimable: 90 kB\nShmem: 300 kB\n");
  EXPECT_EQ(m.reclaimable_page_cache_bytes(), (1000 + 10 + 90 - 300) * kKiB);
  // Shmem larger than the rest (a hostile file) saturates at 0 instead of wrapping.
  EXPECT_EQ(ParseMemInfo("Cached: 1 kB\nShmem: 5 kB\n").reclaimable_page_cache_bytes(), 0u);
}

TEST(MemInfoParse, EstimatedAvailablePrefersKernel) {
  const MemInfo m = ParseMemInfo(kX86Text);
  const auto e = m.EstimatedAvailable();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->bytes, 24394412ULL * kKiB);
  EXPECT_EQ(e->source, "MemAvailable");
}

TEST(MemInfoParse, EstimatedAvailableWithoutMemAvailable) {
  const MemInfo m = ParseMemInfo(
      "MemTotal: 1000 kB\nMemFree: 100 kB\nActive(file): 200 kB\nInactive(file): 300 kB\n"
      "SReclaimable: 50 kB\n");
  const auto e = m.EstimatedAvailable();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->bytes, 650 * kKiB);
  EXPECT_EQ(e->source, kMemAvailableSourceEstimated);
  EXPECT_NE(e->source.find("estimated"), std::string_view::npos);
  // Capped at MemTotal when a corrupt file claims more.
  const MemInfo big = ParseMemInfo("MemTotal: 10 kB\nMemFree: 8 kB\nInactive(file): 8 kB\n");
  EXPECT_EQ(big.EstimatedAvailable()->bytes, 10 * kKiB);
}

TEST(MemInfoFast, AgreesWithFullParser) {
  EXPECT_EQ(ParseMemAvailableFast(kX86Text), 24394412ULL * kKiB);
  for (std::string_view text :
       {std::string_view("MemTotal: 1 kB\n"), std::string_view(""),
        std::string_view("XMemAvailable: 5 kB\n"), std::string_view("MemAvailable: x kB\n"),
        std::string_view("MemAvailable: x\nMemAvailable: 7 kB\n"),
        std::string_view("MemAvailable: 3 kB\nMemAvailable: 7 kB"),
        std::string_view("MemAvailable:   42 kB\r\n"), std::string_view("MemAvailable: 42"),
        std::string_view(" MemAvailable: 42 kB\n")}) {
    EXPECT_EQ(ParseMemAvailableFast(text), ParseMemInfo(text).available_bytes()) << text;
  }
  EXPECT_EQ(ParseMemAvailableFast("MemAvailable: 3 kB\nMemAvailable: 7 kB"), 3 * kKiB);
}

// The fixture trees, read through SysRoot.

TEST(MemInfoFixture, Gb10Idle) {
  auto m = ReadMemInfo(testing::FixtureRoot("gb10-idle"));
  ASSERT_TRUE(m) << EnglishText(m.error().what);
  EXPECT_EQ(m->total_bytes(), 127600748ULL * kKiB);
  EXPECT_EQ(m->available_bytes(), 120574075ULL * kKiB);  // 114.99 GiB
  EXPECT_EQ(m->free_bytes(), 117598212ULL * kKiB);
  EXPECT_EQ(m->cached_bytes(), 3284512ULL * kKiB);
  EXPECT_EQ(m->buffers_bytes(), 112340ULL * kKiB);
  EXPECT_EQ(m->sreclaimable_bytes(), 412356ULL * kKiB);
  EXPECT_EQ(m->swap_total_bytes(), 15624996ULL * kKiB);
  EXPECT_EQ(m->swap_free_bytes(), 15624996ULL * kKiB);
  EXPECT_EQ(m->reclaimable_page_cache_bytes(), 3621812ULL * kKiB);
  EXPECT_EQ(m->Get("HugePages_Total"), 0u);
  EXPECT_EQ(m->Get("CmaTotal"), 65536ULL * kKiB);
  EXPECT_EQ(m->fields().size(), 53u);
  EXPECT_EQ(m->malformed_lines(), 0u);
  EXPECT_EQ(m->EstimatedAvailable()->source, "MemAvailable");
}

TEST(MemInfoFixture, Gb10PageCacheIsStillAvailable) {
  auto idle = ReadMemInfo(testing::FixtureRoot("gb10-idle"));
  auto m = ReadMemInfo(testing::FixtureRoot("gb10-pagecache"));
  ASSERT_TRUE(idle && m);
  EXPECT_EQ(m->total_bytes(), 127600748ULL * kKiB);
  EXPECT_EQ(m->cached_bytes(), 45227552ULL * kKiB);  // idle + 40 GiB
  EXPECT_EQ(*m->cached_bytes() - *idle->cached_bytes(), 40 * kGiB);
  EXPECT_EQ(m->free_bytes(), 75591684ULL * kKiB);
  EXPECT_EQ(m->available_bytes(), 120572027ULL * kKiB);
  EXPECT_EQ(m->reclaimable_page_cache_bytes(), 45626292ULL * kKiB);
  // The point of the tree: 40 GiB of page cache costs MemFree, not MemAvailable (2 MiB of
  // new unreclaimable slab is the whole difference).
  EXPECT_EQ(*idle->available_bytes() - *m->available_bytes(), 2048 * kKiB);
  EXPECT_GT(*idle->free_bytes() - *m->free_bytes(), 40 * kGiB);
}

TEST(MemInfoFixture, Gb10Pressure) {
  auto m = ReadMemInfo(testing::FixtureRoot("gb10-pressure"));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->total_bytes(), 127600748ULL * kKiB);
  EXPECT_EQ(m->available_bytes(), 6287598ULL * kKiB);  // 6.00 GiB
  EXPECT_EQ(m->free_bytes(), 412736ULL * kKiB);
  EXPECT_EQ(m->cached_bytes(), 6398208ULL * kKiB);
  EXPECT_EQ(m->swap_free_bytes(), 2301184ULL * kKiB);
  EXPECT_EQ(m->reclaimable_page_cache_bytes(), 6464764ULL * kKiB);
}

TEST(MemInfoFixture, OldKernelEstimatesAvailable) {
  auto m = ReadMemInfo(testing::FixtureRoot("old-kernel"));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->total_bytes(), 16330372ULL * kKiB);
  EXPECT_FALSE(m->available_bytes());
  EXPECT_FALSE(m->Get("KReclaimable"));
  EXPECT_EQ(m->cached_bytes(), 4876312ULL * kKiB);
  EXPECT_EQ(m->reclaimable_page_cache_bytes(), 5480852ULL * kKiB);
  const auto e = m->EstimatedAvailable();
  ASSERT_TRUE(e);
  // MemFree 9412660 + Active(file) 2815680 + Inactive(file) 2234152 + SReclaimable 431020.
  EXPECT_EQ(e->bytes, 14893512ULL * kKiB);
  EXPECT_EQ(e->source, kMemAvailableSourceEstimated);
  auto text = testing::FixtureRoot("old-kernel").ReadFile("proc/meminfo");
  ASSERT_TRUE(text);
  EXPECT_EQ(ParseMemAvailableFast(*text), std::nullopt);
}

TEST(MemInfoFixture, EstimateOvershootsKernelByTheWatermarks) {
  // gb10-idle with MemAvailable taken out: the estimate omits totalreserve_pages (300383 kB)
  // and the low watermark (172783 kB) subtracted twice, as the header says.
  auto idle = ReadMemInfo(testing::FixtureRoot("gb10-idle"));
  ASSERT_TRUE(idle);
  std::string text;
  for (const auto& [key, field] : idle->fields()) {
    if (key == "MemAvailable") continue;
    text += key + ": " + std::to_string(field.in_bytes ? field.value / kKiB : field.value) +
            (field.in_bytes ? " kB\n" : "\n");
  }
  const auto e = ParseMemInfo(text).EstimatedAvailable();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->bytes - *idle->available_bytes(), (300383 + 2 * 172783) * kKiB);
}

TEST(MemInfoFixture, Hostile) {
  auto m = ReadMemInfo(testing::FixtureRoot("hostile"));
  ASSERT_TRUE(m) << EnglishText(m.error().what);
  EXPECT_EQ(m->total_bytes(), 127600748ULL * kKiB);      // the duplicate "1 kB" loses
  EXPECT_EQ(m->free_bytes(), 117598212ULL * kKiB);       // the colon-less line skipped
  EXPECT_EQ(m->available_bytes(), 120574075ULL * kKiB);  // CRLF stripped
  EXPECT_EQ(m->cached_bytes(), 3284512ULL * kKiB);       // after a non-numeric Cached
  EXPECT_FALSE(m->Get("Committed_AS"));                  // negative
  EXPECT_FALSE(m->swap_total_bytes());                   // 2^64
  EXPECT_FALSE(m->swap_free_bytes());                    // 2^54 kB overflows as bytes
  EXPECT_FALSE(m->Get("Shmem"));                         // "MB" is not a meminfo unit
  EXPECT_FALSE(m->Get("Dirty"));                         // trailing garbage
  EXPECT_FALSE(m->Get("Mapped"));                        // "+5"
  EXPECT_EQ(m->Get("Active(file)"), 1436120ULL * kKiB);  // tab separator
  EXPECT_EQ(m->Get("Future_Field"), 4096ULL * kKiB);     // unknown key kept
  EXPECT_EQ(m->Get("HugePages_Total"), 4u);
  EXPECT_EQ(m->Get("Hugepagesize"), 2048ULL * kKiB);  // last line, no newline
  EXPECT_EQ(m->malformed_lines(), 11u);
  EXPECT_EQ(m->duplicate_lines(), 1u);
  EXPECT_EQ(m->reclaimable_page_cache_bytes(), (3284512ULL + 112340 + 412356) * kKiB);
  for (const auto& [key, field] : m->fields()) EXPECT_LE(key.size(), 64u);
  auto text = testing::FixtureRoot("hostile").ReadFile("proc/meminfo");
  ASSERT_TRUE(text);
  EXPECT_EQ(ParseMemAvailableFast(*text), m->available_bytes());
}

TEST(MemInfoParse, HostileLiterals) {
  // None of these may crash; each yields no field, or the noted one.
  for (std::string_view text :
       {std::string_view(""), std::string_view("\n\n\n"), std::string_view(":"),
        std::string_view("::::"), std::string_view("MemTotal:"), std::string_view("MemTotal: kB"),
        std::string_view("MemTotal: 99999999999999999999999 kB"),
        std::string_view("MemTotal: 0x10 kB"), std::string_view("MemTotal: 1e3 kB"),
        std::string_view("MemTotal: 1 kB kB"), std::string_view("\0\0\0", 3),
        std::string_view("MemTotal\0: 1 kB", 15), std::string_view("\xff\xfe: 1 kB")}) {
    const MemInfo m = ParseMemInfo(text);
    EXPECT_FALSE(m.total_bytes()) << text;
    EXPECT_TRUE(m.fields().empty()) << text;
  }
  EXPECT_EQ(ParseMemInfo("MemTotal: 18014398509481983 kB").total_bytes(),
            18014398509481983ULL * kKiB);  // the largest kB value that fits in uint64 bytes
  EXPECT_EQ(ParseMemInfo("HugePages_Total: 18446744073709551615").Get("HugePages_Total"),
            18446744073709551615ULL);  // a count may use the full range
}

TEST(MemInfoRead, ThisMachine) {
  // The real file, through the same code (the root is chosen here, as main does).
  auto m = ReadMemInfo(SysRoot("/"));
  ASSERT_TRUE(m) << EnglishText(m.error().what);
  ASSERT_TRUE(m->total_bytes());
  EXPECT_GT(*m->total_bytes(), 0u);
  const auto e = m->EstimatedAvailable();
  ASSERT_TRUE(e);
  EXPECT_LE(e->bytes, *m->total_bytes());
  EXPECT_EQ(m->malformed_lines(), 0u);
}

TEST(MemInfoRead, ErrorsNameThePath) {
  const SysRoot missing("/nonexistent-headroom-root");
  auto r = ReadMemInfo(missing);
  ASSERT_FALSE(r);
  EXPECT_NE(EnglishText(r.error().what).find("/nonexistent-headroom-root/proc/meminfo"),
            std::string::npos)
      << EnglishText(r.error().what);
  EXPECT_EQ(r.error().errno_value, ENOENT);

  const testing::TempDir tmp("meminfo-dir");
  const fs::path dir = tmp.path();
  fs::create_directories(dir / "proc" / "meminfo");  // a directory where the file should be
  auto d = ReadMemInfo(SysRoot(dir));
  ASSERT_FALSE(d);
  EXPECT_NE(EnglishText(d.error().what).find((dir / "proc" / "meminfo").string()),
            std::string::npos)
      << EnglishText(d.error().what);
  EXPECT_EQ(EnglishText(d.error().what).find('\n'), std::string::npos);

  fs::remove_all(dir / "proc" / "meminfo");
  {
    FILE* f = std::fopen((dir / "proc" / "meminfo").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("not a meminfo file\n", f);
    std::fclose(f);
  }
  auto g = ReadMemInfo(SysRoot(dir));
  ASSERT_FALSE(g);
  EXPECT_NE(EnglishText(g.error().what).find("MemTotal"), std::string::npos)
      << EnglishText(g.error().what);
  EXPECT_NE(EnglishText(g.error().what).find((dir / "proc" / "meminfo").string()),
            std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace headroom
