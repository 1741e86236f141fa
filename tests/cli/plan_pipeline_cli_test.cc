// CLI tests of `headroom plan --sharding pipeline`: the real binary on the idle Spark fixture,
// a llama-3.1-70b LoRA split over two nodes under each schedule, and bad input.
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

const std::string kPipelineSpark = kFixtures + "gb10-idle";

// llama-3.1-70b, LoRA in bf16, seq 4096, a global batch of 8 in 8 micro-batches of 1, over
// two Sparks; the schedule given.
std::vector<std::string> PipelineSplit(const std::string& schedule) {
  return {"plan",       "llama-3.1-70b", "--method",    "lora",      "--seq",
          "4096",       "--batch",       "8",           "--devices", "2",
          "--sharding", "pipeline",      "--schedule",  schedule,    "--microbatches",
          "8",          "--root",        kPipelineSpark};
}

std::pair<int, nlohmann::json> PipelineJsonOf(std::vector<std::string> args) {
  args.push_back("--json");
  const auto r = RunCli(args);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.err, "");
  return {r.status, nlohmann::json::parse(r.out.empty() ? "{}" : r.out)};
}

TEST(PlanPipelineCli, OneFOneBOnTwoSparks) {
  auto [status, j] = PipelineJsonOf(PipelineSplit("1f1b"));
  ASSERT_EQ(status, 0) << j.dump(2);
  ASSERT_EQ(j["stages"].size(), 2U);
  const auto& a = j["stages"][0];
  const auto& b = j["stages"][1];
  EXPECT_EQ(a["layers"], 40);
  EXPECT_EQ(b["first_layer"], 40);
  EXPECT_EQ(a["embeddings"], true);
  EXPECT_EQ(b["lm_head"], true);
  // Schedule1F1B: stage s of N holds min(M, N - s): 2 on the first, 1 on the last.
  EXPECT_EQ(a["in_flight_microbatches"], 2.0);
  EXPECT_EQ(b["in_flight_microbatches"], 1.0);
  EXPECT_EQ(b["logits_in_flight"], 1);
  EXPECT_EQ(j["parallel"]["micro_batch"], 1);
  EXPECT_EQ(j["parallel"]["schedule"], "1f1b");
  // Each stage holds about half the one-device weights; both together all of them.
  auto [one_status, one] = PipelineJsonOf(
      {"plan", "llama-3.1-70b", "--method", "lora", "--seq", "4096", "--root", kPipelineSpark});
  ASSERT_EQ(one_status, 1);  // 70B in bf16 does not fit one Spark: why it is split
  const double whole = one["terms"]["weights"].get<double>();
  EXPECT_NEAR(a["weights_bytes"].get<double>() + b["weights_bytes"].get<double>(), whole, 4);
  EXPECT_LT(a["peak_bytes"].get<uint64_t>(), one["peak_bytes"].get<uint64_t>());
  const int h = j["heaviest_stage"].get<int>();
  EXPECT_GE(j["stages"][h]["peak_bytes"].get<uint64_t>(),
            j["stages"][1 - h]["peak_bytes"].get<uint64_t>());
  EXPECT_EQ(j["verdict"], j["stages"][h]["verdict"]);
}

TEST(PlanPipelineCli, GpipeHoldsEveryMicrobatchAndIsAdvised1f1b) {
  auto [status, j] = PipelineJsonOf(PipelineSplit("gpipe"));
  ASSERT_EQ(status, 1) << j.dump(2);
  EXPECT_EQ(j["verdict"], "does_not_fit");  // plan --json's spelling
  EXPECT_EQ(j["stages"][0]["in_flight_microbatches"], 8.0);
  EXPECT_EQ(j["stages"][1]["in_flight_microbatches"], 8.0);
  EXPECT_EQ(j["stages"][1]["logits_in_flight"], 8);
  EXPECT_EQ(j["heaviest_stage"], 1);  // the logits of 8 micro-batches
  ASSERT_EQ(j["advice"].size(), 1U);
  EXPECT_NE(j["advice"][0].get<std::string>().find("with 1f1b stage 2 holds 1 micro-batches "
                                                   "instead of 8: fits"),
            std::string::npos);
  // The terminal names the heaviest stage and gives the same advice.
  const auto r = RunCli(PipelineSplit("gpipe"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("heaviest: stage 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stage 1 (layers 0-39) + embeddings"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stage 2 (layers 40-79) + norm, lm_head, loss"), std::string::npos);
  EXPECT_NE(r.out.find("with 1f1b stage 2 holds 1 micro-batches instead of 8: fits"),
            std::string::npos);
}

TEST(PlanPipelineCli, InterleavedPerVirtualStage) {
  auto [status, j] = PipelineJsonOf(PipelineSplit("interleaved"));
  ASSERT_EQ(status, 0) << j.dump(2);
  // N 2, M 8, v 2: device 0 warms up 1 x 2 + 2 = 4 and holds one more: 5 halves = 2.5;
  // device 1: 2 + 1 = 3 halves = 1.5.
  EXPECT_EQ(j["stages"][0]["in_flight_microbatches"], 2.5);
  EXPECT_EQ(j["stages"][1]["in_flight_microbatches"], 1.5);
  EXPECT_EQ(j["stages"][1]["logits_in_flight"], 1);
}

TEST(PlanPipelineCli, BadInputOneLineEach) {
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<std::string> base = {"plan", "llama-3.1-70b", "--method",
                                         "lora", "--root",        kPipelineSpark};
  auto with = [&](std::vector<std::string> more) {
    auto a = base;
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  const std::vector<Case> cases = {
      {with({"--schedule", "gpipe"}), "--schedule needs --sharding pipeline"},
      {with({"--devices", "2", "--sharding", "fsdp", "--microbatches", "4"}),
       "--microbatches needs --sharding pipeline"},
      {with({"--devices", "2", "--sharding", "pipeline", "--microbatches", "0"}),
       "--microbatches: expected a whole number of at least 1, got '0'"},
      {with({"--sharding", "pipeline"}),
       "--sharding pipeline needs --devices from 2 to 1024 (one stage per device)"},
      {with({"--devices", "1", "--sharding", "pipeline"}),
       "--sharding pipeline needs --devices from 2 to 1024 (one stage per device)"},
      {with({"--devices", "2", "--sharding", "pipeline", "--batch", "6", "--microbatches", "4"}),
       "--batch 6 does not divide into 4 micro-batches"},
      {with({"--devices", "2", "--sharding", "pipeline", "--microbatches", "1"}),
       "1f1b needs at least as many micro-batches as stages (1 < 2"},
      {with({"--devices", "2", "--sharding", "pipeline", "--schedule", "zb"}),
       "--schedule: unknown schedule 'zb' (expected 1f1b|gpipe|interleaved)"},
  };
  for (const Case& c : cases) {
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    SCOPED_TRACE(joined);
    const auto r = RunCli(c.args);
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_NE(r.err.find(c.err), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

}  // namespace
}  // namespace headroom
