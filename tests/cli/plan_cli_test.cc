// CLI tests of `headroom plan`: the real binary, a table of {args, exit status, output
// contains}, against fixture trees (tests/fixtures/) and temporary files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_cli.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::RunCli;

const std::string kFixtures = testing::FixturePath("");
const std::string kIdle = kFixtures + "gb10-idle";

struct Case {
  std::vector<std::string> args;
  int status;
  std::string out_contains;  // "" = not checked
  std::string err_contains;
};

std::filesystem::path TempFile(const std::string& name, const std::string& text) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("headroom-cli-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto p = dir / name;
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

class PlanCli : public ::testing::Test {
 protected:
  static void TearDownTestSuite() {
    std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                ("headroom-cli-" + std::to_string(getpid())));
  }
};

TEST_F(PlanCli, Table) {
  const std::string not_json = TempFile("not-json.json", "{\"hidden_size\": 4096,").string();
  const std::string lacks_key = TempFile("lacks.json", "{\"model_type\": \"llama\"}").string();
  const std::vector<Case> cases = {
      {{"plan", "llama-3.1-70b", "--method", "qlora", "--root", kIdle}, 0, "verdict: fits", ""},
      {{"plan", "Llama_3.1_70B-Instruct", "--method", "qlora", "--root", kIdle},
       0,
       "llama-3.1-70b",
       ""},
      {{"plan", "llama-3.1-70b", "--method", "full", "--root", kIdle}, 1, "does not fit", ""},
      {{"plan", "llama-3.1-70b", "--method", "full", "--root", kIdle},
       1,
       "advice, in the OOM ladder's order",
       ""},
      {{"plan", "llama-3.1-7b", "--root", kIdle}, 2, "", "unknown model 'llama-3.1-7b' (closest: "},
      {{"plan", "llama-3.1-7b", "--root", kIdle}, 2, "", "llama-3.1-8b"},
      {{"plan", "--root", kIdle}, 2, "", "no model"},
      {{"plan", "llama-3.1-8b", "--batch", "0", "--root", kIdle},
       2,
       "",
       "--batch: '0' must be at least 1"},
      {{"plan", "llama-3.1-8b", "--batch=-4", "--root", kIdle}, 2, "", "--batch"},
      {{"plan", "llama-3.1-8b", "--seq", "abc", "--root", kIdle},
       2,
       "",
       "--seq: 'abc' is not a whole number"},
      {{"plan", "llama-3.1-8b", "--seq", "99999999999", "--root", kIdle}, 2, "", "--seq"},
      {{"plan", "llama-3.1-8b", "--lora-rank", "0", "--root", kIdle}, 2, "", "--lora-rank"},
      {{"plan", "llama-3.1-8b", "--method", "full", "--weight-dtype", "nf4", "--root", kIdle},
       2,
       "",
       "conflicting flags"},
      {{"plan", "llama-3.1-8b", "--method", "full", "--lora-rank", "8", "--root", kIdle},
       2,
       "",
       "conflicting flags"},
      {{"plan", "llama-3.1-8b", "--rollout-fraction", "0.5", "--root", kIdle},
       2,
       "",
       "--workload grpo"},
      {{"plan", "llama-3.1-8b", "--workload", "grpo", "--rollout-fraction", "1.5", "--root", kIdle},
       2,
       "",
       "--rollout-fraction"},
      {{"plan", "llama-3.1-8b", "--method", "bogus", "--root", kIdle},
       2,
       "",
       "unknown method 'bogus'"},
      {{"plan", "llama-3.1-8b", "--lora-targets", "q,zz", "--root", kIdle},
       2,
       "",
       "unknown LoRA target 'zz'"},
      {{"plan", "llama-3.1-8b", "--params", "8B", "--root", kIdle}, 2, "", "conflicting flags"},
      {{"plan", "--hidden", "4096", "llama-3.1-8b", "--root", kIdle}, 2, "", "go with --params"},
      {{"plan", "--params", "0", "--root", kIdle}, 2, "", "--params"},
      {{"plan", "--params", "-8B", "--root", kIdle}, 2, "", ""},
      {{"plan", "--params", "8B", "--root", kIdle}, 0, "custom 8.00B", ""},
      {{"plan", "--params", "8B", "--root", kIdle}, 0, "taken from", ""},
      {{"plan", "--config", "/nonexistent/headroom/model", "--root", kIdle},
       2,
       "",
       "/nonexistent/headroom/model"},
      {{"plan", "--config", not_json, "--root", kIdle}, 2, "", "not-json.json"},
      {{"plan", "--config", lacks_key, "--root", kIdle}, 2, "", "hidden_size"},
      {{"plan", "llama-3.1-8b", "--root", "/nonexistent-root"},
       2,
       "",
       "/nonexistent-root/proc/meminfo"},
      {{"plan", "llama-3.1-8b", "--budget", "0"}, 2, "", "--budget: '0' is zero"},
      {{"plan", "llama-3.1-8b", "--budget", "lots"}, 2, "", "--budget"},
      {{"plan", "llama-3.1-8b", "--budget", "24GiB", "--reserve", "1G"},
       2,
       "",
       "conflicting flags"},
      {{"plan", "llama-3.1-8b", "--budget", "24GiB", "--root", "/nonexistent-root"},
       0,
       "25.77 GB",
       ""},
      {{"plan", "llama-3.1-8b", "--frobnicate"}, 2, "", "frobnicate"},
      {{"plan", "--help"}, 0, "--rollout-fraction", ""},
      {{"plan", "--list-models"}, 0, "gpt-oss-120b", ""},
      {{"plan", "qwen3-8b", "--root", kFixtures + "old-kernel"}, -1, "estimated", ""},
      {{"plan", "qwen3-8b", "--root", kFixtures + "gb10-pagecache"},
       0,
       "page cache (reclaimable)",
       ""},
      {{"nosuch"}, 2, "", "unknown command 'nosuch'"},
      {{"--help"}, 0, "plan", ""},
  };
  for (const Case& c : cases) {
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    SCOPED_TRACE(joined);
    const auto r = RunCli(c.args);
    ASSERT_FALSE(r.timed_out);
    if (c.status >= 0) {
      EXPECT_EQ(r.status, c.status) << r.out << r.err;
    } else {
      EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
    }
    if (!c.out_contains.empty()) {
      EXPECT_NE(r.out.find(c.out_contains), std::string::npos) << r.out;
    }
    if (!c.err_contains.empty()) {
      EXPECT_NE(r.err.find(c.err_contains), std::string::npos) << r.err;
    }
    if (c.status == 2) {
      // One line, prefixed, nothing on stdout.
      EXPECT_EQ(r.err.rfind("headroom: ", 0), 0u) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;
    }
  }
}

// Reads a meminfo field from a fixture tree, in bytes.
uint64_t FixtureField(const std::string& tree, const std::string& key) {
  std::ifstream in(kFixtures + tree + "/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::stoull(line.substr(key.size() + 1)) * 1024;
  }
  return 0;
}

TEST_F(PlanCli, JsonSchemaAndBudgetFromFixture) {
  const auto r = RunCli({"plan", "llama-3.1-70b", "--method", "qlora", "--json", "--root", kIdle});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 1);
  for (const char* k : {"weights", "gradients", "optimizer", "activations", "overhead"}) {
    EXPECT_TRUE(j["terms"][k].is_number_unsigned()) << k;
  }
  for (const char* k :
       {"tensor_peak_bytes", "steady_peak_bytes", "load_peak_bytes", "budget_bytes"}) {
    EXPECT_TRUE(j[k].is_number_unsigned()) << k;
  }
  EXPECT_EQ(j["verdict"], "fits");
  EXPECT_TRUE(j["anchor"].is_object());
  EXPECT_EQ(j["anchor"]["id"], "70b-qlora");
  EXPECT_TRUE(j["advice"].is_array());
  // Budget = MemAvailable - 4 GiB, exactly, from the fixture's kB figure.
  const uint64_t available = FixtureField("gb10-idle", "MemAvailable");
  ASSERT_GT(available, 0u);
  EXPECT_EQ(j["budget"]["mem_available_bytes"], available);
  EXPECT_EQ(j["budget_bytes"], available - (4ULL << 30));
  EXPECT_EQ(j["budget"]["mem_total_bytes"], 127600748ULL * 1024);
  // The steady peak is the tensor peak plus the overhead.
  EXPECT_EQ(j["steady_peak_bytes"].get<uint64_t>(),
            j["tensor_peak_bytes"].get<uint64_t>() + j["terms"]["overhead"].get<uint64_t>());
}

TEST_F(PlanCli, TightVerdictAndAdvice) {
  // A budget 5 % above the peak is tight (exit 0); 10 % below does not fit (exit 1), and
  // the advised --seq does fit when planned. Llama-3.2-1B LoRA at batch 8 x 2048: the
  // logits dominate, so a shorter packing helps.
  const std::vector<std::string> model = {"plan", "llama-3.2-1b", "--batch", "8", "--json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = model;
    args.insert(args.end(), extra.begin(), extra.end());
    return RunCli(args);
  };
  const auto base = with({"--budget", "1T"});
  ASSERT_EQ(base.status, 0) << base.err;
  const uint64_t peak = nlohmann::json::parse(base.out)["peak_bytes"];
  const auto tight = with({"--budget", std::to_string(peak * 105 / 100)});
  EXPECT_EQ(tight.status, 0);
  EXPECT_EQ(nlohmann::json::parse(tight.out)["verdict"], "tight");
  const std::string small = std::to_string(peak * 90 / 100);
  const auto over = with({"--budget", small});
  EXPECT_EQ(over.status, 1);
  const auto j = nlohmann::json::parse(over.out);
  EXPECT_EQ(j["verdict"], "does_not_fit");
  ASSERT_FALSE(j["advice"].empty());
  EXPECT_EQ(j["advice"][0]["step"], "seq");
  const int64_t seq = j["advice"][0]["value"];
  EXPECT_LT(seq, 2048);
  const auto check = with({"--budget", small, "--seq", std::to_string(seq)});
  EXPECT_EQ(check.status, 0);
  EXPECT_EQ(nlohmann::json::parse(check.out)["verdict"], "fits");
  const auto longer = with({"--budget", small, "--seq", std::to_string(seq + 1)});
  EXPECT_NE(nlohmann::json::parse(longer.out)["verdict"], "fits");
  // The second rung: the largest batch at the original --seq.
  ASSERT_GE(j["advice"].size(), 2u);
  EXPECT_EQ(j["advice"][1]["step"], "batch");
  const int64_t batch = j["advice"][1]["value"];
  const auto smaller = RunCli(
      {"plan", "llama-3.2-1b", "--json", "--budget", small, "--batch", std::to_string(batch)});
  EXPECT_EQ(nlohmann::json::parse(smaller.out)["verdict"], "fits");
  EXPECT_LT(batch, 8);
}

TEST_F(PlanCli, ListModelsJsonHasTheCatalog) {
  const auto r = RunCli({"plan", "--list-models", "--json"});
  ASSERT_EQ(r.status, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GE(j["models"].size(), 30u);
}

}  // namespace
}  // namespace headroom
