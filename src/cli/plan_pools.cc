#include "cli/plan_pools.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <vector>

#include "cli/common_flags.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "config/pool_levels_config.h"
#include "gpu/nvml.h"
#include "gpu/platform.h"

namespace headroom {
namespace {

// Whether plan may read this machine's GPU: the budget is this machine's (no other root), or
// the user named the library.
bool MayReadNvml(const PlanPoolFlags& flags, const PlanFlags& fl, const CliEnv& env) {
  const char* env_lib = std::getenv("HEADROOM_NVML_LIB");
  if (!flags.nvml_lib.empty() || (env_lib && *env_lib)) return true;
  return fl.root.empty() && env.default_root == std::filesystem::path("/");
}

// The first device's readings as a profile (gpu/platform.h DetectPlatform); nullopt when the
// default NVML does not open or there is no device. A --nvml-lib that does not load is a
// UsageError.
std::optional<std::pair<PlatformProfile, GpuReading>> ReadGpu(const PlanPoolFlags& flags) {
  auto nvml = Nvml::Open(ResolveNvmlLibrary(flags.nvml_lib, std::getenv));
  // A library the user named must load; the default one may be absent (no GPU here).
  if (!nvml && !flags.nvml_lib.empty()) {
    throw UsageError{"--nvml-lib: " + TranslatedText(nvml.error().what)};
  }
  if (!nvml || (*nvml)->device_count() == 0) return std::nullopt;
  std::vector<GpuReading> gpus;
  for (unsigned i = 0; i < (*nvml)->device_count(); ++i) gpus.push_back((*nvml)->ReadDevice(i));
  return std::pair{DetectPlatform(gpus), gpus.front()};
}

// The device pool NVML reports: its free memory is the budget.
std::optional<DevicePool> NvmlDevicePool(const PlatformProfile& profile, const GpuReading& gpu) {
  if (profile.kind != PlatformKind::kDiscrete || !gpu.memory_total_bytes) return std::nullopt;
  DevicePool d;
  d.name = profile.gpu_name;
  d.total_bytes = *gpu.memory_total_bytes;
  const uint64_t used = gpu.memory_used_bytes.value_or(0);
  d.budget_bytes = gpu.memory_free_bytes.value_or(d.total_bytes > used ? d.total_bytes - used : 0);
  d.source = "NVML free memory of device 0, " + d.name;
  d.measured = true;
  return d;
}

// --target: the platform it names, the device it has, a Spark's profile budget.
void ApplyTarget(const CliEnv& env, const PlanTarget& t, PlanInputs* in, PlanPools* pools) {
  in->options.unified_memory = t.unified;
  if (t.unified) {
    const bool given_budget = in->budget.source == "--budget";
    // This machine's level settings on a Spark's MemTotal, with the reserve plan resolved.
    LevelInputs levels = LevelInputsOf(env.config.settings);
    const PoolLevel& reserve = in->budget.levels.reserve;
    levels.reserve = GivenLevel{reserve.bytes, std::nullopt, reserve.origin, reserve.where};
    in->budget = Gb10ProfileBudget(
        levels, given_budget ? std::optional(in->budget.budget_bytes) : std::nullopt);
    in->options.pool_bytes = in->budget.pool_bytes();
    return;
  }
  DevicePool d;
  d.name = t.name;
  d.total_bytes = t.device_bytes;
  d.budget_bytes = t.device_bytes;
  d.source = "--target " + t.name + ": the whole card, not measured here";
  pools->device = d;
  // The target's host is not this machine: judged only against a --budget given for it.
  pools->host_known = in->budget.source == "--budget";
}

}  // namespace

void AddPlanPoolFlags(CLI::App& app, PlanPoolFlags& flags) {
  app.add_option("--target", flags.target,
                 Tr("plan for another machine: gb10 (a Spark's platform profile), "
                    "discrete:SIZE, or a card (h100, h200, a100-40gb, a100-80gb, l40s, rtx-4090, "
                    "rtx-5090, rtx-6000-ada, ...)"));
  AddNvmlLibFlag(app, flags.nvml_lib);
}

PlanPools ResolvePlanPools(const PlanPoolFlags& flags, const PlanFlags& fl, const CliEnv& env,
                           PlanInputs* in) {
  PlanPools pools;
  if (!flags.target.empty()) {
    Message error;
    pools.target = ParsePlanTarget(flags.target, &error);
    if (!pools.target) throw UsageError{TranslatedText(error)};
    const std::string kind = pools.target->unified ? "unified" : "discrete";
    if (!fl.platform.empty() && fl.platform != kind) {
      throw UsageError{
          TrFormat("conflicting flags: --target {0} is a {1} machine; --platform says {2}",
                   flags.target, kind, fl.platform)};
    }
    ApplyTarget(env, *pools.target, in, &pools);
    return pools;
  }
  // --platform or [platform] kind decided it (unified_memory is already theirs), else NVML.
  const bool decided = !fl.platform.empty() || env.config.settings.platform_kind.value.has_value();
  if (decided && in->options.unified_memory) return pools;
  if (!MayReadNvml(flags, fl, env)) return pools;
  const auto gpu = ReadGpu(flags);
  if (!gpu) return pools;
  pools.device = NvmlDevicePool(gpu->first, gpu->second);
  if (!decided) in->options.unified_memory = !pools.device.has_value();
  return pools;
}

}  // namespace headroom
