// CLI tests of `headroom plan --beside` and `--serve` on the Spark fixture (gb10-idle: MemTotal
// 127,600,748 kB, MemAvailable 120,574,075 kB, no processes) and the ps-box (a vLLM running
// at --gpu-memory-utilization 0.5, pid 1111).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_cli.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::kFixtures;
using testing::RunCli;

const std::string kBesideSpark = kFixtures + "gb10-idle";
const std::string kBesideBox = kFixtures + "ps-box";
constexpr uint64_t kBesideSparkTotal = 127600748ULL * 1024;

nlohmann::json BesideJson(const std::vector<std::string>& args, int status) {
  const auto r = RunCli(args);
  EXPECT_EQ(r.status, status) << r.err << r.out;
  return r.out.empty() ? nlohmann::json() : nlohmann::json::parse(r.out, nullptr, false);
}

TEST(PlanBesideCli, SmallLoraFitsBesideVllmAtHalfAFullRunDoesNot) {
  // A LoRA of an 8B model fits beside a vLLM at 0.5.
  const auto lora =
      BesideJson({"plan", "llama-3.1-8b", "--beside", "0.5", "--json", "--root", kBesideSpark}, 0);
  ASSERT_TRUE(lora.is_object());
  EXPECT_EQ(lora["verdict"], "fits");
  ASSERT_EQ(lora["beside"].size(), 1u);
  const uint64_t half = 5000ULL * kBesideSparkTotal / 10000;
  EXPECT_EQ(lora["beside"][0]["cap_bytes"], half);
  EXPECT_EQ(lora["beside"][0]["subtracted_bytes"], half);
  EXPECT_EQ(lora["beside"][0]["running"], false);
  const uint64_t available = testing::FixtureMeminfoBytes("gb10-idle", "MemAvailable");
  // The budget: MemAvailable less the reserve, the guard's kill level (8 % of a Spark's
  // MemTotal, docs/config.md "The levels") and the server's cap.
  const uint64_t kill = kBesideSparkTotal * 8 / 100;
  EXPECT_EQ(lora["budget_bytes"], available - (4ULL << 30) - kill - half);
  // A full fine-tune of the same 8B model (a 73 GB peak) fits the idle Spark alone (a 119 GB
  // budget), not beside the server (54 GB left).
  const std::vector<std::string> full = {"plan",   "llama-3.1-8b", "--method",  "full",
                                         "--json", "--root",       kBesideSpark};
  EXPECT_EQ(BesideJson(full, 0)["verdict"], "fits");
  auto beside = full;
  beside.insert(beside.end(), {"--beside", "0.5"});
  EXPECT_EQ(BesideJson(beside, 1)["verdict"], "does_not_fit");
}

TEST(PlanBesideCli, TableSaysNotRunningYetOrAlreadyRunning) {
  const auto spark =
      RunCli({"plan", "llama-3.1-8b", "--beside", "chat:0.5", "--root", kBesideSpark});
  EXPECT_EQ(spark.status, 0) << spark.err;
  EXPECT_NE(spark.out.find("beside chat: 0.50 of the pool"), std::string::npos) << spark.out;
  EXPECT_NE(spark.out.find("not running yet: taken from the budget"), std::string::npos);
  // The ps-box's vLLM runs at 0.5: named, not counted twice.
  const auto box = RunCli({"plan", "llama-3.1-8b", "--beside", "0.5", "--root", kBesideBox});
  EXPECT_NE(box.out.find("already running (pid 1111, vllm, --gpu-memory-utilization 0.50)"),
            std::string::npos)
      << box.out << box.err;
  const auto j =
      BesideJson({"plan", "llama-3.1-8b", "--beside", "0.5", "--json", "--root", kBesideBox}, 0);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["beside"][0]["running"], true);
  EXPECT_EQ(j["beside"][0]["running_pid"], 1111);
  EXPECT_EQ(j["beside"][0]["subtracted_bytes"], 0);
  // Nothing subtracted: MemAvailable less the reserve and the kill level alone.
  const uint64_t total = j["budget"]["mem_total_bytes"].get<uint64_t>();
  const uint64_t kill = std::max<uint64_t>(4ULL << 30, total * 8 / 100);
  EXPECT_EQ(j["budget_bytes"],
            j["budget"]["mem_available_bytes"].get<uint64_t>() - (4ULL << 30) - kill);
}

TEST(PlanBesideCli, ServeFiguresForLlama8b) {
  const auto j = BesideJson({"plan", "--serve", "llama-3.1-8b", "--context", "8192",
                             "--concurrency", "4", "--json", "--root", kBesideSpark},
                            0);
  ASSERT_TRUE(j.is_object());
  const auto& s = j["serve"];
  // 2 (K, V) x 32 layers x 8 kv heads x 128 head dim x 2 bytes (bf16) = 131,072 bytes/token;
  // x 8,192 tokens x 4 requests = 4,294,967,296 bytes (4 GiB).
  EXPECT_EQ(s["kv_bytes_per_token"], 131072);
  EXPECT_EQ(s["kv_tokens"], 32768);
  EXPECT_EQ(s["kv_bytes"], 4294967296ULL);
  // 8,030,261,248 parameters x 2 bytes.
  EXPECT_EQ(s["weight_bytes"], 16060522496ULL);
  EXPECT_EQ(s["overhead_bytes"], 2147483648ULL);
  EXPECT_EQ(s["overhead_is_guess"], true);
  EXPECT_EQ(s["total_bytes"], 16060522496ULL + 4294967296ULL + 2147483648ULL);
  // 22,502,973,440 / 130,663,165,952 = 0.1722 -> 0.18.
  EXPECT_EQ(s["vllm_cap"], 0.18);
  EXPECT_EQ(j["fits"], true);
  const auto table = RunCli({"plan", "--serve", "llama-3.1-8b", "--context", "8192",
                             "--concurrency", "4", "--root", kBesideSpark});
  EXPECT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("--gpu-memory-utilization 0.18"), std::string::npos) << table.out;
  // A served plan beside a LoRA: the cap it needs comes out of the budget.
  const auto both = BesideJson({"plan", "llama-3.2-3b", "--beside", "serve:llama-3.1-8b:8192:4",
                                "--json", "--root", kBesideSpark},
                               0);
  ASSERT_TRUE(both.is_object());
  EXPECT_EQ(both["beside"][0]["cap_bytes"], 18 * kBesideSparkTotal / 100);
  EXPECT_EQ(both["beside"][0]["serve"]["vllm_cap"], 0.18);
  // A 70B server at 128k x 8 does not fit the Spark: exit 1, no cap.
  const auto big = BesideJson({"plan", "--serve", "llama-3.1-70b", "--context", "131072",
                               "--concurrency", "8", "--json", "--root", kBesideSpark},
                              1);
  ASSERT_TRUE(big.is_object());
  EXPECT_TRUE(big["serve"]["vllm_cap"].is_null());
}

TEST(PlanBesideCli, BadInputIsOneLineAndExit2) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--beside", "1.5"}, "at most 1"},
      {{"--beside", "0"}, "above 0"},
      {{"--beside", "131GB"}, "MemTotal"},
      {{"--beside", "bad name:0.5"}, "NAME"},
      {{"--beside", "half"}, "'half'"},
      {{"--beside", "serve:llama-3.1-8b:8192"}, "serve:MODEL"},
      {{"--beside", "serve:no-such-model-xyz:8192:1"}, "no-such-model-xyz"},
      {{"--serve", "llama-3.1-8b"}, "--context"},
      {{"--serve", "llama-3.1-8b", "--context", "0"}, "--context"},
      {{"--serve", "llama-3.1-8b", "--context", "8", "--concurrency", "x"}, "--concurrency"},
      {{"--serve", "llama-3.1-8b", "--context", "8", "--engine", "tgi"}, "--engine"},
      {{"--serve", "llama-3.1-8b", "--context", "8", "--dtype", "q4"}, "--dtype"},
      {{"--context", "8192"}, "--serve"},
  };
  for (const auto& [flags, says] : cases) {
    std::vector<std::string> args = {"plan", "llama-3.1-8b", "--root", kBesideSpark};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = RunCli(args);
    EXPECT_EQ(r.status, 2) << flags.back() << ": " << r.out;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind("headroom: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace
}  // namespace headroom
