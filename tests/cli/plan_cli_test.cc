// CLI tests of `headroom plan`: the real binary, a table of {args, exit status, output
// contains}, against fixture trees (tests/fixtures/) and temporary files.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_cli.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::kFixtures;
using testing::RunCli;

const std::string kIdle = kFixtures + "gb10-idle";

struct PlanCase {
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
  const std::vector<PlanCase> cases = {
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
  for (const PlanCase& c : cases) {
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
  // Budget = MemAvailable - 4 GiB - the kill level (8 % of MemTotal), exactly, from the
  // fixture's kB figures.
  const uint64_t available = testing::FixtureMeminfoBytes("gb10-idle", "MemAvailable");
  ASSERT_GT(available, 0u);
  EXPECT_EQ(j["budget"]["mem_available_bytes"], available);
  EXPECT_EQ(j["budget_bytes"], available - (4ULL << 30) - 127600748ULL * 1024 * 8 / 100);
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

// --framework: the profile's defaults change the plan; explicit flags override them; an
// unknown name is a one-line usage error listing the names.
TEST_F(PlanCli, FrameworkProfiles) {
  auto plan = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"plan",   "llama-3.1-70b", "--method", "qlora",
                                     "--json", "--root",        kIdle};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = RunCli(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  };
  const auto hf = plan({});
  const auto unsloth = plan({"--framework", "unsloth"});
  ASSERT_TRUE(hf.is_object());
  ASSERT_TRUE(unsloth.is_object());
  EXPECT_EQ(hf["framework"]["name"], "hf");
  EXPECT_EQ(unsloth["framework"]["name"], "unsloth");
  EXPECT_EQ(unsloth["workload"]["optimizer"], "adamw-8bit");
  EXPECT_EQ(unsloth["workload"]["loss"], "fused");
  EXPECT_EQ(unsloth["workload"]["offload_checkpoints"], true);
  EXPECT_LT(unsloth["steady_peak_bytes"].get<uint64_t>(), hf["steady_peak_bytes"].get<uint64_t>());
  // The same stack with hf's choices given as flags plans hf's tensors; what no flag names
  // stays the profile's: Unsloth's expandable segments leave less allocator slack.
  const auto overridden =
      plan({"--framework", "unsloth", "--optimizer", "adamw", "--loss", "standard", "--grad-ckpt",
            "on", "--lora-dropout", "0.05", "--optimizer-step", "fused"});
  EXPECT_EQ(overridden["workload"]["optimizer"], "adamw");
  EXPECT_EQ(overridden["workload"]["offload_checkpoints"], false);
  EXPECT_EQ(overridden["tensor_peak_bytes"], hf["tensor_peak_bytes"]);
  EXPECT_EQ(overridden["framework"]["roundup_power2_divisions"], 32);
  EXPECT_LT(overridden["terms"]["allocator_slack"].get<uint64_t>() * 4,
            hf["terms"]["allocator_slack"].get<uint64_t>());
  // On a discrete GPU the offloaded checkpoints are host memory, on their own line.
  const auto discrete = plan({"--framework", "unsloth", "--platform", "discrete"});
  EXPECT_EQ(discrete["platform"], "discrete");
  EXPECT_GT(discrete["terms"]["host_offload"].get<uint64_t>(), 0u);
  EXPECT_EQ(unsloth["terms"]["host_offload"], 0u);
  EXPECT_LT(discrete["tensor_peak_bytes"].get<uint64_t>(),
            unsloth["tensor_peak_bytes"].get<uint64_t>());
  // The anchor (Unsloth's 70B notebook) is planned as unsloth whatever the plan's stack.
  EXPECT_EQ(hf["anchor"]["framework"], "unsloth");
  EXPECT_EQ(hf["anchor"]["estimate_bytes"], unsloth["anchor"]["estimate_bytes"]);

  const auto text = RunCli(
      {"plan", "llama-3.1-70b", "--method", "qlora", "--framework", "unsloth", "--root", kIdle});
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("framework unsloth (Unsloth FastLanguageModel + TRL)"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("the anchor was measured with unsloth, the stack of this plan"),
            std::string::npos)
      << text.out;
  const auto hf_text = RunCli({"plan", "llama-3.1-70b", "--method", "qlora", "--root", kIdle});
  EXPECT_NE(hf_text.out.find("the anchor was measured with unsloth and planned with its "
                             "profile; this plan is for hf"),
            std::string::npos)
      << hf_text.out;

  const auto bad = RunCli({"plan", "llama-3.1-70b", "--framework", "keras", "--root", kIdle});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--framework: unknown framework 'keras' (expected "
                         "hf|trl|unsloth|axolotl|torchtune|llama-factory|litgpt|megatron|pytorch)"),
            std::string::npos)
      << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  const auto bad_platform =
      RunCli({"plan", "llama-3.1-70b", "--platform", "spark", "--root", kIdle});
  EXPECT_EQ(bad_platform.status, 2);
  EXPECT_NE(bad_platform.err.find("--platform: 'spark' is not unified or discrete"),
            std::string::npos)
      << bad_platform.err;
}

// A discrete GPU's device peak is tensors + CUDA context + allocator slack: the host process
// (Python, torch, the data loader) is host memory, on its own line and in host_peak_bytes.
// On unified memory it draws from the one pool and stays in the peaks.
TEST_F(PlanCli, DiscreteDevicePeakLeavesTheHostProcessToItsOwnLine) {
  auto plan = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"plan",   "llama-3.1-8b", "--method", "lora",
                                     "--json", "--root",       kIdle};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = RunCli(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  };
  const auto unified = plan({"--platform", "unified"});
  const auto discrete = plan({"--platform", "discrete"});
  ASSERT_TRUE(unified.is_object());
  ASSERT_TRUE(discrete.is_object());
  auto bytes = [](const nlohmann::json& j, const char* key) { return j[key].get<uint64_t>(); };
  auto term = [](const nlohmann::json& j, const char* key) {
    return j["terms"][key].get<uint64_t>();
  };
  const uint64_t host = 3ULL << 29;  // 1.5 GiB
  EXPECT_EQ(term(discrete, "host_process"), host);
  EXPECT_EQ(term(unified, "host_process"), host);
  EXPECT_EQ(bytes(discrete, "tensor_peak_bytes"), bytes(unified, "tensor_peak_bytes"));

  // Discrete: the device's steady peak is tensors + context + slack; the host has its figure.
  EXPECT_EQ(bytes(discrete, "steady_peak_bytes"), bytes(discrete, "tensor_peak_bytes") +
                                                      term(discrete, "cuda_context") +
                                                      term(discrete, "allocator_slack"));
  EXPECT_EQ(term(discrete, "overhead"),
            term(discrete, "cuda_context") + term(discrete, "allocator_slack"));
  EXPECT_EQ(bytes(discrete, "host_peak_bytes"), host + term(discrete, "host_offload"));
  EXPECT_EQ(bytes(discrete, "load_peak_bytes") + host, bytes(unified, "load_peak_bytes"));
  bool host_line = false;
  for (const auto& t : discrete["breakdown"]) {
    host_line |= t["key"] == "host_process" && t["bytes"] == host;
    if (t["key"] == "overhead") {
      EXPECT_EQ(t["formula"].get<std::string>().find("host process"), std::string::npos)
          << t["formula"];
    }
  }
  EXPECT_TRUE(host_line);

  // Unified: unchanged, the host process is in the pool and in the peaks.
  EXPECT_EQ(bytes(unified, "steady_peak_bytes"), bytes(unified, "tensor_peak_bytes") +
                                                     term(unified, "cuda_context") +
                                                     term(unified, "allocator_slack") + host);
  EXPECT_EQ(term(unified, "overhead"),
            term(unified, "cuda_context") + term(unified, "allocator_slack") + host);
  EXPECT_EQ(bytes(unified, "host_peak_bytes"), 0u);
  for (const auto& t : unified["breakdown"]) EXPECT_NE(t["key"], "host_process");

  // Offloaded checkpoints (unsloth) join the host process in the host's figure.
  const auto unsloth = plan({"--platform", "discrete", "--framework", "unsloth"});
  EXPECT_GT(term(unsloth, "host_offload"), 0u);
  EXPECT_EQ(bytes(unsloth, "host_peak_bytes"), host + term(unsloth, "host_offload"));

  const auto text = RunCli(
      {"plan", "llama-3.1-8b", "--method", "lora", "--platform", "discrete", "--root", kIdle});
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("host memory: host process"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("outside the device's peaks"), std::string::npos) << text.out;
}

TEST_F(PlanCli, ListModelsJsonHasTheCatalog) {
  const auto r = RunCli({"plan", "--list-models", "--json"});
  ASSERT_EQ(r.status, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GE(j["models"].size(), 30u);
}

// Two Sparks: a 70B full fine-tune cannot fit one node, and FSDP across two does not make it
// fit either; an 8B full fine-tune over an 80 GB node fits only with FSDP across the pair.
// Each advised per-node peak is checked by planning it with those flags.
TEST_F(PlanCli, TwoSparksAdviceNamesFsdpWithItsPerNodePeak) {
  auto json_of = [](std::vector<std::string> args) {
    args.push_back("--json");
    const auto r = RunCli(args);
    EXPECT_FALSE(r.timed_out);
    return std::make_pair(r.status, nlohmann::json::parse(r.out.empty() ? "{}" : r.out));
  };
  auto devices_advice = [](const nlohmann::json& j) {
    nlohmann::json found;
    for (const auto& a : j["advice"]) {
      if (a["step"] == "devices") found = a;
    }
    return found;
  };
  {
    auto [status, j] = json_of({"plan", "llama-3.1-70b", "--method", "full", "--root", kIdle});
    ASSERT_EQ(status, 1);
    auto a = devices_advice(j);
    ASSERT_TRUE(a.is_object()) << j["advice"].dump();
    EXPECT_EQ(a["sharding"], "fsdp");
    EXPECT_EQ(a["value"], 2);
    EXPECT_NE(a["text"].get<std::string>().find("--devices 2 --sharding fsdp"), std::string::npos);
    EXPECT_NE(a["text"].get<std::string>().find("per node (does not fit)"), std::string::npos);
    EXPECT_EQ(a["verdict"], "does_not_fit");
    // The advised per-node peak is the plan of those flags, and half the one-node peak or
    // more (the model state halves; activations and the units in flight do not).
    auto [two_status, two] = json_of({"plan", "llama-3.1-70b", "--method", "full", "--devices", "2",
                                      "--sharding", "fsdp", "--root", kIdle});
    EXPECT_EQ(two_status, 1);
    EXPECT_EQ(a["peak_bytes"], two["peak_bytes"]);
    EXPECT_EQ(two["parallel"]["per_node"], true);
    EXPECT_EQ(two["parallel"]["single_device_peak_bytes"], j["peak_bytes"]);
    EXPECT_GT(two["peak_bytes"].get<uint64_t>(), j["peak_bytes"].get<uint64_t>() / 2);
    EXPECT_LT(two["peak_bytes"].get<uint64_t>(), j["peak_bytes"].get<uint64_t>());
    EXPECT_EQ(two["terms"]["weights"].get<uint64_t>(),
              (j["terms"]["weights"].get<uint64_t>() + 1) / 2);
  }
  {
    const std::vector<std::string> base = {"plan", "llama-3.1-8b", "--method",
                                           "full", "--budget",     "70GB"};
    auto [status, j] = json_of(base);
    ASSERT_EQ(status, 1) << j.dump();
    auto a = devices_advice(j);
    ASSERT_TRUE(a.is_object()) << j["advice"].dump();
    EXPECT_EQ(a["sharding"], "fsdp");  // DDP adds a gradient-sized bucket copy: never less
    EXPECT_NE(a["text"].get<std::string>().find("(fits;"), std::string::npos);
    auto ddp_args = base;
    for (const char* f : {"--devices", "2", "--sharding", "ddp"}) ddp_args.push_back(f);
    auto [ddp_status, ddp] = json_of(ddp_args);
    EXPECT_EQ(ddp_status, 1);
    EXPECT_GT(ddp["peak_bytes"].get<uint64_t>(), j["peak_bytes"].get<uint64_t>());
    auto fsdp_args = base;
    for (const char* f : {"--devices", "2", "--sharding", "fsdp"}) fsdp_args.push_back(f);
    auto [fsdp_status, fsdp] = json_of(fsdp_args);
    EXPECT_EQ(fsdp_status, 0);
    EXPECT_EQ(a["peak_bytes"], fsdp["peak_bytes"]);
    EXPECT_EQ(fsdp["verdict"], "fits");
    // A ddp plan over two that does not fit is advised fsdp over the same two.
    auto from_ddp = devices_advice(ddp);
    ASSERT_TRUE(from_ddp.is_object()) << ddp["advice"].dump();
    EXPECT_EQ(from_ddp["sharding"], "fsdp");
    EXPECT_EQ(from_ddp["value"], 2);
    EXPECT_EQ(from_ddp["peak_bytes"], fsdp["peak_bytes"]);
    // The terminal says it is per node.
    const auto r = RunCli(fsdp_args);
    EXPECT_NE(r.out.find("per node (2 devices, fsdp)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("FSDP unsharded units"), std::string::npos) << r.out;
  }
}

TEST_F(PlanCli, DevicesAndShardingBadInput) {
  const std::vector<PlanCase> cases = {
      {{"plan", "llama-3.1-8b", "--devices", "0", "--budget", "100GB"},
       2,
       "",
       "--devices: '0' must be at least 1"},
      {{"plan", "llama-3.1-8b", "--devices=-1", "--budget", "100GB"},
       2,
       "",
       "--devices: '-1' must be at least 1"},
      {{"plan", "llama-3.1-8b", "--devices", "99999", "--budget", "100GB"},
       2,
       "",
       "--devices: 99999 is absurdly large (at most 1024)"},
      {{"plan", "llama-3.1-8b", "--devices", "2", "--sharding", "tp", "--budget", "100GB"},
       2,
       "",
       "--sharding: unknown sharding 'tp' (expected ddp|fsdp|zero2|zero3)"},
      {{"plan", "llama-3.1-8b", "--sharding", "fsdp", "--budget", "100GB"},
       0,
       "--sharding fsdp with --devices 1 changes nothing",
       ""},
      {{"plan", "llama-3.1-8b", "--devices", "2", "--budget", "100GB"},
       0,
       "per node (2 devices, ddp)",
       ""},
  };
  for (const PlanCase& c : cases) {
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    SCOPED_TRACE(joined);
    const auto r = RunCli(c.args);
    ASSERT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, c.status) << r.out << r.err;
    if (!c.out_contains.empty()) {
      EXPECT_NE(r.out.find(c.out_contains), std::string::npos) << r.out;
    }
    if (!c.err_contains.empty()) {
      EXPECT_NE(r.err.find(c.err_contains), std::string::npos) << r.err;
    }
    if (c.status == 2) {
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;
    }
  }
}

}  // namespace
}  // namespace headroom

namespace headroom {
namespace {

// plan --from: real run configuration files (tests/fixtures/run_configs/SOURCES), with an
// empty Hugging Face cache so that the Hub ids resolve to the catalog on every machine.
const std::vector<std::string> kNoHfCache = {"HF_HUB_CACHE=/nonexistent/headroom-test-hub"};

std::string RunConfigFixture(const std::string& name) {
  return testing::FixturePath("run_configs/" + name);
}

nlohmann::json PlanJsonFrom(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"plan", "--json", "--root", kIdle};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = RunCli(args, 20000, kNoHfCache);
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

TEST_F(PlanCli, FromAxolotlFileTakesItsRun) {
  const std::string file = RunConfigFixture("axolotl/llama-3-qlora.yml");
  const auto j = PlanJsonFrom({"--from", file});
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["model"]["name"], "llama-3-8b");
  EXPECT_EQ(j["workload"]["method"], "qlora");
  EXPECT_EQ(j["workload"]["lora_rank"], 32);
  EXPECT_EQ(j["workload"]["batch"], 2);
  EXPECT_EQ(j["workload"]["seq"], 4096);
  EXPECT_EQ(j["from"]["file"], file);
  EXPECT_EQ(j["from"]["format"], "axolotl");
  EXPECT_EQ(j["from"]["base_model"], "NousResearch/Meta-Llama-3-8B");
  EXPECT_EQ(j["from"]["model_origin"], "catalog");
  EXPECT_EQ(j["from"]["not_modelled"], nlohmann::json::array());
}

TEST_F(PlanCli, FromFlagsBesideItOverrideTheFile) {
  const std::string file = RunConfigFixture("axolotl/llama-3-qlora.yml");
  const auto j = PlanJsonFrom({"--from", file, "--batch", "4", "--seq", "1024"});
  EXPECT_EQ(j["workload"]["batch"], 4);
  EXPECT_EQ(j["workload"]["seq"], 1024);
  EXPECT_EQ(j["workload"]["lora_rank"], 32);  // still the file's
  // A full method on the command line drops the file's LoRA and 4-bit settings with it.
  const auto full = PlanJsonFrom({"--from", file, "--method", "full"});
  EXPECT_EQ(full["workload"]["method"], "full");
  EXPECT_TRUE(full["workload"]["lora_rank"].is_null());
  // A model on the command line replaces the file's, even one the file's cannot be found for.
  const std::string dpo =
      RunConfigFixture("alignment-handbook/zephyr-7b-beta-dpo-config_full.yaml");
  const auto other = PlanJsonFrom({"llama-3.2-1b", "--from", dpo});
  EXPECT_EQ(other["model"]["name"], "llama-3.2-1b");
  EXPECT_EQ(other["workload"]["workload"], "dpo");
  EXPECT_EQ(other["workload"]["batch"], 8);
  EXPECT_EQ(other["from"]["format"], "trl");
  EXPECT_EQ(other["from"]["model_origin"], "");  // the file's model is not the one planned
}

// plan --json names where every input field came from (docs/plan-json.md "sources"): the
// command line, the --from file, the --framework profile, or the default.
TEST_F(PlanCli, JsonSaysWhereEveryInputCameFrom) {
  const std::string file = RunConfigFixture("axolotl/qwen3-32b-qlora.yaml");
  const auto j = PlanJsonFrom({"--from", file, "--batch", "4"});
  ASSERT_TRUE(j.contains("sources")) << j.dump(2);
  const auto& s = j["sources"];
  EXPECT_EQ(s["batch"], "flag");
  EXPECT_EQ(s["root"], "flag");
  EXPECT_EQ(s["model"], "file");
  EXPECT_EQ(s["framework"], "file");  // axolotl
  EXPECT_EQ(s["lora_rank"], "file");
  EXPECT_EQ(s["optimizer"], "profile");  // the file's adamw_torch_4bit is not modelled
  EXPECT_EQ(s["optimizer_step"], "profile");
  EXPECT_EQ(s["budget"], "default");
  EXPECT_EQ(s.size(), 35u);  // every field of src/plan/plan_fields.cc
  // Without a file: flags, then the profile of --framework, then the defaults.
  const auto plain = PlanJsonFrom({"llama-3.1-8b", "--framework", "unsloth", "--seq", "1024"});
  EXPECT_EQ(plain["sources"]["seq"], "flag");
  EXPECT_EQ(plain["sources"]["framework"], "flag");
  EXPECT_EQ(plain["sources"]["grad_ckpt"], "profile");
  EXPECT_EQ(plain["sources"]["lora_dropout"], "profile");
  EXPECT_EQ(plain["sources"]["batch"], "default");
  EXPECT_EQ(plain["sources"]["method"], "default");
}

TEST_F(PlanCli, FromTextSaysTheFileAndWhatIsNotModelled) {
  const std::string file = RunConfigFixture("axolotl/qwen3-32b-qlora.yaml");
  const auto r = RunCli({"plan", "--from", file, "--root", kIdle}, 20000, kNoHfCache);
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
  EXPECT_NE(r.out.find("from " + file + " (axolotl): base model Qwen/Qwen3-32B (catalog)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find(
          "not modelled: gradient_checkpointing: offload (with an adapter every activation is "
          "offloaded: planned as --grad-ckpt off), optimizer: "
          "adamw_torch_4bit, lora_mlp_kernel, lora_qkv_kernel, lora_o_kernel"),
      std::string::npos)
      << r.out;
}

// A real Firefly train_args JSON (SOURCES): planned as Firefly trains it, a QLoRA of rank 64
// under Unsloth, by its own keys beside the TrainingArguments; a flag beside it still wins.
TEST_F(PlanCli, FromFireflyTrainingArgumentsJson) {
  const std::string file = RunConfigFixture("firefly/llama3-8b-sft-qlora.json");
  const auto j = PlanJsonFrom({"--from", file});
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["model"]["name"], "llama-3-8b");
  EXPECT_EQ(j["workload"]["method"], "qlora");
  EXPECT_EQ(j["workload"]["lora_rank"], 64);
  EXPECT_EQ(j["workload"]["batch"], 1);
  EXPECT_EQ(j["workload"]["seq"], 1024);
  EXPECT_EQ(j["from"]["format"], "firefly");
  EXPECT_EQ(j["from"]["not_modelled"], nlohmann::json({"dataloader_num_workers"}));
  const auto full = PlanJsonFrom({"--from", file, "--method", "full"});
  EXPECT_EQ(full["workload"]["method"], "full");
  EXPECT_EQ(full["workload"]["seq"], 1024);  // still the file's
  EXPECT_GT(full["steady_peak_bytes"].get<uint64_t>(), j["steady_peak_bytes"].get<uint64_t>());
}

TEST_F(PlanCli, FromBadFilesAreOneLineAndExitTwo) {
  const std::string wrong =
      TempFile("wrong.yaml", "base_model: NousResearch/Meta-Llama-3-8B\nmicro_batch_size: [1]\n")
          .string();
  const std::string fifo = (std::filesystem::path(wrong).parent_path() / "fifo.yaml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string dpo =
      RunConfigFixture("alignment-handbook/zephyr-7b-beta-dpo-config_full.yaml");
  const std::vector<PlanCase> cases = {
      {{"plan", "--from", wrong},
       2,
       "",
       wrong + ": micro_batch_size: expected an integer, got a sequence"},
      {{"plan", "--from", fifo}, 2, "", "a FIFO"},
      {{"plan", "--from", "/nonexistent/run.yaml"}, 2, "", "--from: open(/nonexistent/run.yaml)"},
      {{"plan", "--from", dpo},
       2,
       "",
       "'alignment-handbook/zephyr-7b-sft-full' is not in the catalog"},
  };
  for (const auto& c : cases) {
    const auto r = RunCli(c.args, 20000, kNoHfCache);
    EXPECT_EQ(r.status, c.status) << c.args[2] << "\n" << r.err;
    EXPECT_NE(r.err.find(c.err_contains), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace
}  // namespace headroom
