// The pools a plan is judged against, one verdict each (docs/plan.md "Pools").
//
// Unified memory (GB10, Jetson, no GPU) has one pool, the host's: the whole footprint against
// MemAvailable minus the reserve, judged by plan/verdict's rule. A discrete GPU has two: the
// device's own memory holds the device's share (weights, gradients, optimizer states,
// activations, CUDA context, allocator slack: Footprint::peak_bytes() on a discrete plan),
// judged against the device's free memory (NVML) or a target card's size by JudgeDevice; and
// the host holds the host process and what the stack offloads (Footprint::host_peak_bytes),
// judged like a unified pool. The plan's verdict is the worse of the two.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"
#include "plan/budget.h"
#include "plan/verdict.h"

namespace headroom {

struct PlanResult;

// A discrete GPU's own memory.
struct DevicePool {
  std::string name;  // "NVIDIA H200" (NVML), "H100 80GB" (the card table), "discrete:80GiB"
  uint64_t total_bytes = 0;
  // What the device's share may use: NVML's free memory on this machine, a target's whole
  // memory (an idle card).
  uint64_t budget_bytes = 0;
  // English, for plan --json and the terminal: "NVML free memory of device 0", "--target h100
  // (vendor figure, not measured here)".
  std::string source;
  bool measured = false;  // read on this machine (NVML), not a --target
};

// One pool's verdict.
struct PoolJudgement {
  std::string pool;         // "device" or "host"
  uint64_t need_bytes = 0;  // the footprint's share held in this pool
  uint64_t budget_bytes = 0;
  std::string source;              // where the budget came from (English)
  std::optional<Verdict> verdict;  // nullopt: not judged (the pool's size is not known)
};

// The device's rule. The device has no guard and no warning level: what ends a run there is
// the allocator failing, and fragmentation in PyTorch's caching allocator leaves part of the
// free memory unusable. So a device plan fits when its peak stays under 90 % of the free
// memory, is tight in the last 10 %, and does not fit past it.
inline constexpr double kDeviceFragmentationMargin = 0.10;
Verdict JudgeDevice(uint64_t need_bytes, uint64_t budget_bytes);

// The worse of two verdicts (does not fit > tight > fits).
Verdict WorseVerdict(Verdict a, Verdict b);

// Judges the plan's pools and makes the plan's verdict the worse of them. Unified
// (p->options.unified_memory): one host pool, whose verdict is the plan's own (MakePlan's).
// Discrete: the device pool (not judged when `device` is nullopt: no NVML device and no
// --target gave its size) and the host pool (host_peak_bytes against the budget, by the
// host's rule, plan/verdict's Judge); `host_known` false (a --target whose host is not this
// machine, without --budget) leaves the host pool not judged. The advice is then the device's
// (AdviseWithinBudget against its budget) when the device is over, and none otherwise.
std::vector<PoolJudgement> JudgePools(PlanResult* p, const std::optional<DevicePool>& device,
                                      bool host_known = true);

// plan --json's "pools": [{"pool": "device", "need_bytes", "budget_bytes", "source",
// "verdict": "fits"|"tight"|"does_not_fit"|null}, ...].
nlohmann::json PoolsToJson(const std::vector<PoolJudgement>& pools);

// plan --json's "device": {"name", "total_bytes", "budget_bytes", "source", "measured"}.
nlohmann::json DevicePoolToJson(const DevicePool& device);

// --target: the machine a plan is for, when it is not this one.
struct PlanTarget {
  bool unified = true;        // gb10: one pool; discrete: a device pool of device_bytes
  std::string name;           // "gb10", "H100 80GB", "discrete:80GiB"
  uint64_t device_bytes = 0;  // discrete only
};

// "gb10" (also "spark", "dgx-spark"), "discrete:SIZE" (SIZE as --budget takes it), or a card
// of gpu/cards' table. nullopt on anything else, and `*error` is the one line naming
// --target and the accepted forms.
std::optional<PlanTarget> ParsePlanTarget(std::string_view text, Message* error);

// A Spark's budget from its platform profile (gpu/platform.h kGb10MemTotalBytes,
// kGb10IdleMemAvailableBytes) and a Spark's levels (ResolvePoolLevels on its MemTotal with the
// levels given here): judged like a plan on the Spark itself, or against `budget_bytes` when
// --budget gave one. Its source says it is the profile, not measured here.
Budget Gb10ProfileBudget(const LevelInputs& levels, std::optional<uint64_t> budget_bytes);

}  // namespace headroom
