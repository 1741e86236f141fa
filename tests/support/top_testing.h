// Test helpers for src/top/ (tests only): a UTF-8 LC_CTYPE for this thread (what top runs
// under; the widths themselves are locale-free, base/display_width.h) and literal
// snapshots of the machines top meets: a GB10 at idle, a discrete GPU, a box with no GPU.
#pragma once

#include <locale.h>

#include <array>
#include <clocale>
#include <string>
#include <vector>

#include "gpu/platform.h"
#include "top/history.h"
#include "top/top_model.h"

namespace headroom::testing {

class ScopedUtf8Locale {
 public:
  ScopedUtf8Locale()
      : locale_(newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr))),
        previous_(locale_ ? uselocale(locale_) : static_cast<locale_t>(nullptr)) {}
  ~ScopedUtf8Locale() {
    if (!locale_) return;
    uselocale(previous_);
    freelocale(locale_);
  }
  ScopedUtf8Locale(const ScopedUtf8Locale&) = delete;
  ScopedUtf8Locale& operator=(const ScopedUtf8Locale&) = delete;
  bool ok() const { return locale_ != static_cast<locale_t>(nullptr); }

 private:
  locale_t locale_;
  locale_t previous_;
};

inline constexpr uint64_t kSparkTotalBytes = 127'600'748ULL * 1024;  // GB10 MemTotal

inline HolderRow Holder(pid_t pid, std::string kind, std::string command,
                        std::optional<uint64_t> rss, std::optional<uint64_t> gpu = std::nullopt) {
  HolderRow r;
  r.pid = pid;
  r.user = "alice";
  r.kind = std::move(kind);
  r.command = std::move(command);
  r.rss_bytes = rss;
  r.gpu_bytes = gpu;
  return r;
}

// A GB10 at idle (tests/fixtures/gb10-idle's meminfo) with NVML readings, three holders, a
// running guard and two events.
inline TopSnapshot Gb10Snapshot() {
  TopSnapshot s;
  GpuReading r;
  r.name = "NVIDIA GB10";
  r.temperature_c = 45;
  r.power_mw = 61'000;
  r.sm_clock_mhz = 2405;
  s.platform = DetectPlatform(std::array{r});
  s.has_gpu = true;
  Sample& m = s.sample;
  m.time = WallTime(std::chrono::seconds(1'790'000'000));
  m.temperature_c = 45;
  m.power_mw = 61'000;
  m.sm_clock_mhz = 2405;
  m.clock_event_reasons = 0;
  m.gpu_utilization_pct = 96;
  m.mem_total_bytes = kSparkTotalBytes;
  m.mem_available_bytes = 120'574'075ULL * 1024;
  m.mem_cached_bytes = 3'284'512ULL * 1024;
  m.mem_free_bytes = 117'598'212ULL * 1024;
  m.swap_used_bytes = 0;
  m.psi_some_avg10_pct = 0.0;
  m.psi_full_avg10_pct = 0.0;
  m.cpu_util_pct = 12.5;
  s.holders = {
      Holder(1111, "vllm", "vllm serve m --gpu-memory-utilization 0.5", 2ULL << 30, 40ULL << 30),
      Holder(2222, "python (torch loaded)", "python train.py", 6ULL << 30),
      Holder(4444, "llama.cpp", "llama-server -m m.gguf", 5ULL << 30)};
  s.holders[0].cap_fraction = 0.5;
  s.holders[0].cap_source = "--gpu-memory-utilization";
  s.holders[2].fixed_after_load = true;
  s.holders_time = m.time;
  RunningGuard g;
  g.run_id = 7;
  g.kind = "guard";
  g.guard_pid = 4321;
  g.kill_below_bytes = 10ULL << 30;
  g.warn_below_bytes = 20ULL << 30;
  g.started_at = "2026-09-21T10:00:00.000Z";
  g.command = {"python", "train.py"};
  s.guards = {g};
  s.events = {
      TopEvent{m.time, "power_plateau",
               Message::Literal("power held at 100 W while temperature rose"), "{\"power_w\":100}"},
      TopEvent{m.time, "guard_started", Message::Literal("guard run 7 (pid 4321)"),
               "{\"run_id\":7}"}};
  s.events_total = 2;
  return s;
}

// No NVML: memory, PSI and processes only.
inline TopSnapshot NoGpuSnapshot() {
  TopSnapshot s = Gb10Snapshot();
  s.platform = PlatformProfile{};
  s.has_gpu = false;
  s.gpu_note = "nvml: dlopen(libnvidia-ml.so.1): libnvidia-ml.so.1: cannot open shared object file";
  Sample& m = s.sample;
  m.temperature_c.reset();
  m.power_mw.reset();
  m.sm_clock_mhz.reset();
  m.clock_event_reasons.reset();
  m.gpu_utilization_pct.reset();
  s.holders[0].gpu_bytes.reset();
  return s;
}

// A discrete H200 at its 700 W limit, power capped and thermally slowed (mask 0x24).
inline TopSnapshot DiscreteSnapshot() {
  TopSnapshot s = Gb10Snapshot();
  GpuReading r;
  r.name = "NVIDIA H200";
  r.memory_total_bytes = 150'754'820'096ULL;
  r.enforced_power_limit_mw = 700'000;
  r.max_sm_clock_mhz = 1980;
  s.platform = DetectPlatform(std::array{r});
  s.sample.power_mw = 690'000;
  s.sample.sm_clock_mhz = 1980;
  s.sample.clock_event_reasons = 0x24;
  s.sample.gpu_memory_total_bytes = 150'754'820'096ULL;
  s.sample.gpu_memory_used_bytes = 85'899'345'920ULL;
  return s;
}

// A history of `n` points of the snapshot's sample, the temperature rising a degree each.
inline History HistoryOf(const TopSnapshot& s, size_t n) {
  History h;
  for (size_t i = 0; i < n; ++i) {
    Sample m = s.sample;
    if (m.temperature_c) *m.temperature_c += static_cast<int>(i);
    h.Push(PointFromSample(m));
  }
  return h;
}

}  // namespace headroom::testing
