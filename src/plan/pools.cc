// Implementation notes. The host pool on unified memory takes the plan's own verdict rather
// than judging again, so a plan has one host rule whatever MakePlan uses. The device pool's
// rule is JudgeDevice alone: the advice's bisections aim under the same 90 % line
// (AdviseWithinBudget), so advice and verdict agree on the device.
#include "plan/pools.h"

#include <fmt/format.h>

#include "base/bytes.h"
#include "gpu/cards.h"
#include "gpu/platform.h"
#include "plan/plan.h"

namespace headroom {
namespace {

int Rank(Verdict v) {
  switch (v) {
    case Verdict::kFits:
      return 0;
    case Verdict::kTight:
      return 1;
    case Verdict::kDoesNotFit:
      return 2;
  }
  return 2;
}

}  // namespace

Verdict JudgeDevice(uint64_t need, uint64_t budget) {
  if (need > budget) return Verdict::kDoesNotFit;
  const double usable = (1.0 - kDeviceFragmentationMargin) * static_cast<double>(budget);
  return static_cast<double>(need) > usable ? Verdict::kTight : Verdict::kFits;
}

Verdict WorseVerdict(Verdict a, Verdict b) { return Rank(a) >= Rank(b) ? a : b; }

std::vector<PoolJudgement> JudgePools(PlanResult* p, const std::optional<DevicePool>& device,
                                      bool host_known) {
  const Footprint& f = p->footprint;
  const Budget& b = p->budget;
  PoolJudgement host{"host", f.peak_bytes(), b.budget_bytes, b.source, p->verdict};
  if (p->options.unified_memory) return {host};

  PoolJudgement dev{"device", f.peak_bytes(), 0, "", std::nullopt};
  if (device) {
    dev.budget_bytes = device->budget_bytes;
    dev.source = device->source;
    dev.verdict = JudgeDevice(dev.need_bytes, dev.budget_bytes);
  }
  host.need_bytes = f.host_peak_bytes;
  host.verdict = host_known ? std::optional(Judge(host.need_bytes, b)) : std::nullopt;
  if (!host_known) host.budget_bytes = 0;

  std::optional<Verdict> overall;
  for (const auto& v : {dev.verdict, host.verdict}) {
    if (v) overall = overall ? WorseVerdict(*overall, *v) : *v;
  }
  p->verdict = overall.value_or(Verdict::kFits);
  // The advice searches the device's peaks: it helps only where the device is over.
  p->advice.clear();
  if (dev.verdict && *dev.verdict != Verdict::kFits) {
    p->advice = AdviseWithinBudget(p->spec, p->workload, dev.budget_bytes, p->options);
  }
  return {dev, host};
}

nlohmann::json PoolsToJson(const std::vector<PoolJudgement>& pools) {
  nlohmann::json list = nlohmann::json::array();
  for (const PoolJudgement& pool : pools) {
    list.push_back({{"pool", pool.pool},
                    {"need_bytes", pool.need_bytes},
                    {"budget_bytes",
                     pool.verdict ? nlohmann::json(pool.budget_bytes) : nlohmann::json(nullptr)},
                    {"source", pool.source},
                    {"verdict", pool.verdict ? nlohmann::json(VerdictKey(*pool.verdict))
                                             : nlohmann::json(nullptr)}});
  }
  return list;
}

nlohmann::json DevicePoolToJson(const DevicePool& d) {
  return {{"name", d.name},
          {"total_bytes", d.total_bytes},
          {"budget_bytes", d.budget_bytes},
          {"source", d.source},
          {"measured", d.measured}};
}

std::optional<PlanTarget> ParsePlanTarget(std::string_view text, Message* error) {
  if (text == "gb10" || text == "spark" || text == "dgx-spark") return PlanTarget{true, "gb10", 0};
  if (text.starts_with("discrete:")) {
    if (auto size = ParseBytes(text.substr(9))) {
      return PlanTarget{false, std::string(text), *size};
    }
  } else if (const GpuCard* card = FindGpuCard(text)) {
    return PlanTarget{false, std::string(card->name), card->memory_bytes};
  }
  std::string cards;
  for (const GpuCard& card : GpuCards())
    cards += (cards.empty() ? "" : ", ") + std::string(card.key);
  *error =
      Msg("--target: '{}' is not gb10, discrete:SIZE (e.g. discrete:80GiB) or a known card ({})",
          text, cards);
  return std::nullopt;
}

Budget Gb10ProfileBudget(const LevelInputs& levels, std::optional<uint64_t> budget_bytes) {
  Budget b;
  if (budget_bytes) {
    b = BudgetFromSize(*budget_bytes, std::nullopt);
  } else {
    b.levels = ResolvePoolLevels(kGb10MemTotalBytes, levels);
    b.reserve_bytes = b.levels.reserve.bytes;
    b.judged_available_bytes = kGb10IdleMemAvailableBytes;
    const uint64_t floor = b.levels.floor_bytes();
    b.budget_bytes = kGb10IdleMemAvailableBytes > floor ? kGb10IdleMemAvailableBytes - floor : 0;
    b.source =
        "target gb10: idle MemAvailable from the platform profile (not measured here) minus "
        "the reserve and the kill level";
  }
  b.mem_total_bytes = kGb10MemTotalBytes;
  b.mem_available_bytes = kGb10IdleMemAvailableBytes;
  b.available_source = "MemAvailable";
  return b;
}

}  // namespace headroom
