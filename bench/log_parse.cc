// bench/log_parse: how fast the step-log parser (src/explain/step_log.h) reads a training log,
// in bytes of log per second on one core. Target: 500 MB/s, so that `headroom explain` reads a
// multi-GB log of a week-long run in seconds.
//
// The log is generated in memory (about 100 MB, the same bytes on every run of one build) from the
// line shapes of docs/explain-logs.md "Formats and auto-detection", in proportions of a noisy
// HF/torchrun log: by line, 40% noise (Python logging, warnings, paths, blank lines), 30% physical
// lines of tqdm updates (4 '\r' updates each, a rank tag on the first), 10% HF dicts, 8% Megatron,
// 6% torchtune "Step N |", 6% JSON lines.
//   BM_ParseMixed        that log, into a new vector each time: what a one-shot `explain`
//                        pays, the first touch of the records' memory included
//   BM_ParseMixedReused  the same into a vector kept across iterations: the parse alone
//   BM_ParseStamped      the mixed log with an arrival stamp on every segment, as
//                        `headroom watch --log` writes it (new vector each time)
//   BM_ParseNoise    noise lines only: the cost of rejecting what is not a step
//   BM_ParseRegex    a --step-regex over a 10 MB slice, for the price of RE2
//   BM_StepTimes     StepTimes over the records of the mixed log
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "explain/step_log.h"
#include "explain/step_times.h"

namespace {

using namespace headroom;

constexpr size_t kLogBytes = 100u << 20;

// A small deterministic generator (PCG-style LCG): the same log on every run and machine.
struct Rng {
  uint64_t state = 0x853C49E6748FEA9BULL;
  uint32_t Next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  }
  uint32_t Below(uint32_t n) { return Next() % n; }
};

void AppendNoise(Rng& rng, std::string* out) {
  switch (rng.Below(5)) {
    case 0:
      *out += fmt::format(
          "[2026-06-20 15:38:{:02},{:03}] [INFO] [axolotl.train.log:{}] "
          "Saving model checkpoint to /data/run/checkpoint-{}\n",
          rng.Below(60), rng.Below(1000), rng.Below(500), rng.Below(10000));
      break;
    case 1:
      *out +=
          "/usr/lib/python3/dist-packages/torch/utils/checkpoint.py:464: UserWarning: "
          "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly.\n";
      break;
    case 2:
      *out += fmt::format(
          "INFO:torchtune.utils._logging:Model checkpoint of size {:.2f} GB "
          "saved to /tmp/torchtune/llama3_2_1B/full/epoch_{}/ft-model.safetensors\n",
          rng.Below(10000) / 100.0, rng.Below(10));
      break;
    case 3:
      *out += "\n";
      break;
    default:
      *out += fmt::format("  warnings.warn(  # rank {} step time {} ms [cuda:{}]\n", rng.Below(8),
                          rng.Below(2000), rng.Below(8));
      break;
  }
}

// A stamp as `headroom watch --log` writes it before each segment.
std::string Stamp(Rng& rng) {
  return fmt::format("2026-11-29T10:{:02}:{:02}.{:03}Z ", rng.Below(60), rng.Below(60),
                     rng.Below(1000));
}

void AppendTqdm(Rng& rng, int64_t* n, bool stamped, std::string* out) {
  if (stamped) *out += Stamp(rng);
  *out += "[default0]:";
  for (int u = 0; u < 4; ++u) {
    ++*n;
    *out += '\r';
    if (stamped) *out += Stamp(rng);
    *out += fmt::format("{:3}%|███▌      | {}/100000 [{:02}:{:02}<{:02}:{:02}, {:5.2f}it/s]",
                        *n / 1000 % 100, *n, rng.Below(60), rng.Below(60), rng.Below(60),
                        rng.Below(60), 1 + rng.Below(900) / 100.0);
  }
  *out += "\n";
}

std::string MakeLog(bool stamped, bool noise_only) {
  Rng rng;
  std::string log;
  log.reserve(kLogBytes + 4096);
  int64_t n = 0, step = 0;
  while (log.size() < kLogBytes) {
    const uint32_t pick = noise_only ? 0 : rng.Below(100);
    const size_t line_begin = log.size();
    if (pick < 40) {
      AppendNoise(rng, &log);
    } else if (pick < 70) {
      AppendTqdm(rng, &n, stamped, &log);
      continue;  // stamps already placed per segment
    } else if (pick < 80) {
      log += fmt::format(
          "{{'loss': '{:.4g}', 'grad_norm': '{:.4g}', 'learning_rate': '2e-05', "
          "'epoch': '{:.4g}'}}\n",
          rng.Below(3000) / 1000.0, rng.Below(5000) / 1000.0, n / 100000.0);
    } else if (pick < 88) {
      ++step;
      log += fmt::format(
          " [2025-08-01 07:19:{:02}] iteration {:8}/{:8} | consumed samples: {:12} | elapsed time "
          "per iteration (ms): {:.1f} | throughput per GPU (TFLOP/s/GPU): 80.2 | learning rate: "
          "6.976744E-08 | global batch size:   128 | lm loss: {:.6E} | loss scale: 1.0 | grad "
          "norm: 26.203 | number of skipped iterations:   0 | number of nan iterations:   0 |\n",
          rng.Below(60), step, 500000, step * 128, 1000 + rng.Below(20000) / 10.0,
          rng.Below(10000) / 1000.0);
    } else if (pick < 94) {
      log += fmt::format(
          "Step {} | loss:{:.4f} lr:2e-05 tokens_per_second_per_gpu:{:.2f} "
          "peak_memory_active:17.2 \n",
          ++step, rng.Below(3000) / 1000.0, rng.Below(300000) / 100.0);
    } else {
      ++step;
      log += fmt::format("{{\"step\": {}, \"time\": {}.{:03}, \"loss\": {:.4f}, \"lr\": 2e-05}}\n",
                         step, 1764410400 + step, rng.Below(1000), rng.Below(3000) / 1000.0);
    }
    if (stamped) log.insert(line_begin, Stamp(rng));
  }
  return log;
}

const std::string& MixedLog() {
  static const std::string log = MakeLog(false, false);
  return log;
}

void Parse(benchmark::State& state, const std::string& log, StepLogOptions options = {}) {
  size_t records = 0;
  for (auto _ : state) {
    std::vector<StepRecord> r = ParseStepLog(log, options);
    records = r.size();
    benchmark::DoNotOptimize(r.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * log.size()));
  state.counters["records"] = static_cast<double>(records);
  state.counters["log_MB"] = static_cast<double>(log.size()) / 1e6;
}

void BM_ParseMixed(benchmark::State& state) { Parse(state, MixedLog()); }

// The same, into a vector kept across iterations: the parse alone, without growing and
// first-touching the output (what a caller following a log with Feed sees).
void BM_ParseMixedReused(benchmark::State& state) {
  const std::string& log = MixedLog();
  std::vector<StepRecord> r = ParseStepLog(log);  // untimed: grows and touches the vector once
  for (auto _ : state) {
    r.clear();
    StepLogParser parser;
    parser.Feed(log, &r);
    parser.Finish(&r);
    benchmark::DoNotOptimize(r.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * log.size()));
  state.counters["records"] = static_cast<double>(r.size());
}

void BM_ParseStamped(benchmark::State& state) {
  static const std::string log = MakeLog(true, false);
  Parse(state, log);
}

void BM_ParseNoise(benchmark::State& state) {
  static const std::string log = MakeLog(false, true);
  Parse(state, log);
}

void BM_ParseRegex(benchmark::State& state) {
  static const std::string log = MixedLog().substr(0, 10u << 20);
  static const Result<StepPattern> pattern = StepPattern::Compile(R"(iteration\s+(\d+)/)");
  StepLogOptions options;
  options.pattern = &*pattern;
  Parse(state, log, options);
}

void BM_StepTimes(benchmark::State& state) {
  static const std::vector<StepRecord> records = ParseStepLog(MixedLog());
  size_t n = 0;
  for (auto _ : state) {
    std::vector<StepTiming> t = StepTimes(records);
    n = t.size();
    benchmark::DoNotOptimize(t.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * records.size()));
  state.counters["timings"] = static_cast<double>(n);
}

BENCHMARK(BM_ParseMixed)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseMixedReused)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseStamped)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseNoise)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseRegex)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StepTimes)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
