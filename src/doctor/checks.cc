#include "doctor/checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "base/bytes.h"
#include "base/message.h"
#include "doctor/device_headroom.h"
#include "gpu/clock_events.h"
#include "pool/pool_advice.h"

namespace headroom {
namespace {

using V = CheckVerdict;

std::string Joined(const std::vector<std::string>& items, std::string_view separator) {
  return fmt::format("{}", fmt::join(items, separator));
}

// `a` then `b`, as one message (a summary with a part appended).
Message Then(const Message& a, Message b) { return JoinMessages({a, std::move(b)}, ""); }

// `items` (text) with a message between each two (a translated " and ").
Message JoinedWith(const std::vector<std::string>& items, const Message& separator) {
  std::string id;
  std::vector<MessageArg> args;
  for (const auto& item : items) {
    if (!id.empty()) {
      id += "{}";
      args.push_back(std::make_shared<const Message>(separator));
    }
    id += "{}";
    args.push_back(item);
  }
  return Message(std::move(id), std::move(args));
}

// 13000 -> "13.0", 12080 -> "12.8" (the driver API's encoding: 1000 x major + 10 x minor).
std::string CudaVersionText(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

const GpuReading* FirstGpu(const DoctorFacts& f) {
  return f.gpus.empty() ? nullptr : &f.gpus.front();
}

bool IsGb10(const DoctorFacts& f) { return f.platform.kind == PlatformKind::kGb10; }

std::optional<int> DriverCuda(const DoctorFacts& f) {
  const GpuReading* g = FirstGpu(f);
  return g ? g->cuda_driver_version : std::nullopt;
}

std::optional<std::pair<int, int>> ComputeCapability(const DoctorFacts& f) {
  const GpuReading* g = FirstGpu(f);
  if (!g || !g->compute_capability_major || !g->compute_capability_minor) return std::nullopt;
  return std::pair{*g->compute_capability_major, *g->compute_capability_minor};
}

std::optional<int64_t> ParseCount(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  int64_t v = 0;
  const char* end = text->data() + text->size();
  auto [p, ec] = std::from_chars(text->data(), end, v);
  if (ec != std::errc() || p != end || v < 0) return std::nullopt;
  return v;
}

Message EnvLine(const DoctorFacts& f) {
  return Msg("Python environment: {} (found by {})", f.python->prefix.string(), f.python->found_by);
}

const Distribution* Dist(const DoctorFacts& f, std::string_view name) {
  auto it = f.distributions.find(name);
  return it == f.distributions.end() ? nullptr : &it->second;
}

// `title` is a literal marked with N_, a message id.
CheckResult Make(std::string id, const char* title) {
  CheckResult r;
  r.id = std::move(id);
  r.title = MsgFrom(title);
  return r;
}

// The names of the clock-event reasons in `names`, for people (gpu/clock_events.h).
Message ShownReasons(const std::vector<std::string>& names) {
  std::vector<Message> shown;
  for (const auto& n : names) shown.push_back(ClockEventReasonWord(n));
  return JoinMessages(shown, ", ");
}

CheckResult& Set(CheckResult& r, V verdict, Message summary) {
  r.verdict = verdict;
  r.summary = std::move(summary);
  return r;
}

}  // namespace

std::string_view CheckVerdictName(CheckVerdict v) {
  switch (v) {
    case V::kPass:
      return "pass";
    case V::kWarn:
      return "warn";
    case V::kFail:
      return "fail";
    case V::kSkip:
      return "skip";
    case V::kInfo:
      return "info";
  }
  return "info";
}

// G1: torch's CUDA (torch/version.py) against the driver's (NVML), and the libcudart
// majors the loader knows.
CheckResult CheckCudaAbi(const DoctorFacts& f) {
  CheckResult r = Make("G1", N_("CUDA ABI"));
  if (!f.python) {
    r.details.push_back(
        Msg("pass --python PATH (an interpreter or an environment's directory) to check one"));
    return Set(r, V::kSkip, Msg("no Python environment: {}", f.python_error));
  }
  r.details.push_back(EnvLine(f));
  // The loader's libcudart majors.
  std::vector<std::string> majors;
  for (const auto& [major, files] : f.cudart) {
    majors.push_back(fmt::format("libcudart.so.{} ({})", major, files.front().path));
  }
  r.details.push_back(
      majors.empty() ? Msg("no libcudart registered with the loader (torch wheels bring their own)")
                     : Msg("registered with the loader: {}", Joined(majors, ", ")));
  if (!f.env_cudart.empty()) {
    r.details.push_back(Msg("inside the environment: {}", Joined(f.env_cudart, ", ")));
  }
  const bool two_runtimes = f.cudart.size() > 1;
  auto with_runtimes = [&](CheckResult& res) -> CheckResult& {
    if (!two_runtimes) return res;
    std::vector<std::string> list;
    for (const auto& [major, files] : f.cudart) list.push_back(fmt::format(".{}", major));
    res.details.push_back(
        Msg("more than one CUDA runtime major is registered: a library linked against one can load "
            "the other's "
            "symbols or fail with 'libcudart.so.N: cannot open shared object file'; keep one "
            "(remove the other's "
            "ld.so.conf.d entry and run ldconfig)"));
    if (res.verdict == V::kPass || res.verdict == V::kInfo) res.verdict = V::kWarn;
    // TRANSLATORS: appended to a summary; {} lists runtime majors: ".12 and .13".
    res.summary =
        Then(res.summary, Msg("; libcudart {} all registered", JoinedWith(list, Msg(" and "))));
    return res;
  };

  if (!f.torch) {
    if (!f.torch_error.empty()) {
      return with_runtimes(Set(r, V::kSkip, Msg("torch/version.py unreadable: {}", f.torch_error)));
    }
    return with_runtimes(
        Set(r, V::kInfo, Msg("torch is not installed in {}", f.python->prefix.string())));
  }
  const TorchBuild& t = *f.torch;
  r.details.push_back(
      t.cuda  ? Msg("torch {} ({}): built for CUDA {}", t.version, t.file.string(), *t.cuda)
      : t.hip ? Msg("torch {} ({}): built for ROCm (HIP {})", t.version, t.file.string(), *t.hip)
              : Msg("torch {} ({}): built for CPU only", t.version, t.file.string()));
  if (t.hip)
    return with_runtimes(
        Set(r, V::kInfo, Msg("torch {} is a ROCm build: no CUDA ABI to check", t.version)));
  if (!t.cuda) {
    if (!f.gpus.empty()) {
      r.details.push_back(
          Msg("install a CUDA build of torch (the cu13x wheels on a DGX OS machine)"));
      return with_runtimes(
          Set(r, V::kWarn, Msg("torch {} is a CPU build: it will not use the GPU", t.version)));
    }
    return with_runtimes(
        Set(r, V::kInfo, Msg("torch {} is a CPU build; no NVIDIA GPU answered here", t.version)));
  }
  const auto torch_cuda = ParseMajorMinor(*t.cuda);
  if (!torch_cuda) {
    return with_runtimes(
        Set(r, V::kSkip, Msg("torch's CUDA version '{}' is not MAJOR.MINOR", *t.cuda)));
  }
  const auto driver = DriverCuda(f);
  if (!driver) {
    return with_runtimes(
        Set(r, f.gpus.empty() ? V::kInfo : V::kSkip,
            f.gpus.empty() ? Msg("torch {} built for CUDA {}; no NVIDIA driver answered ({})",
                                 t.version, *t.cuda, f.gpu_error)
                           : Msg("torch {} built for CUDA {}; the driver's CUDA version was not "
                                 "readable",
                                 t.version, *t.cuda)));
  }
  const int dmaj = *driver / 1000, dmin = (*driver % 1000) / 10;
  const std::string torch_version = *t.cuda, driver_version = CudaVersionText(*driver);
  if (torch_cuda->first != dmaj) {
    if (dmaj > torch_cuda->first) {
      // TRANSLATORS: {0} the driver's CUDA major, {1} torch's CUDA major, {2} the driver's
      // CUDA minor: "cu{0}{2}" names a wheel (cu130).
      r.details.push_back(
          Msg("the driver is CUDA {0}.x and this torch was built for {1}.x: its wheels want "
              "libcudart.so.{1} and kernels "
              "built before this GPU's stack; install torch built for CUDA {0}.x (e.g. a "
              "cu{0}{2} wheel)",
              dmaj, torch_cuda->first, dmin));
    } else {
      r.details.push_back(
          Msg("the driver is older than the CUDA torch was built for: CUDA calls fail with "
              "'driver too old'; update the "
              "driver, or install torch built for CUDA {}.x",
              dmaj));
    }
    return with_runtimes(
        Set(r, V::kFail,
            Msg("torch CUDA {} vs driver CUDA {}: major mismatch", torch_version, driver_version)));
  }
  if (torch_cuda->second > dmin) {
    r.details.push_back(
        Msg("same major: minor-version compatibility runs most code, but PTX JIT and newer "
            "features fail; update the driver to CUDA {} or later",
            *t.cuda));
    return with_runtimes(Set(r, V::kWarn,
                             Msg("torch CUDA {} vs driver CUDA {}: torch is newer than the driver",
                                 torch_version, driver_version)));
  }
  return with_runtimes(
      Set(r, V::kPass, Msg("torch CUDA {} vs driver CUDA {}", torch_version, driver_version)));
}

// G2: flash-attn in the environment; on GB10 it has no sm_121 kernels.
CheckResult CheckFlashAttn(const DoctorFacts& f) {
  CheckResult r = Make("G2", N_("flash-attn"));
  if (!f.python) return Set(r, V::kSkip, Msg("no Python environment: {}", f.python_error));
  r.details.push_back(EnvLine(f));
  const Distribution* fa = Dist(f, "flash-attn");
  if (fa)
    r.details.push_back(
        Message::Literal(fmt::format("flash-attn {} ({})", fa->version, fa->metadata.string())));
  if (IsGb10(f)) {
    if (fa) {
      r.details.push_back(Msg(
          "flash-attn ships no sm_121 kernels: on GB10 it fails or falls back; use PyTorch SDPA "
          "(attn_implementation=\"sdpa\" in transformers) and uninstall flash-attn if a "
          "framework picks it up"));
      return Set(r, V::kWarn,
                 Msg("flash-attn {} installed: no sm_121 kernels on GB10, use SDPA", fa->version));
    }
    return Set(r, V::kPass, Msg("not installed: SDPA is the working attention on GB10"));
  }
  if (f.gpus.empty()) {
    return Set(r, V::kInfo,
               fa ? Msg("flash-attn {} installed; no GPU here", fa->version)
                  : Msg("not installed; no GPU here"));
  }
  if (fa) return Set(r, V::kPass, Msg("flash-attn {} installed", fa->version));
  return Set(r, V::kInfo, Msg("not installed: attention will use PyTorch SDPA"));
}

// The guards that end a job before a full pool freezes the machine (docs/guardian.md).
void AddMemoryGuardLines(const DoctorFacts& f, CheckResult& r) {
  std::string names;
  for (const auto& g : f.memory_guards) names += (names.empty() ? "" : ", ") + g;
  if (f.memory_guards.empty()) {
    r.details.push_back(
        Msg("no memory guard runs here (earlyoom, systemd-oomd, headroom guardian): a full pool "
            "freezes the machine; see docs/guardian.md"));
  } else if (f.memory_guards.size() > 1) {
    r.details.push_back(
        Msg("two memory guards run here ({}): they race for one victim; keep one", names));
  } else {
    r.details.push_back(Msg("memory guards running here: {}", names));
  }
}

// G3: the pool as /proc/meminfo sees it, and what nvidia-smi would claim.
CheckResult CheckUmaHeadroom(const DoctorFacts& f) {
  if (JudgesDeviceMemory(f)) return CheckDeviceHeadroom(f);  // a discrete GPU's own pool
  CheckResult r = Make("G3", N_("UMA headroom"));
  if (!f.meminfo) return Set(r, V::kSkip, Msg("/proc/meminfo unreadable: {}", f.meminfo_error));
  const MemInfo& m = *f.meminfo;
  const auto total = m.total_bytes();
  const auto available = m.EstimatedAvailable();
  const auto cache = m.reclaimable_page_cache_bytes();
  const auto free = m.free_bytes();
  if (!total || !available)
    return Set(r, V::kSkip, Msg("/proc/meminfo has no MemTotal or MemAvailable"));
  r.details.push_back(Msg("MemAvailable {} of MemTotal {} ({}): the budget headroom plans against",
                          FormatGiB(available->bytes), FormatGiB(*total), available->source));
  // TRANSLATORS: a size that could not be read.
  const Message free_text = free ? Message::Literal(FormatGiB(*free)) : Msg("unknown");
  if (cache) {
    r.details.push_back(
        Msg("page cache the kernel can drop: {} (Cached + Buffers + SReclaimable - Shmem); "
            "MemFree {}",
            FormatGiB(*cache), free_text));
  }
  const GpuReading* g = FirstGpu(f);
  if (f.platform.memory_source == MemorySource::kMemInfo && g) {
    r.details.push_back(
        Msg("nvidia-smi shows this GPU's memory as [N/A] (NVML answers not supported on "
            "unified memory); "
            "cudaMemGetInfo counts page cache as used, so its 'free' is nearer MemFree ({}) "
            "than MemAvailable ({})",
            free_text, FormatGiB(available->bytes)));
  }
  AddMemoryGuardLines(f, r);
  const Message figures =
      Msg("MemAvailable {} of {}", FormatGiB(available->bytes), FormatGiB(*total));
  if (cache &&
      static_cast<double>(*cache) >= kLargePageCacheFraction * static_cast<double>(*total)) {
    r.details.push_back(
        Msg("a large page cache is given back under pressure, but slowly enough to stall a model "
            "load; drop it "
            "between runs: sudo sh -c 'sync; echo 3 > /proc/sys/vm/drop_caches' (headroom ladder "
            "step 1 does this "
            "on request)"));
    return Set(r, V::kWarn, Msg("{} page cache ({})", FormatGiB(*cache), figures));
  }
  return Set(r, V::kPass, figures);
}

// G4: temperature, power against the platform's figures, clocks and their reasons.
CheckResult CheckThermal(const DoctorFacts& f) {
  CheckResult r = Make("G4", N_("thermal snapshot"));
  const GpuReading* g = FirstGpu(f);
  if (!g) {
    if (f.hottest_c) {
      return Set(r, V::kInfo,
                 Msg("no GPU; hottest sensor {} at {:.1f} °C", *f.hottest_sensor, *f.hottest_c));
    }
    return Set(r, V::kInfo, Msg("no GPU and no temperature sensor readable"));
  }
  std::vector<Message> parts;
  std::vector<Message> warnings;
  if (g->temperature_c) {
    parts.push_back(Message::Literal(fmt::format("{} °C", *g->temperature_c)));
    if (*g->temperature_c >= kHotGpuC) warnings.push_back(Msg("GPU at {} °C", *g->temperature_c));
  }
  if (g->power_mw) {
    Message p = Message::Literal(fmt::format("{:.1f} W", *g->power_mw / 1000.0));
    if (f.platform.sustained_power_mw) {
      const double share = 100.0 * *g->power_mw / *f.platform.sustained_power_mw;
      const double figure_w = *f.platform.sustained_power_mw / 1000.0;
      const Message rated =
          f.platform.rated_power_mw && *f.platform.rated_power_mw != *f.platform.sustained_power_mw
              ? Msg("; rated {:.0f} W", *f.platform.rated_power_mw / 1000.0)
              : Message::Literal("");
      // TRANSLATORS: after a power reading: "(42 % of the 100 W sustained figure; rated 240 W)";
      // {2} is the "; rated ..." part or empty.
      p = Then(p, IsGb10(f) ? Msg(" ({0:.0f} % of the {1:.0f} W sustained figure{2})", share,
                                  figure_w, rated)
                            : Msg(" ({0:.0f} % of the {1:.0f} W enforced limit figure{2})", share,
                                  figure_w, rated));
    }
    parts.push_back(p);
  }
  if (g->sm_clock_mhz) {
    parts.push_back(Message::Literal(fmt::format("SM {} MHz", *g->sm_clock_mhz)));
    const bool loaded = g->gpu_utilization_pct && *g->gpu_utilization_pct >= 50;
    if (loaded && InDegradedClockBand(f.platform, *g->sm_clock_mhz)) {
      warnings.push_back(
          Msg("SM clock {} MHz under {} % load", *g->sm_clock_mhz, *g->gpu_utilization_pct));
      r.details.push_back(
          Msg("GB10's degraded state holds clocks at {}-{} MHz with no throttle reason set, "
              "and only a full power-off "
              "clears it (unplug, wait, restart)",
              kGb10DegradedSmClockMinMhz, kGb10DegradedSmClockMaxMhz));
    }
  }
  if (g->clock_event_reasons) {
    const auto names = DecodeClockEventReasons(*g->clock_event_reasons);
    parts.push_back(names.empty() ? Msg("no clock-event reason")
                                  : Msg("reasons: {}", ShownReasons(names)));
    if (IsClockSlowdown(*g->clock_event_reasons)) {
      std::vector<std::string> slow;
      for (const auto& n : names) {
        if (n != "gpu_idle" && n != "applications_clocks_setting" && n != "display_clock_setting")
          slow.push_back(n);
      }
      warnings.push_back(Msg("clocks held by {}", ShownReasons(slow)));
    }
  }
  if (parts.empty())
    return Set(r, V::kSkip, Msg("NVML gave no temperature, power, clock or reason"));
  r.details.insert(r.details.begin(), Msg("GPU: {}", JoinMessages(parts, ", ")));
  if (!warnings.empty()) {
    r.details.push_back(
        Msg("a slowdown before the run starts only gets worse under load: let it cool, check "
            "airflow, and watch it with headroom watch"));
    return Set(r, V::kWarn, JoinMessages(warnings, "; "));
  }
  return Set(r, V::kPass, JoinMessages(parts, ", "));
}

// G5: copy bandwidth, host and device; on GB10 against the measured 180-192 GB/s.
CheckResult CheckBandwidth(const DoctorFacts& f) {
  CheckResult r = Make("G5", N_("bandwidth"));
  if (!f.bandwidth)
    return Set(r, V::kInfo, Msg("not measured (--no-bandwidth); run headroom bandwidth"));
  const BandwidthFacts& b = *f.bandwidth;
  r.details.push_back(Msg(
      "GB/s: GB = 1e9 bytes, counting bytes read + bytes written (as CUDA's bandwidthTest does)"));
  if (b.host) r.details.push_back(Msg("host copy, {}: {}", b.host->what, DescribeCopy(*b.host)));
  if (!b.host_error.empty()) r.details.push_back(Msg("host copy failed: {}", b.host_error));
  if (b.device)
    r.details.push_back(Msg("device copy, {}: {}", b.device->what, DescribeCopy(*b.device)));
  if (f.gpus.empty() && !b.device) {
    if (!b.host) return Set(r, V::kSkip, Msg("host copy failed: {}", b.host_error));
    return Set(
        r, V::kInfo,
        Msg("host copy {:.1f} GB/s; no GPU, no reference to compare with", b.host->median_gbps));
  }
  if (!b.device) return Set(r, V::kSkip, Msg("device copy not measured: {}", b.device_error));
  const double gbps = b.device->median_gbps;
  if (IsGb10(f)) {
    const Message against = Msg("GB10's measured {:.0f}-{:.0f} GB/s (spec {:.0f} GB/s)",
                                kGb10MeasuredLowGbps, kGb10MeasuredHighGbps, kGb10SpecGbps);
    switch (CompareWithGb10(gbps)) {
      case Gb10Band::kBelow:
        r.details.push_back(
            Msg("another job copying, clocks held down (G4) or a degraded state; rerun when idle"));
        return Set(r, V::kWarn, Msg("device copy {:.1f} GB/s, below {}", gbps, against));
      case Gb10Band::kWithin:
        return Set(r, V::kPass, Msg("device copy {:.1f} GB/s, within {}", gbps, against));
      case Gb10Band::kAbove:
        return Set(r, V::kPass, Msg("device copy {:.1f} GB/s, above {}", gbps, against));
    }
  }
  return Set(r, V::kInfo, Msg("device copy {:.1f} GB/s (no reference figure for this GPU)", gbps));
}

// G6: who else holds the pool (the `ps` survey), with the workload's need when given.
CheckResult CheckContention(const DoctorFacts& f) {
  CheckResult r = Make("G6", N_("contention"));
  std::vector<Message> listed;
  for (size_t i = 0; i < f.holders.size(); ++i) {
    const PoolHolder& h = f.holders[i];
    if (h.part_of) continue;
    const HolderCap& cap = f.caps[i];
    Message capt = cap.pool_fraction      ? Msg("cap {:.2f} ({})", *cap.pool_fraction, cap.source)
                   : cap.cap_bytes        ? Msg("cap {}", FormatGiB(*cap.cap_bytes))
                   : cap.fixed_after_load ? Msg("fixed at load")
                                          : Msg("no cap");
    // TRANSLATORS: {0} a program kind ("vllm"), {1} its pid, {2} a size, {3} its cap.
    listed.push_back(Msg("{0} pid {1} holds {2}, {3}", HolderKindName(h.kind), h.facts.pid,
                         FormatGiB(HeldBytes(h)), capt));
  }
  for (const auto& l : listed) r.details.push_back(l);
  if (listed.empty()) return Set(r, V::kPass, Msg("no other process holds the pool"));
  const auto total = f.meminfo ? f.meminfo->total_bytes() : std::nullopt;
  if (f.workload && total) {
    const PoolAdvice advice = AdviseBesideJob(f.holders, f.caps, f.workload->peak_bytes, *total);
    for (const auto& a : advice.holders) {
      if (a.action == HolderAction::kPartOf) continue;
      r.details.push_back(
          JoinMessages({Message::Literal(fmt::format("pid {}", a.pid)), a.arithmetic}, ": "));
      if (a.action == HolderAction::kStop && !a.stop_command.empty()) {
        r.details.push_back(Msg("  to stop it (not done by headroom): {}", a.stop_command));
      }
    }
    return Set(r, advice.fits ? V::kPass : V::kWarn, advice.summary);
  }
  r.details.push_back(
      Msg("one heavy job at a time: headroom ps --need SIZE says which can stay beside your job"));
  const Message first = Then(listed.front(), Message::Literal(listed.size() > 1 ? ", ..." : ""));
  return Set(r, V::kWarn,
             MsgPlural("{} process holds or will grab the pool: {}",
                       "{} processes hold or will grab the pool: {}", listed.size(), listed.size(),
                       first));
}

// G7: compute capability and whether builds target sm_121a.
CheckResult CheckPrecision(const DoctorFacts& f) {
  CheckResult r = Make("G7", N_("precision"));
  const auto cc = ComputeCapability(f);
  if (!cc) {
    return Set(r, f.gpus.empty() ? V::kInfo : V::kSkip,
               f.gpus.empty() ? Msg("no GPU") : Msg("compute capability unreadable"));
  }
  const Message cc_text = Msg("compute capability {}.{}", cc->first, cc->second);
  if (!(cc->first == 12 && cc->second == 1)) return Set(r, V::kInfo, cc_text);
  r.details.push_back(
      Msg("NVFP4 without sm_121a kernels runs about 32 % slower than FP8; BF16 and FP8 do not "
          "depend on it"));
  std::vector<Message> warnings;
  if (f.torch_cuda_arch_list) {
    const std::string& list = *f.torch_cuda_arch_list;
    const bool has =
        list.find("12.1a") != std::string::npos || list.find("121a") != std::string::npos;
    r.details.push_back(
        has ? Msg("TORCH_CUDA_ARCH_LIST={}: extensions built here get sm_121a kernels", list)
            : Msg("TORCH_CUDA_ARCH_LIST={}: no 12.1a in it: extensions built here (and NVFP4 "
                  "kernels) miss sm_121a",
                  list));
    if (!has) warnings.push_back(Msg("TORCH_CUDA_ARCH_LIST lacks 12.1a"));
  } else {
    r.details.push_back(
        Msg("TORCH_CUDA_ARCH_LIST unset: extensions built from source take torch's own list; set "
            "TORCH_CUDA_ARCH_LIST=\"12.1a\" before building them"));
  }
  if (f.torch && f.torch->cuda) {
    const auto tc = ParseMajorMinor(*f.torch->cuda);
    if (tc && (tc->first < 12 || (tc->first == 12 && tc->second < 9))) {
      r.details.push_back(
          Msg("torch {} was built with CUDA {}: sm_121 came with CUDA 12.9, so its kernels run "
              "as sm_120 binaries or through PTX JIT",
              f.torch->version, *f.torch->cuda));
      warnings.push_back(Msg("torch built with CUDA {} predates sm_121", *f.torch->cuda));
    }
  }
  if (!warnings.empty())
    return Set(r, V::kWarn, JoinMessages({cc_text, JoinMessages(warnings, "; ")}, ": "));
  if (f.torch_cuda_arch_list) return Set(r, V::kPass, Msg("{}, builds target sm_121a", cc_text));
  return Set(r, V::kInfo, Then(cc_text, Message::Literal(" (GB10, sm_121)")));
}

// G8: known breakage lives online; doctor never goes there.
CheckResult CheckPlaybooks(const DoctorFacts& f) {
  CheckResult r = Make("G8", N_("playbooks"));
  r.details.push_back(Msg("headroom makes no network access; check by hand before a long run:"));
  r.details.push_back(
      Msg("  NVIDIA/dgx-spark-playbooks issues for your playbook, the DGX OS release notes,"));
  r.details.push_back(
      Msg("  your framework's issues for GB10 / sm_121 / aarch64 (unsloth, vllm, trl, axolotl)"));
  if (IsGb10(f)) {
    r.details.push_back(Msg(
        "NVIDIA supports GB10 on the software stack bundled with DGX OS; users report staying on "
        "driver 580.x"));
  }
  return Set(r, V::kInfo,
             Msg("offline: known breakage not checked (see the links to check by hand)"));
}

// G9: container or bare host, and the installed library versions.
CheckResult CheckContainer(const DoctorFacts& f) {
  CheckResult r = Make("G9", N_("container"));
  for (const auto& e : f.container.evidence) r.details.push_back(Msg("evidence: {}", e));
  if (f.python) {
    std::vector<Message> versions;
    for (auto name : kReportedDistributions) {
      const Distribution* d = Dist(f, name);
      versions.push_back(d ? Message::Literal(fmt::format("{} {}", name, d->version))
                           : Msg("{} not installed", name));
    }
    r.details.push_back(JoinMessages(
        {Message::Literal(f.python->prefix.string()), JoinMessages(versions, ", ")}, ": "));
  }
  if (f.container.in_container && f.gpus.empty()) {
    r.details.push_back(
        Msg("no GPU is visible inside this container: start it with the NVIDIA container toolkit "
            "(docker run --gpus all)"));
  }
  Message where =
      f.container.in_container ? Msg("container ({})", f.container.runtime) : Msg("bare host");
  if (f.python) {
    const Distribution* torch = Dist(f, "torch");
    where = Then(where, torch ? Message::Literal(fmt::format("; torch {}", torch->version))
                              : Msg("; torch not installed"));
  }
  return Set(r, V::kInfo, where);
}

// G10: multi-node settings; tensor parallelism across Sparks fails, DDP/FSDP is the way.
CheckResult CheckMultiNode(const DoctorFacts& f) {
  CheckResult r = Make("G10", N_("multi-node"));
  const auto world = ParseCount(f.world_size);
  const auto nnodes = ParseCount(f.nnodes);
  if (f.world_size) r.details.push_back(Message::Literal("WORLD_SIZE=" + *f.world_size));
  if (f.nnodes) r.details.push_back(Message::Literal("NNODES=" + *f.nnodes));
  const ParallelSetting* widest = nullptr;
  std::string widest_file;
  bool config_error = false;
  for (const auto& c : f.configs) {
    if (!c.error.empty()) {
      r.details.push_back(Message::Literal(fmt::format("{}: {}", c.path, c.error)));
      config_error = true;
      continue;
    }
    for (const auto& s : c.settings) {
      r.details.push_back(
          Message::Literal(fmt::format("{}:{}: {} = {}", c.path, s.line, s.key, s.value)));
      if (!widest || s.value > widest->value) {
        widest = &s;
        widest_file = c.path;
      }
    }
  }
  if (widest && widest->value > 1) {
    const int64_t tp = widest->value;
    const size_t local = f.gpus.size();
    const bool across =
        IsGb10(f) || (nnodes && *nnodes > 1) || (local > 0 && static_cast<size_t>(tp) > local);
    const std::string where =
        fmt::format("{}:{} {} = {}", widest_file, widest->line, widest->key, tp);
    if (across) {
      r.details.push_back(Msg(
          "tensor parallelism splits every layer and talks on every step: across two Sparks it "
          "runs over the network link and stalls or hangs; use data parallelism (DDP, or FSDP to "
          "shard a model too large for one) across machines, tensor parallelism 1"));
      return Set(r, V::kFail, Msg("tensor parallelism {} across machines ({})", tp, where));
    }
    return Set(r, V::kInfo,
               Msg("tensor parallelism {} within this machine's {} GPUs ({})", tp, local, where));
  }
  if (config_error) return Set(r, V::kSkip, Msg("a config could not be read"));
  if ((world && *world > 1) || (nnodes && *nnodes > 1)) {
    // TRANSLATORS: an environment variable that is not set.
    const Message unset = Msg("unset");
    auto count = [&](const std::optional<int64_t>& v) {
      return v ? MessageArg(std::to_string(*v))
               : MessageArg(std::make_shared<const Message>(unset));
    };
    return Set(r, V::kPass,
               Msg("distributed run (WORLD_SIZE {}, NNODES {}) with no tensor parallelism: "
                   "DDP/FSDP is the supported way across Sparks",
                   count(world), count(nnodes)));
  }
  if (!f.configs.empty())
    return Set(r, V::kPass, Msg("no tensor parallelism in the configs; single node"));
  return Set(r, V::kInfo, Msg("single node: no WORLD_SIZE or NNODES, no --config given"));
}

std::vector<CheckResult> RunChecks(const DoctorFacts& f) {
  return {CheckCudaAbi(f),   CheckFlashAttn(f),  CheckUmaHeadroom(f), CheckThermal(f),
          CheckBandwidth(f), CheckContention(f), CheckPrecision(f),   CheckPlaybooks(f),
          CheckContainer(f), CheckMultiNode(f),  CheckDistributed(f)};
}

std::string_view DoctorVerdictName(DoctorVerdict v) {
  switch (v) {
    case DoctorVerdict::kReady:
      return "ready";
    case DoctorVerdict::kReadyWithWarnings:
      return "ready-with-warnings";
    case DoctorVerdict::kBlocked:
      return "blocked";
  }
  return "blocked";
}

DoctorVerdict OverallVerdict(const std::vector<CheckResult>& checks,
                             const std::optional<WorkloadFacts>& workload) {
  bool warn = false;
  for (const auto& c : checks) {
    if (c.verdict == V::kFail) return DoctorVerdict::kBlocked;
    if (c.verdict == V::kWarn || c.verdict == V::kSkip) warn = true;
  }
  if (workload && workload->verdict == "does not fit") return DoctorVerdict::kBlocked;
  if (workload && workload->verdict == "tight") warn = true;
  return warn ? DoctorVerdict::kReadyWithWarnings : DoctorVerdict::kReady;
}

int ExitStatusFor(DoctorVerdict v) {
  switch (v) {
    case DoctorVerdict::kReady:
      return 0;
    case DoctorVerdict::kReadyWithWarnings:
      return 1;
    case DoctorVerdict::kBlocked:
      return 2;
  }
  return 2;
}

Message PlatformLine(const DoctorFacts& f) {
  std::vector<Message> parts;
  parts.push_back(f.arch.empty() ? Msg("unknown architecture") : Message::Literal(f.arch));
  const GpuReading* g = FirstGpu(f);
  if (!g) {
    parts.push_back(f.gpu_error.empty() ? Msg("no NVIDIA GPU")
                                        : Msg("no NVIDIA GPU ({})", f.gpu_error));
  } else {
    Message gpu = g->name ? Message::Literal(*g->name) : Msg("NVIDIA GPU (name unreadable)");
    if (const auto cc = ComputeCapability(f))
      gpu = Then(gpu, Msg(" (compute capability {}.{})", cc->first, cc->second));
    if (f.gpus.size() > 1) gpu = Then(gpu, Msg(", {} GPUs", f.gpus.size()));
    parts.push_back(gpu);
    Message driver =
        g->driver_version ? Msg("driver {}", *g->driver_version) : Msg("driver {}", Msg("unknown"));
    if (g->cuda_driver_version)
      driver = Then(driver, Message::Literal(", CUDA " + CudaVersionText(*g->cuda_driver_version)));
    parts.push_back(driver);
  }
  parts.push_back(IsGb10(f) ? Msg("GB10: yes") : Msg("GB10: no"));
  return JoinMessages(parts, "; ");
}

void ChecksJson(const std::vector<CheckResult>& checks, nlohmann::ordered_json& short_checks,
                nlohmann::ordered_json& details) {
  using Json = nlohmann::ordered_json;
  // The checks' words are message values, rendered here in English: the report is data.
  short_checks = Json::object();
  details = Json::array();
  for (const auto& c : checks) {
    const std::string v(CheckVerdictName(c.verdict));
    const std::string summary = EnglishText(c.summary);
    short_checks[c.id] = c.verdict == V::kPass || summary.empty() ? v : v + ": " + summary;
    Json lines = Json::array();
    for (const auto& d : c.details) lines.push_back(EnglishText(d));
    details.push_back({{"id", c.id},
                       {"title", EnglishText(c.title)},
                       {"verdict", v},
                       {"summary", summary},
                       {"details", lines}});
  }
}

nlohmann::ordered_json ReportJson(const DoctorFacts& f, const std::vector<CheckResult>& checks,
                                  DoctorVerdict verdict) {
  using Json = nlohmann::ordered_json;
  const GpuReading* g = FirstGpu(f);
  const auto cc = ComputeCapability(f);
  Json platform = {
      {"arch", f.arch},
      {"kind", std::string(PlatformKindName(f.platform.kind))},
      {"gb10", IsGb10(f)},
      {"gpu_name", g && g->name ? Json(*g->name) : Json(nullptr)},
      {"gpu_count", f.gpus.size()},
      {"compute_capability",
       cc ? Json(fmt::format("{}.{}", cc->first, cc->second)) : Json(nullptr)},
      {"driver_version", g && g->driver_version ? Json(*g->driver_version) : Json(nullptr)},
      {"cuda_driver_version", g && g->cuda_driver_version
                                  ? Json(CudaVersionText(*g->cuda_driver_version))
                                  : Json(nullptr)},
      {"gpu_error", f.gpu_error.empty() ? Json(nullptr) : Json(f.gpu_error)},
      {"container", f.container.in_container ? Json(f.container.runtime) : Json(nullptr)},
  };
  Json short_checks, details;
  ChecksJson(checks, short_checks, details);
  Json headroom = nullptr;
  Json workload = nullptr;
  if (f.workload) {
    const double h = (static_cast<double>(f.workload->budget_bytes) -
                      static_cast<double>(f.workload->peak_bytes)) /
                     1e9;
    headroom = std::round(h * 100) / 100;
    Json advice = Json::array();
    for (const auto& a : f.workload->advice) advice.push_back(EnglishText(a));
    workload = {
        {"description", f.workload->description}, {"plan", EnglishText(f.workload->plan_line)},
        {"peak_bytes", f.workload->peak_bytes},   {"budget_bytes", f.workload->budget_bytes},
        {"verdict", f.workload->verdict},         {"advice", advice}};
    workload["from"] = nullptr;
    if (!f.workload->from_file.empty()) {
      workload["from"] = {{"file", f.workload->from_file},
                          {"format", f.workload->from_format},
                          {"not_modelled", f.workload->not_modelled}};
    }
  }
  std::optional<AvailableEstimate> available;
  if (f.meminfo) available = f.meminfo->EstimatedAvailable();
  const DistributedFacts& d = f.distributed;
  const auto text_or_null = [](const std::optional<std::string>& v) {
    return v ? Json(*v) : Json(nullptr);
  };
  // What doctor --compare lines up across nodes (doctor/fleet.h).
  const Json software = {
      {"torch", f.torch ? Json(f.torch->version) : Json(nullptr)},
      {"torch_cuda", f.torch ? text_or_null(f.torch->cuda) : Json(nullptr)},
      {"nccl", text_or_null(EffectiveNccl(d))},
      {"nccl_wheel", d.nccl_wheel ? Json(d.nccl_wheel_name + " " + *d.nccl_wheel) : Json(nullptr)},
      {"nccl_system", text_or_null(d.nccl_system)},
      {"ray", text_or_null(d.ray)}};
  Json env = Json::object();
  for (const auto& [name, value] : d.env) env[name] = value;
  const Json distributed = {
      {"env", env},
      {"slurm_conf", d.slurm.path.empty() ? Json(nullptr) : Json(d.slurm.path)},
      {"kill_on_bad_exit",
       d.slurm.kill_on_bad_exit ? Json(*d.slurm.kill_on_bad_exit) : Json(nullptr)}};
  return Json{{"schema_version", 1},
              {"host", f.host.empty() ? Json(nullptr) : Json(f.host)},
              {"platform", platform},
              {"software", software},
              {"distributed", distributed},
              {"checks", short_checks},
              {"check_details", details},
              {"headroom_gb", headroom},
              {"mem_available_gb",
               available ? Json(std::round(static_cast<double>(available->bytes) / 1e7) / 100)
                         : Json(nullptr)},
              {"workload", workload},
              {"verdict", std::string(DoctorVerdictName(verdict))}};
}

std::string ReportJsonText(const DoctorFacts& f, const std::vector<CheckResult>& checks,
                           DoctorVerdict verdict) {
  return ReportJson(f, checks, verdict)
             .dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

}  // namespace headroom
