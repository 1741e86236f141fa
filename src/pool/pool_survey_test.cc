// SurveyPool and PoolSurveyToJson on the ps-box fixture (tests/fixtures/README.md) with
// NVML's list given at the GpuBackend seam: the holders, their caps, the advice beside a
// job and the document ps --json prints (docs/ps.md). The command itself is in
// tests/cli/ps_cli_test.cc.
#include "pool/pool_survey.h"

#include <gtest/gtest.h>

#include <string>

#include "testing_files.h"

namespace headroom {
namespace {

const SysRoot kPsBox(testing::FixturePath("ps-box"));
constexpr uint64_t kMemTotal = 127600748ULL * 1024;

// Device 0 lists the fixture's vLLM (pid 1111) with 40 GiB; device 1's list is unreadable.
class TwoDevices final : public GpuBackend {
 public:
  std::string_view backend_name() const override { return "two"; }
  unsigned device_count() const override { return 2; }
  GpuReading ReadDevice(unsigned index) override {
    GpuReading r;
    r.index = index;
    if (index == 0) r.processes = std::vector<GpuProcess>{{1111, 40ULL << 30}};
    return r;
  }
};

TEST(PoolSurvey, GpuListsAreJoinedAndAnUnreadableOneIsNoted) {
  TwoDevices gpu;
  const GpuProcessList list = ReadGpuProcesses(gpu);
  ASSERT_TRUE(list.processes);
  ASSERT_EQ(list.processes->size(), 1u);
  EXPECT_EQ((*list.processes)[0].pid, 1111u);
  EXPECT_EQ(EnglishText(list.note), "nvml: device 1: process list not readable");
}

TEST(PoolSurvey, NvmlThatDoesNotLoadIsANote) {
  const GpuProcessList list = ReadGpuProcesses("/nonexistent/libnvidia-ml.so.1");
  EXPECT_FALSE(list.processes);
  EXPECT_FALSE(list.note.empty());
}

TEST(PoolSurvey, HoldersCapsAndAdviceInTheJson) {
  TwoDevices gpu;
  const PoolSurvey s = SurveyPool(kPsBox, ReadGpuProcesses(gpu), 0, kMemTotal, 4ULL << 30);
  ASSERT_GE(s.holders.size(), 4u);
  ASSERT_EQ(s.caps.size(), s.holders.size());
  ASSERT_TRUE(s.advice);
  EXPECT_FALSE(s.advice->fits);
  EXPECT_EQ(s.holders[1].part_of, 1111);
  EXPECT_FALSE(s.caps[1].pool_fraction);  // a worker's cap is its server's

  const auto j = PoolSurveyToJson(s);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["mem_total_bytes"], kMemTotal);
  EXPECT_EQ(j["gpu"]["nvml"], true);
  EXPECT_EQ(j["gpu"]["note"], "nvml: device 1: process list not readable");
  EXPECT_EQ(j["need"]["need_bytes"], 4ULL << 30);
  EXPECT_EQ(j["need"]["fits"], false);
  const auto& vllm = j["processes"][0];
  EXPECT_EQ(vllm["pid"], 1111);
  EXPECT_EQ(vllm["kind"], "vllm");
  EXPECT_EQ(vllm["gpu_bytes"], 40ULL << 30);
  EXPECT_EQ(vllm["cap"]["fraction"], 0.5);
  EXPECT_EQ(vllm["advice"]["action"], "keep");
  EXPECT_EQ(j["processes"][1]["advice"]["action"], "part-of");
  EXPECT_EQ(j["processes"][3]["advice"]["stop_command"], "systemctl stop ollama");
}

TEST(PoolSurvey, WithoutANeedThereIsNoAdvice) {
  const PoolSurvey s = SurveyPool(kPsBox, GpuProcessList{}, 0, std::nullopt, 4ULL << 30);
  EXPECT_FALSE(s.advice);  // MemTotal unknown
  const auto j = PoolSurveyToJson(s);
  EXPECT_TRUE(j["mem_total_bytes"].is_null());
  EXPECT_TRUE(j["need"].is_null());
  EXPECT_EQ(j["gpu"]["nvml"], false);
  EXPECT_TRUE(j["gpu"]["note"].is_null());
  EXPECT_FALSE(j["processes"][0].contains("advice"));
}

}  // namespace
}  // namespace headroom
