// The cost of one `headroom watch` sample (docs/watch.md quotes these figures). Run from the
// repository root:
//
//   HEADROOM_NVML_LIB=build/tests/fakes/libnvidia-ml-fake.so build/bench/sampler_cost
//
// BM_SampleNoGpu: /proc/meminfo, /proc/pressure/memory, /proc/stat and every hwmon and
// thermal channel of this machine; the target is under 50 us of CPU.
// BM_SampleGb10Sensors: the same against tests/fixtures/gb10-idle, a DGX Spark's 40-odd
// spark_hwmon channels (from disk, not sysfs: an upper bound on the text handling).
// BM_SampleWithNvml: plus a full GPU reading through the real Nvml class against the fake
// library ($HEADROOM_NVML_LIB; skipped when unset); the target is under 1 ms. The fake answers
// at once, so this is headroom's side of the cost; a real driver adds its own ioctls.
// BM_FormatRow: one CSV row from a full sample.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>

#include "gpu/nvml.h"
#include "samples/sampler.h"
#include "samples/samples_csv.h"

namespace headroom {
namespace {

void BM_SampleNoGpu(benchmark::State& state) {
  Sampler sampler(SysRoot("/"), nullptr);
  for (auto _ : state) benchmark::DoNotOptimize(sampler.Read(std::chrono::system_clock::now()));
  state.counters["extra_columns"] = static_cast<double>(sampler.extra_columns().size());
}
BENCHMARK(BM_SampleNoGpu);

void BM_SampleGb10Sensors(benchmark::State& state) {
  const std::filesystem::path fixture = "tests/fixtures/gb10-idle";
  if (!std::filesystem::exists(fixture)) {
    state.SkipWithError("run from the repository root (tests/fixtures/gb10-idle)");
    return;
  }
  Sampler sampler{SysRoot(fixture), nullptr};
  for (auto _ : state) benchmark::DoNotOptimize(sampler.Read(std::chrono::system_clock::now()));
  state.counters["extra_columns"] = static_cast<double>(sampler.extra_columns().size());
}
BENCHMARK(BM_SampleGb10Sensors);

void BM_SampleWithNvml(benchmark::State& state) {
  const std::string library = ResolveNvmlLibrary("", [](const char* n) { return std::getenv(n); });
  if (library.empty()) {
    state.SkipWithError("set HEADROOM_NVML_LIB (e.g. the fake library)");
    return;
  }
  auto nvml = Nvml::Open(library);
  if (!nvml) {
    state.SkipWithError(EnglishText(nvml.error().what).c_str());
    return;
  }
  Sampler sampler(SysRoot("/"), std::move(*nvml));
  for (auto _ : state) benchmark::DoNotOptimize(sampler.Read(std::chrono::system_clock::now()));
}
BENCHMARK(BM_SampleWithNvml);

void BM_FormatRow(benchmark::State& state) {
  Sample s;
  s.time = std::chrono::system_clock::now();
  s.temperature_c = 61;
  s.power_mw = 99'500;
  s.sm_clock_mhz = 2405;
  s.clock_event_reasons = 0x24;
  s.gpu_utilization_pct = 96;
  s.energy_mj = 5'000'123;
  s.mem_total_bytes = s.mem_available_bytes = s.mem_cached_bytes = s.mem_free_bytes = 1ULL << 36;
  s.swap_used_bytes = 0;
  s.psi_some_avg10_pct = s.psi_full_avg10_pct = s.cpu_util_pct = 1.5;
  s.extra.assign(40, 41.5);
  for (auto _ : state) benchmark::DoNotOptimize(FormatSampleRow(s, 40));
}
BENCHMARK(BM_FormatRow);

}  // namespace
}  // namespace headroom

BENCHMARK_MAIN();
