#include "top/collector.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "guard/guard_record.h"
#include "store/journal.h"
#include "sys/processes.h"
#include "testing_files.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const fs::path kPsBox = fs::path(testing::FixturePath("ps-box"));

// A GB10 whose compute list has the fixture's vLLM (pid 1111) with 40 GiB: a stand-in for
// NVML at the GpuBackend seam, to see the list reach the survey through the Sampler.
class ListingGb10 final : public GpuBackend {
 public:
  std::string_view backend_name() const override { return "listing"; }
  unsigned device_count() const override { return 1; }
  GpuReading ReadDevice(unsigned index) override {
    GpuReading r;
    r.index = index;
    r.name = "NVIDIA GB10";
    r.temperature_c = 50;
    r.processes = std::vector<GpuProcess>{{1111, 40ULL << 30}};
    return r;
  }
};

class NoDevice final : public GpuBackend {
 public:
  std::string_view backend_name() const override { return "none"; }
  unsigned device_count() const override { return 0; }
  GpuReading ReadDevice(unsigned) override { return {}; }
};

TEST(TopCollector, SurveysHoldersWithNvmlFiguresAndTheirCaps) {
  CollectorOptions o;
  o.journal_note = "journal: no place for it";
  TopCollector c(SysRoot(kPsBox), std::make_unique<ListingGb10>(), "", o);
  const TopSnapshot& s = c.Refresh(std::chrono::system_clock::now(), Clock::now());
  EXPECT_TRUE(s.has_gpu);
  EXPECT_EQ(s.platform.kind, PlatformKind::kGb10);
  EXPECT_EQ(s.sample.temperature_c, 50);
  EXPECT_EQ(s.guards_note, "journal: no place for it");
  ASSERT_FALSE(s.holders.empty());
  const auto vllm = std::find_if(s.holders.begin(), s.holders.end(),
                                 [](const HolderRow& r) { return r.pid == 1111; });
  ASSERT_NE(vllm, s.holders.end());
  EXPECT_EQ(vllm->gpu_bytes, 40ULL << 30);
  EXPECT_EQ(vllm->cap_fraction, 0.5);
  EXPECT_EQ(vllm->kind, "vllm");
  EXPECT_EQ(c.history().size(), 1u);
}

TEST(TopCollector, NoDeviceIsNoGpuWithAReason) {
  TopCollector c(SysRoot(kPsBox), std::make_unique<NoDevice>(), "", CollectorOptions{});
  const TopSnapshot& s = c.Refresh(std::chrono::system_clock::now(), Clock::now());
  EXPECT_FALSE(s.has_gpu);
  EXPECT_EQ(s.gpu_note, "nvml: no GPU device");
  EXPECT_TRUE(s.sample.mem_total_bytes.has_value());
}

TEST(TopCollector, HolderAndGuardChangesAreEventsOnlyAfterTheFirstRead) {
  testing::TempDir dir("top-collector");
  fs::copy(kPsBox, dir.path(), fs::copy_options::recursive);
  const fs::path journal_path = dir / "journal.db";
  auto journal = Journal::Open(journal_path);
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  CollectorOptions o;
  o.journal = journal_path;
  o.host = "spark-1";
  o.survey_period = std::chrono::seconds(5);
  o.guard_period = std::chrono::seconds(2);
  // The guard "runs" as this test process: one root serves the survey and the liveness
  // check, so our pid gets a stat file in the copy with our real start time.
  const auto self = ReadProcStat(SysRoot(fs::path("/")), ::getpid());
  ASSERT_TRUE(self);
  fs::create_directories(dir / ("proc/" + std::to_string(::getpid())));
  testing::WriteFile(dir / ("proc/" + std::to_string(::getpid()) + "/stat"),
                     fmt::format("{} (headroom) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 {} 0 0\n",
                                 ::getpid(), self->starttime_ticks));
  TopCollector c(SysRoot(dir.path()), nullptr, "nvml: not loaded", o);
  const auto t0 = Clock::now();
  const auto wall = std::chrono::system_clock::now();
  const TopSnapshot& first = c.Refresh(wall, t0);
  const size_t holders = first.holders.size();
  EXPECT_GE(holders, 3u);
  EXPECT_TRUE(first.guards.empty());
  EXPECT_EQ(first.events_total, 0u);

  // A guard starts, and llama.cpp (pid 4444) exits.
  auto id = journal->BeginRun(RunKind::kGuard, {"python", "train.py"}, wall);
  ASSERT_TRUE(id);
  ASSERT_TRUE(journal->AddEvent(
      *id, "start", 0, wall,
      GuardStartJson({::getpid(), self->starttime_ticks, "spark-1", 1ULL << 30, 2ULL << 30, ""})));
  fs::remove_all(dir / "proc/4444");
  // Before the periods are up nothing is re-read.
  EXPECT_TRUE(c.Refresh(wall, t0 + std::chrono::seconds(1)).guards.empty());
  const TopSnapshot& later = c.Refresh(wall, t0 + std::chrono::seconds(6));
  ASSERT_EQ(later.guards.size(), 1u);
  EXPECT_EQ(later.guards[0].guard_pid, ::getpid());
  EXPECT_EQ(later.guards[0].kind, "guard");
  EXPECT_EQ(later.holders.size(), holders - 1);
  std::vector<std::string> types;
  for (const auto& e : later.events) types.push_back(e.type);
  EXPECT_NE(std::find(types.begin(), types.end(), "guard_started"), types.end());
  for (const auto& e : later.events) {
    if (e.type != "guard_started") continue;
    EXPECT_EQ(EnglishText(e.message),
              fmt::format("guard run {} (pid {}): kill below 1.00 GiB, warn below 2.00 GiB", *id,
                          ::getpid()));
  }
  EXPECT_NE(std::find(types.begin(), types.end(), "pool_holder_ended"), types.end());
  EXPECT_EQ(std::find(types.begin(), types.end(), "pool_holder_started"), types.end());

  ASSERT_TRUE(journal->FinishRun(*id, "exited", 0, "{}", wall));
  const TopSnapshot& ended = c.Refresh(wall, t0 + std::chrono::seconds(9));
  EXPECT_TRUE(ended.guards.empty());
  EXPECT_EQ(ended.events.back().type, "guard_ended");
  EXPECT_EQ(c.history().size(), 4u);
}

}  // namespace
}  // namespace headroom
