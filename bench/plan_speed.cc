// bench/plan_speed: how long a whole plan takes, as `headroom plan` runs it.
//
// BM_PlanCatalog: a catalog model (llama-3.1-70b QLoRA) with the live /proc/meminfo read,
// the footprint, verdict, anchor and advice (the advice bisections are the costly part).
// BM_PlanSharded70B: the same with the model read from a folder holding config.json, a
// model.safetensors.index.json and 30 safetensors shards of a Llama-3.1-70B layout (723
// tensors, 141 GB of bf16 data). The shards are sparse files: only their headers are
// written, which is all the planner reads. Target: under 10 ms per plan.
// BM_PlanFromRunConfig: `plan --from FILE` as the CLI runs it: a real axolotl QLoRA file
// (tests/fixtures/run_configs/axolotl/llama-3-qlora.yml) read through base/safe_file, parsed
// with yaml-cpp into the bounded tree, read as axolotl, then ParsePlanRequest,
// ResolvePlanRequest (the live /proc/meminfo) and the plan. Target: under 10 ms (issue 17).
// BM_PlanSolveSeq: `plan llama-3.1-8b --solve seq` on the Spark fixture (tests/fixtures/
// gb10-idle): the doubling and the bisection, each value a whole plan (advice included when
// it does not fit) judged by the pools as `plan` judges it, 32 plans. BM_PlanSolveBatch: the
// same for --solve batch at --seq 4096. Target: under 20 ms with about 30 plans (issue 33).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/settings.h"  // kDefaultReserveBytes
#include "model/catalog.h"
#include "model/hf_config.h"
#include "plan/plan.h"
#include "plan/plan_request.h"
#include "plan/pools.h"
#include "plan/run_config.h"
#include "plan/solve.h"
#include "sys/meminfo.h"
#include "sys/sysroot.h"

namespace fs = std::filesystem;
using namespace headroom;

namespace {

struct Tensor {
  std::string name;
  std::vector<uint64_t> shape;
};

std::vector<Tensor> Llama70BTensors() {
  const uint64_t h = 8192, kv = 1024, inter = 28672, vocab = 128256;
  std::vector<Tensor> t;
  t.push_back({"model.embed_tokens.weight", {vocab, h}});
  for (int l = 0; l < 80; ++l) {
    const std::string p = fmt::format("model.layers.{}.", l);
    t.push_back({p + "self_attn.q_proj.weight", {h, h}});
    t.push_back({p + "self_attn.k_proj.weight", {kv, h}});
    t.push_back({p + "self_attn.v_proj.weight", {kv, h}});
    t.push_back({p + "self_attn.o_proj.weight", {h, h}});
    t.push_back({p + "mlp.gate_proj.weight", {inter, h}});
    t.push_back({p + "mlp.up_proj.weight", {inter, h}});
    t.push_back({p + "mlp.down_proj.weight", {h, inter}});
    t.push_back({p + "input_layernorm.weight", {h}});
    t.push_back({p + "post_attention_layernorm.weight", {h}});
  }
  t.push_back({"model.norm.weight", {h}});
  t.push_back({"lm_head.weight", {vocab, h}});
  return t;
}

// Writes the folder once per process; returns its path.
fs::path MakeSharded70B() {
  const fs::path dir = fs::temp_directory_path() / fmt::format("headroom-bench-70b-{}", getpid());
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << R"({"model_type": "llama", "hidden_size": 8192,
    "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
    "intermediate_size": 28672, "vocab_size": 128256, "tie_word_embeddings": false,
    "torch_dtype": "bfloat16"})";
  const auto tensors = Llama70BTensors();
  const size_t shards = 30;
  nlohmann::json weight_map;
  for (size_t s = 0; s < shards; ++s) {
    const std::string file = fmt::format("model-{:05d}-of-{:05d}.safetensors", s + 1, shards);
    nlohmann::json header = nlohmann::json::object();
    header["__metadata__"] = {{"format", "pt"}};
    uint64_t offset = 0;
    for (size_t i = s; i < tensors.size(); i += shards) {
      uint64_t n = 2;
      for (uint64_t d : tensors[i].shape) n *= d;
      header[tensors[i].name] = {
          {"dtype", "BF16"}, {"shape", tensors[i].shape}, {"data_offsets", {offset, offset + n}}};
      offset += n;
      weight_map[tensors[i].name] = file;
    }
    const std::string text = header.dump();
    const uint64_t len = text.size();
    const std::string path = (dir / file).string();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    unsigned char le[8];
    for (int b = 0; b < 8; ++b) le[b] = static_cast<unsigned char>(len >> (8 * b));
    if (fd < 0 || ::write(fd, le, 8) != 8 ||
        ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
        ::ftruncate(fd, static_cast<off_t>(8 + len + offset)) != 0) {
      std::perror("plan_speed: writing a shard");
      std::exit(1);
    }
    ::close(fd);
  }
  std::ofstream(dir / "model.safetensors.index.json")
      << nlohmann::json{{"metadata", {{"total_size", 0}}}, {"weight_map", weight_map}}.dump();
  return dir;
}

PlanResult PlanWithLiveMemory(const ModelSpec& spec) {
  Workload w;
  w.method = Method::kQlora;
  w.weight_dtype = DType::kNf4;
  const SysRoot root("/");
  auto info = ReadMemInfo(root);
  const Budget budget = info ? BudgetFromMemInfo(*info, kDefaultReserveBytes, "/proc/meminfo")
                             : BudgetFromSize(100'000'000'000ULL, std::nullopt);
  FootprintOptions o;
  o.pool_bytes = budget.pool_bytes();
  return MakePlan(spec, w, budget, o);
}

void BM_PlanCatalog(benchmark::State& state) {
  for (auto _ : state) {
    const ModelSpec* spec = FindModel("llama-3.1-70b");
    PlanResult p = PlanWithLiveMemory(*spec);
    benchmark::DoNotOptimize(p.footprint.steady_peak_bytes);
  }
}
BENCHMARK(BM_PlanCatalog)->Unit(benchmark::kMicrosecond);

void BM_PlanSharded70B(benchmark::State& state) {
  static const fs::path dir = MakeSharded70B();
  for (auto _ : state) {
    auto spec = ReadModelPath(dir);
    if (!spec) {
      state.SkipWithError(EnglishText(spec.error().what).c_str());
      break;
    }
    PlanResult p = PlanWithLiveMemory(*spec);
    benchmark::DoNotOptimize(p.footprint.steady_peak_bytes);
  }
  state.counters["params"] = static_cast<double>(ReadModelPath(dir)->exact_params.value_or(0));
}
BENCHMARK(BM_PlanSharded70B)->Unit(benchmark::kMicrosecond);

void BM_PlanFromRunConfig(benchmark::State& state) {
  const std::string file =
      std::string(HEADROOM_SOURCE_DIR) + "/tests/fixtures/run_configs/axolotl/llama-3-qlora.yml";
  const PlanContext context{"/", kDefaultReserveBytes};
  for (auto _ : state) {
    auto config = LoadRunConfig(file, {});
    if (!config) {
      state.SkipWithError(EnglishText(config.error().what).c_str());
      break;
    }
    Message error;
    auto request = ParsePlanRequest(config->text, &error);
    auto inputs = request ? ResolvePlanRequest(*request, context, &error) : std::nullopt;
    if (!inputs) {
      state.SkipWithError(EnglishText(error).c_str());
      break;
    }
    PlanResult p = MakePlan(*inputs);
    benchmark::DoNotOptimize(p.footprint.steady_peak_bytes);
  }
}
BENCHMARK(BM_PlanFromRunConfig)->Unit(benchmark::kMicrosecond);

// plan's inputs for llama-3.1-8b LoRA against the Spark fixture's MemAvailable.
PlanInputs SparkInputs(int64_t seq) {
  const SysRoot root(std::string(HEADROOM_SOURCE_DIR) + "/tests/fixtures/gb10-idle");
  PlanInputs in;
  in.spec = *FindModel("llama-3.1-8b");
  in.workload.seq = seq;
  auto info = ReadMemInfo(root);
  in.budget = info ? BudgetFromMemInfo(*info, kDefaultReserveBytes, "gb10-idle")
                   : BudgetFromSize(119'000'000'000ULL, std::nullopt);
  in.options.pool_bytes = in.budget.pool_bytes();
  return in;
}

void SolveBench(benchmark::State& state, SolveKnob knob, int64_t seq) {
  const PlanInputs in = SparkInputs(seq);
  // As cli/plan_solve's JudgedPlan: MakePlan, then the pools (unified: the host's alone).
  const PlanAt plan_at = [](const PlanInputs& at) {
    PlanResult p = MakePlan(at);
    JudgePools(&p, std::nullopt);
    return p;
  };
  Solution s;
  for (auto _ : state) {
    s = Solve(in, knob, plan_at);
    benchmark::DoNotOptimize(s.value);
  }
  state.counters["value"] = static_cast<double>(s.value);
  state.counters["plans"] = s.plans;
}

void BM_PlanSolveSeq(benchmark::State& state) { SolveBench(state, SolveKnob::kSeq, 2048); }
BENCHMARK(BM_PlanSolveSeq)->Unit(benchmark::kMillisecond);

void BM_PlanSolveBatch(benchmark::State& state) { SolveBench(state, SolveKnob::kBatch, 4096); }
BENCHMARK(BM_PlanSolveBatch)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path(), ec)) {
    if (e.path().filename().string() == fmt::format("headroom-bench-70b-{}", getpid())) {
      fs::remove_all(e.path(), ec);
    }
  }
  return 0;
}
