#include "export/metrics.h"

#include <fmt/format.h>

#include <cmath>
#include <deque>

#include "gpu/clock_events.h"
#include "sys/pool_levels.h"

namespace headroom {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Families {
 public:
  MetricFamily& Add(std::string name, std::string type, std::string unit, std::string help) {
    families_.push_back({std::move(name), std::move(help), std::move(type), std::move(unit), {}});
    return families_.back();
  }
  std::vector<MetricFamily> Take() {
    std::vector<MetricFamily> out;
    for (auto& f : families_) {
      if (!f.samples.empty()) out.push_back(std::move(f));
    }
    return out;
  }

 private:
  std::deque<MetricFamily> families_;  // a deque: Add's references stay valid as it grows
};

void AddIf(MetricFamily& f, const std::optional<uint64_t>& v, Labels labels = {}) {
  if (v) f.samples.push_back({std::move(labels), static_cast<double>(*v)});
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{}", v);
}

std::string EscapeHelp(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out.push_back(c);
  }
  return out;
}

std::string SampleLine(const std::string& name, const MetricSample& s) {
  std::string line = name;
  if (!s.labels.empty()) {
    line.push_back('{');
    for (size_t i = 0; i < s.labels.size(); ++i) {
      if (i > 0) line.push_back(',');
      line += fmt::format("{}=\"{}\"", s.labels[i].first, EscapeLabelValue(s.labels[i].second));
    }
    line.push_back('}');
  }
  line.push_back(' ');
  line += FormatValue(s.value);
  line.push_back('\n');
  return line;
}

}  // namespace

std::string EscapeLabelValue(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out.push_back(c);
  }
  return out;
}

void ThrottleAccumulator::Add(const std::vector<GpuReading>& gpus, double period_seconds) {
  for (const auto& g : gpus) {
    auto& per = seconds_[g.index];
    if (!g.clock_event_reasons) continue;
    for (const auto& reason : DecodeClockEventReasons(*g.clock_event_reasons)) {
      if (reason == "gpu_idle" || reason == "applications_clocks_setting" ||
          reason == "display_clock_setting") {
        continue;
      }
      per[reason] += period_seconds;
    }
    // Every slowdown reason exists as a series from the first sample, at 0 when never seen,
    // so rate() works from the start.
    for (const auto& r : kClockEventReasons) {
      if (IsClockSlowdown(r.bit)) per.try_emplace(std::string(r.name), 0.0);
    }
  }
}

namespace {

// /proc/meminfo.
void AddMemory(Families& fam, const ExportSnapshot& s) {
  auto& mem_total =
      fam.Add("headroom_memory_total_bytes", "gauge", "bytes", "MemTotal from /proc/meminfo.");
  auto& mem_avail =
      fam.Add("headroom_memory_available_bytes", "gauge", "bytes",
              "MemAvailable from /proc/meminfo: what a new job can get without swapping.");
  auto& mem_free =
      fam.Add("headroom_memory_free_bytes", "gauge", "bytes", "MemFree from /proc/meminfo.");
  auto& mem_cached = fam.Add("headroom_memory_cached_bytes", "gauge", "bytes",
                             "Cached (page cache) from /proc/meminfo.");
  auto& mem_reclaim =
      fam.Add("headroom_memory_reclaimable_bytes", "gauge", "bytes",
              "Page cache the kernel can drop: Cached + Buffers + SReclaimable - Shmem.");
  auto& swap_total =
      fam.Add("headroom_swap_total_bytes", "gauge", "bytes", "SwapTotal from /proc/meminfo.");
  auto& swap_free =
      fam.Add("headroom_swap_free_bytes", "gauge", "bytes", "SwapFree from /proc/meminfo.");
  if (s.meminfo) {
    AddIf(mem_total, s.meminfo->total_bytes());
    if (auto a = s.meminfo->EstimatedAvailable())
      mem_avail.samples.push_back(
          {{{"source",
             std::string(a->source == kMemAvailableSourceKernel ? "kernel" : "estimated")}},
           static_cast<double>(a->bytes)});
    AddIf(mem_free, s.meminfo->free_bytes());
    AddIf(mem_cached, s.meminfo->cached_bytes());
    AddIf(mem_reclaim, s.meminfo->reclaimable_page_cache_bytes());
    AddIf(swap_total, s.meminfo->swap_total_bytes());
    AddIf(swap_free, s.meminfo->swap_free_bytes());
  }
}

// PSI: /proc/pressure/memory.
void AddPressure(Families& fam, const ExportSnapshot& s) {
  auto& psi_total =
      fam.Add("headroom_memory_pressure_stalled_seconds", "counter", "seconds",
              "Time tasks stalled on memory since boot (/proc/pressure/memory total): kind=some "
              "(at least one task) or full (all non-idle tasks).");
  auto& psi_avg10 = fam.Add(
      "headroom_memory_pressure_avg10_ratio", "gauge", "ratio",
      "Share of the last 10 s with tasks stalled on memory (/proc/pressure/memory avg10 / 100).");
  if (s.psi) {
    psi_total.samples.push_back(
        {{{"kind", "some"}}, static_cast<double>(s.psi->some.total_us) / 1e6});
    psi_avg10.samples.push_back({{{"kind", "some"}}, s.psi->some.avg10 / 100.0});
    if (s.psi->full) {
      psi_total.samples.push_back(
          {{{"kind", "full"}}, static_cast<double>(s.psi->full->total_us) / 1e6});
      psi_avg10.samples.push_back({{{"kind", "full"}}, s.psi->full->avg10 / 100.0});
    }
  }
}

// The GPU families, registered in this order (the order of the output).
struct GpuFamilies {
  explicit GpuFamilies(Families& fam)
      : temp(fam.Add("headroom_gpu_temperature_celsius", "gauge", "celsius",
                     "GPU temperature (NVML).")),
        power(fam.Add("headroom_gpu_power_watts", "gauge", "watts",
                      "GPU power draw (NVML; on GB10 the GPU only, not the whole box).")),
        power_limit(fam.Add(
            "headroom_gpu_power_limit_watts", "gauge", "watts",
            "Power figure the GPU is held to: kind=enforced (NVML), or GB10's sustained (100 W) "
            "and rated (240 W) figures, which NVML does not report.")),
        energy(fam.Add("headroom_gpu_energy_joules", "counter", "joules",
                       "GPU energy since the driver was loaded (NVML).")),
        clock(fam.Add("headroom_gpu_clock_hertz", "gauge", "hertz",
                      "Current clock (NVML): domain=sm or memory.")),
        clock_max(
            fam.Add("headroom_gpu_clock_max_hertz", "gauge", "hertz", "Maximum SM clock (NVML).")),
        util(fam.Add("headroom_gpu_utilization_ratio", "gauge", "ratio",
                     "Share of the driver's sample window the GPU (kind=gpu) or its memory "
                     "(kind=memory) was busy.")),
        reason_active(fam.Add(
            "headroom_gpu_clock_event_active", "gauge", "",
            "1 while a clock-event (throttle) reason is set, per reason (NVML bit names).")),
        throttle(fam.Add(
            "headroom_gpu_throttle_seconds", "counter", "seconds",
            "Time a slowdown reason was seen active since the exporter started, counted at its "
            "sampling period (resolution: --interval).")),
        gpu_mem_total(fam.Add(
            "headroom_gpu_memory_total_bytes", "gauge", "bytes",
            "GPU memory: source=nvml on discrete GPUs; source=meminfo (MemTotal) on unified "
            "memory (GB10), where NVML reports none.")),
        gpu_mem_used(fam.Add(
            "headroom_gpu_memory_used_bytes", "gauge", "bytes",
            "GPU memory in use: source=nvml, or source=meminfo (MemTotal - MemAvailable) on "
            "unified memory.")),
        proc_mem(fam.Add("headroom_gpu_process_memory_bytes", "gauge", "bytes",
                         "GPU memory per compute process, where NVML reports it.")),
        lost(fam.Add("headroom_gpu_lost", "gauge", "", "1 when NVML answered GPU_IS_LOST.")) {}
  MetricFamily &temp, &power, &power_limit, &energy, &clock, &clock_max, &util, &reason_active,
      &throttle, &gpu_mem_total, &gpu_mem_used, &proc_mem, &lost;
};

// One GPU's readings; on unified memory (GB10) its memory is the pool's, from meminfo.
void AddGpu(GpuFamilies& f, const GpuReading& g, const ExportSnapshot& s) {
  const Labels id = {{"gpu", std::to_string(g.index)}, {"name", g.name.value_or("")}};
  auto with = [&](std::initializer_list<std::pair<std::string, std::string>> extra) {
    Labels l = id;
    l.insert(l.end(), extra.begin(), extra.end());
    return l;
  };
  if (g.temperature_c) f.temp.samples.push_back({id, static_cast<double>(*g.temperature_c)});
  if (g.power_mw) f.power.samples.push_back({id, *g.power_mw / 1000.0});
  if (g.enforced_power_limit_mw)
    f.power_limit.samples.push_back(
        {with({{"kind", "enforced"}}), *g.enforced_power_limit_mw / 1000.0});
  if (g.energy_mj) f.energy.samples.push_back({id, static_cast<double>(*g.energy_mj) / 1000.0});
  if (g.sm_clock_mhz) f.clock.samples.push_back({with({{"domain", "sm"}}), *g.sm_clock_mhz * 1e6});
  if (g.mem_clock_mhz)
    f.clock.samples.push_back({with({{"domain", "memory"}}), *g.mem_clock_mhz * 1e6});
  if (g.max_sm_clock_mhz)
    f.clock_max.samples.push_back({with({{"domain", "sm"}}), *g.max_sm_clock_mhz * 1e6});
  if (g.gpu_utilization_pct)
    f.util.samples.push_back({with({{"kind", "gpu"}}), *g.gpu_utilization_pct / 100.0});
  if (g.memory_utilization_pct)
    f.util.samples.push_back({with({{"kind", "memory"}}), *g.memory_utilization_pct / 100.0});
  if (g.clock_event_reasons) {
    for (const auto& r : kClockEventReasons) {
      f.reason_active.samples.push_back(
          {with({{"reason", std::string(r.name)}}), (*g.clock_event_reasons & r.bit) ? 1.0 : 0.0});
    }
  }
  if (auto it = s.throttle_seconds.find(g.index); it != s.throttle_seconds.end()) {
    for (const auto& [reason, seconds] : it->second)
      f.throttle.samples.push_back({with({{"reason", reason}}), seconds});
  }
  if (g.memory_total_bytes && *g.memory_total_bytes > 0) {
    f.gpu_mem_total.samples.push_back(
        {with({{"source", "nvml"}}), static_cast<double>(*g.memory_total_bytes)});
    if (g.memory_used_bytes)
      f.gpu_mem_used.samples.push_back(
          {with({{"source", "nvml"}}), static_cast<double>(*g.memory_used_bytes)});
  } else if (s.platform.memory_source == MemorySource::kMemInfo && s.meminfo) {
    const auto total = s.meminfo->total_bytes();
    const auto avail = s.meminfo->EstimatedAvailable();
    if (total)
      f.gpu_mem_total.samples.push_back(
          {with({{"source", "meminfo"}}), static_cast<double>(*total)});
    if (total && avail) {
      f.gpu_mem_used.samples.push_back(
          {with({{"source", "meminfo"}}),
           static_cast<double>(*total - std::min(*total, avail->bytes))});
    }
  }
  if (g.processes) {
    for (const auto& p : *g.processes) {
      if (!p.used_bytes) continue;
      auto name = s.process_names.find(p.pid);
      f.proc_mem.samples.push_back(
          {with({{"pid", std::to_string(p.pid)},
                 {"process", name != s.process_names.end() ? name->second : ""}}),
           static_cast<double>(*p.used_bytes)});
    }
  }
  f.lost.samples.push_back({id, g.gpu_lost ? 1.0 : 0.0});
}

// The subset of dcgm-exporter's default counters (etc/default-counters.csv of
// NVIDIA/dcgm-exporter) that its Grafana dashboard (grafana/dcgm-exporter-dashboard.json)
// queries and NVML can answer, in DCGM's units and with its labels (gpu, UUID, device,
// Hostname). On unified memory (GB10) the framebuffer is the pool: FB_USED is MemTotal -
// MemAvailable and FB_FREE MemAvailable, as for headroom_gpu_memory_*.
struct DcgmFamilies {
  explicit DcgmFamilies(Families& fam)
      : temp(fam.Add("DCGM_FI_DEV_GPU_TEMP", "gauge", "", "GPU temperature (in C).")),
        power(fam.Add("DCGM_FI_DEV_POWER_USAGE", "gauge", "", "Power draw (in W).")),
        sm_clock(fam.Add("DCGM_FI_DEV_SM_CLOCK", "gauge", "", "SM clock frequency (in MHz).")),
        mem_clock(
            fam.Add("DCGM_FI_DEV_MEM_CLOCK", "gauge", "", "Memory clock frequency (in MHz).")),
        util(fam.Add("DCGM_FI_DEV_GPU_UTIL", "gauge", "", "GPU utilization (in %).")),
        copy_util(fam.Add("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "", "Memory utilization (in %).")),
        fb_free(fam.Add("DCGM_FI_DEV_FB_FREE", "gauge", "",
                        "Framebuffer memory free (in MiB); on unified memory MemAvailable.")),
        fb_used(fam.Add("DCGM_FI_DEV_FB_USED", "gauge", "",
                        "Framebuffer memory used (in MiB); on unified memory MemTotal - "
                        "MemAvailable.")) {}
  MetricFamily &temp, &power, &sm_clock, &mem_clock, &util, &copy_util, &fb_free, &fb_used;
};

// Free and used bytes of one GPU's memory: NVML's, else the pool's on unified memory.
std::optional<std::pair<uint64_t, uint64_t>> FreeAndUsed(const GpuReading& g,
                                                         const ExportSnapshot& s) {
  if (g.memory_total_bytes && *g.memory_total_bytes > 0 && g.memory_used_bytes) {
    const uint64_t free = g.memory_free_bytes.value_or(
        *g.memory_total_bytes - std::min(*g.memory_total_bytes, *g.memory_used_bytes));
    return std::pair{free, *g.memory_used_bytes};
  }
  if (s.platform.memory_source != MemorySource::kMemInfo || !s.meminfo) return std::nullopt;
  const auto total = s.meminfo->total_bytes();
  const auto avail = s.meminfo->EstimatedAvailable();
  if (!total || !avail) return std::nullopt;
  const uint64_t free = std::min(*total, avail->bytes);
  return std::pair{free, *total - free};
}

void AddDcgm(DcgmFamilies& f, const GpuReading& g, const ExportSnapshot& s) {
  const Labels id = {{"gpu", std::to_string(g.index)},
                     {"UUID", g.uuid.value_or("")},
                     {"device", "nvidia" + std::to_string(g.index)},
                     {"Hostname", s.hostname}};
  auto add = [&](MetricFamily& fam, auto v, double scale = 1) {
    if (v) fam.samples.push_back({id, static_cast<double>(*v) * scale});
  };
  add(f.temp, g.temperature_c);
  add(f.power, g.power_mw, 1e-3);
  add(f.sm_clock, g.sm_clock_mhz);
  add(f.mem_clock, g.mem_clock_mhz);
  add(f.util, g.gpu_utilization_pct);
  add(f.copy_util, g.memory_utilization_pct);
  if (const auto fu = FreeAndUsed(g, s)) {
    constexpr double kPerMiB = 1.0 / (1024 * 1024);
    f.fb_free.samples.push_back({id, std::floor(static_cast<double>(fu->first) * kPerMiB)});
    f.fb_used.samples.push_back({id, std::floor(static_cast<double>(fu->second) * kPerMiB)});
  }
}

// GB10's sustained and rated power figures, which NVML does not report, on the first GPU.
void AddPlatformPowerLimits(MetricFamily& power_limit, const ExportSnapshot& s) {
  if (s.gpus.empty()) return;
  const Labels id = {{"gpu", std::to_string(s.gpus.front().index)},
                     {"name", s.gpus.front().name.value_or("")}};
  auto with = [&](const char* kind) {
    Labels l = id;
    l.emplace_back("kind", kind);
    return l;
  };
  if (s.platform.kind == PlatformKind::kGb10) {
    if (s.platform.sustained_power_mw)
      power_limit.samples.push_back({with("sustained"), *s.platform.sustained_power_mw / 1000.0});
    if (s.platform.rated_power_mw)
      power_limit.samples.push_back({with("rated"), *s.platform.rated_power_mw / 1000.0});
  }
}

// The journal's guard counters.
void AddGuardCounters(Families& fam, const ExportSnapshot& s) {
  auto& kills = fam.Add("headroom_guard_kills", "counter", "",
                        "Guarded runs the guard killed (journal, all time).");
  auto& warnings =
      fam.Add("headroom_guard_warnings", "counter", "",
              "Low-memory warnings the guard recorded across runs (journal, all time).");
  auto& runs = fam.Add("headroom_guard_runs", "counter", "",
                       "Guarded runs recorded in the journal (all time).");
  auto& trials = fam.Add("headroom_sweep_trials_killed", "counter", "",
                         "Sweep trials the guard killed (journal, all time).");
  auto& guardian_kills =
      fam.Add("headroom_guardian_kills", "counter", "",
              "Jobs headroom guardian ended to keep the machine alive (journal, all time).");
  auto& guardian_warnings =
      fam.Add("headroom_guardian_warnings", "counter", "",
              "Low-memory warnings headroom guardian recorded (journal, all time).");
  if (s.guard) {
    guardian_kills.samples.push_back({{}, static_cast<double>(s.guard->guardian_kills)});
    guardian_warnings.samples.push_back({{}, static_cast<double>(s.guard->guardian_warnings)});
    kills.samples.push_back({{}, static_cast<double>(s.guard->guard_kills)});
    warnings.samples.push_back({{}, static_cast<double>(s.guard->guard_warnings)});
    runs.samples.push_back({{}, static_cast<double>(s.guard->guard_runs)});
    trials.samples.push_back({{}, static_cast<double>(s.guard->sweep_trials_killed)});
  }
}

// The running guards' levels and their jobs' steps, and the levels a guard takes by default
// (docs/guard.md: the kill level from sys/pool_levels.h, the warning twice it), which the
// shipped alert rules fall back on when no guard runs (share/prometheus/headroom.rules.yml).
void AddGuardLevels(Families& fam, const ExportSnapshot& s) {
  auto& levels = fam.Add("headroom_guard_level_bytes", "gauge", "bytes",
                         "A running guard's MemAvailable levels: warn and kill.");
  auto& defaults = fam.Add("headroom_guard_default_level_bytes", "gauge", "bytes",
                           "The levels a guard takes when none is given: warn and kill.");
  auto& steps = fam.Add("headroom_guard_steps", "counter", "",
                        "Steps the guarded job's companion recorded (rank 0), since the exporter "
                        "started reading them.");
  auto& last = fam.Add("headroom_guard_last_step_timestamp_seconds", "gauge", "seconds",
                       "Unix time of the guarded job's newest step record.");
  for (const auto& g : s.guarded) {
    const Labels id = {{"run", std::to_string(g.run_id)}, {"kind", g.kind}};
    auto with = [&](const char* level) {
      Labels l = id;
      l.emplace_back("level", level);
      return l;
    };
    if (g.warn_below_bytes > 0)
      levels.samples.push_back({with("warn"), static_cast<double>(g.warn_below_bytes)});
    levels.samples.push_back({with("kill"), static_cast<double>(g.kill_below_bytes)});
    if (g.steps) steps.samples.push_back({id, static_cast<double>(*g.steps)});
    if (g.last_step_wall_s) last.samples.push_back({id, *g.last_step_wall_s});
  }
  if (const auto total = s.meminfo ? s.meminfo->total_bytes() : std::nullopt; total && *total) {
    const uint64_t kill = DefaultKillLevelBytes(*total);
    defaults.samples.push_back({{{"level", "warn"}}, 2.0 * static_cast<double>(kill)});
    defaults.samples.push_back({{{"level", "kill"}}, static_cast<double>(kill)});
  }
}

// The platform, as an info metric.
void AddPlatformInfo(Families& fam, const ExportSnapshot& s) {
  auto& info = fam.Add("headroom_platform_info", "gauge", "",
                       "The machine as headroom sees it; the value is always 1.");
  {
    const GpuReading* g = s.gpus.empty() ? nullptr : &s.gpus.front();
    Labels l = {
        {"kind", std::string(PlatformKindName(s.platform.kind))},
        {"gpu", g && g->name ? *g->name : ""},
        {"driver", g && g->driver_version ? *g->driver_version : ""},
        {"cuda", g && g->cuda_driver_version ? fmt::format("{}.{}", *g->cuda_driver_version / 1000,
                                                           (*g->cuda_driver_version % 1000) / 10)
                                             : ""},
        {"memory_source", s.platform.memory_source == MemorySource::kNvml ? "nvml" : "meminfo"},
        {"arch", s.arch},
        {"version", s.version}};
    info.samples.push_back({std::move(l), 1});
  }
}

// The exporter itself.
void AddExporterSelf(Families& fam, const ExportSnapshot& s) {
  auto& samples =
      fam.Add("headroom_exporter_samples", "counter", "", "Samples the exporter has taken.");
  samples.samples.push_back({{}, static_cast<double>(s.samples_total)});
  auto& duration = fam.Add("headroom_exporter_sample_duration_seconds", "gauge", "seconds",
                           "How long the last sample took to read.");
  duration.samples.push_back({{}, s.last_sample_seconds});
  auto& requests = fam.Add("headroom_exporter_http_requests", "counter", "",
                           "HTTP requests answered, by status code.");
  for (const auto& [code, n] : s.requests_by_code)
    requests.samples.push_back({{{"code", std::to_string(code)}}, static_cast<double>(n)});
}

}  // namespace

std::vector<MetricFamily> BuildFamilies(const ExportSnapshot& s) {
  Families fam;
  AddMemory(fam, s);
  AddPressure(fam, s);
  GpuFamilies gpu(fam);
  for (const auto& g : s.gpus) AddGpu(gpu, g, s);
  AddPlatformPowerLimits(gpu.power_limit, s);
  if (s.dcgm_names) {
    DcgmFamilies dcgm(fam);
    for (const auto& g : s.gpus) AddDcgm(dcgm, g, s);
  }
  AddGuardCounters(fam, s);
  AddGuardLevels(fam, s);
  AddPlatformInfo(fam, s);
  AddExporterSelf(fam, s);
  return fam.Take();
}

std::string RenderPrometheus(const std::vector<MetricFamily>& families) {
  std::string out;
  for (const auto& f : families) {
    const std::string name = f.type == "counter" ? f.name + "_total" : f.name;
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, EscapeHelp(f.help), name, f.type);
    for (const auto& s : f.samples) out += SampleLine(name, s);
  }
  return out;
}

std::string RenderOpenMetrics(const std::vector<MetricFamily>& families) {
  std::string out;
  for (const auto& f : families) {
    out += fmt::format("# TYPE {} {}\n", f.name, f.type);
    // A UNIT must be the name's suffix; a counter's is before _total (OpenMetrics 1.0).
    if (!f.unit.empty()) out += fmt::format("# UNIT {} {}\n", f.name, f.unit);
    out += fmt::format("# HELP {} {}\n", f.name, EscapeHelp(f.help));
    const std::string sample_name = f.type == "counter" ? f.name + "_total" : f.name;
    for (const auto& s : f.samples) out += SampleLine(sample_name, s);
  }
  out += "# EOF\n";
  return out;
}

}  // namespace headroom
