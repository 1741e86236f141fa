// Verdict, anchors and advice: what the footprint means against the budget.
//
// The verdict is the pool's judge (JudgePool, sys/pool_levels.h) on the larger of the steady
// and load peaks: the reserve for the OS is set aside from what the run leaves of MemAvailable;
// it fits when the rest is at least the guard's warning level, is tight between the warning
// and the kill level, and does not fit below the kill level; with --budget SIZE, fits under
// 90 % of SIZE, tight within the last 10 %, does not fit over it (docs/config.md "The
// levels"). Advice follows the OOM ladder's order: a shorter packing first, then a smaller
// batch, then a cheaper method, then a smaller model; each entry carries the verdict of the
// plan it proposes, from the same judge.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/message.h"
#include "model/model_spec.h"
#include "plan/budget.h"
#include "plan/footprint.h"
#include "plan/workload.h"

namespace headroom {

// The pool's verdict (sys/pool_levels.h): kFits, kTight, kDoesNotFit.
using Verdict = PoolVerdict;
// "fits", "tight", "does not fit": an identifier (doctor compares it, the ladder's journal
// stores it); never translated.
std::string_view Name(Verdict v);
// The word for people, as a message value: the terminal shows it translated, alone or in a
// sentence that names the verdict ("... (fits)").
Message VerdictWord(Verdict v);
// plan --json's spelling of a verdict, for every object that carries one (the plan, its advice,
// its pools, --solve, the pipeline's stages): "fits", "tight", "does_not_fit".
std::string_view VerdictKey(Verdict v);

// A peak against a pool of `budget_bytes` alone (--budget SIZE: BudgetLevels).
Verdict Judge(uint64_t peak_bytes, uint64_t budget_bytes);
// A peak against the plan's budget: MemAvailable and the pool's levels, or --budget's size.
// The one judge of plan, its advice and the ladder.
Verdict Judge(uint64_t peak_bytes, const Budget& budget);

// What the verdict means against the guard's levels, in words with the figures: "leaves 12.1
// GiB: below the guard's warning level 19.5 GiB, above its kill level 9.7 GiB; the companion
// will be asked for a checkpoint". Empty (no text) with --budget SIZE.
Message LevelsLine(uint64_t peak_bytes, const Budget& budget);

// A known-working configuration reported by users of these machines.
struct Anchor {
  std::string id;         // "70b-qlora"
  std::string statement;  // "70B QLoRA about 40 GB" (English: plan --json's anchor.statement;
                          // marked N_, the terminal translates it)
  std::string model;      // catalog name
  Method method = Method::kLora;
  int64_t seq = 2048;
  std::optional<uint64_t> reported_bytes;  // the reported peak, when one was given
  std::string source;
  // The stack it was measured with (its profile plans the anchor's own setup), and whether
  // the report names one (false: planned as hf, and the plan says the stack is not stated).
  Framework framework = Framework::kHf;
  bool framework_stated = false;
  int64_t batch = 1;
};

const std::vector<Anchor>& KnownAnchors();

struct AnchorMatch {
  const Anchor* anchor = nullptr;
  uint64_t anchor_estimate_bytes = 0;  // this planner's estimate of the anchor's own setup
  double ratio = 0;       // anchor_estimate / reported (1.0 = agrees), 0 when nothing reported
  double plan_ratio = 0;  // this plan's peak / the anchor's reported (or estimated) peak
};

// An anchor is shown only for a plan of the same method whose model is within this factor of
// the anchor's parameter count, either way.
inline constexpr double kAnchorParamFactor = 2.0;

// The anchor closest to this plan: of the same method and within kAnchorParamFactor of its
// parameter count, the nearest in size; none (anchor nullptr) when no anchor is that close.
AnchorMatch ClosestAnchor(const ModelSpec& spec, const Workload& workload, uint64_t plan_peak,
                          const FootprintOptions& options);

struct Advice {
  std::string step;  // "seq", "batch", "method", "model"
  // "shorten the packing: --seq 1536 is the largest that fits": a message value, English in
  // data (plan --json, the ladder's journal, doctor's env-report.json), translated on screen.
  Message text;
  std::optional<int64_t> value;
  std::string method;       // for "method"
  std::string model;        // for "model"
  uint64_t peak_bytes = 0;  // for "devices": per node
  std::string sharding;     // for "devices": fsdp (value: the device count)
  // The verdict of the plan this entry proposes (Judge on its peak_bytes); kFits for the
  // "largest that fits" and smaller-model entries, kDoesNotFit for entries with no plan.
  Verdict verdict = Verdict::kDoesNotFit;
};

// Advice when the verdict is tight or does not fit, in the OOM ladder's order. Each entry
// is computed with the planner (the largest --seq that fits, the largest --batch, the
// next cheaper method, the largest catalog model of the same family that fits), then the
// same run fully sharded (FSDP) over two Sparks, never tensor parallelism over the link, with
// its per-node peak; or FSDP over the same devices when a ddp/zero2 plan for N does not fit.
std::vector<Advice> AdviseWithinBudget(const ModelSpec& spec, const Workload& workload,
                                       const Budget& budget, const FootprintOptions& options);
// Against a pool of `budget_bytes` alone (as --budget SIZE).
std::vector<Advice> AdviseWithinBudget(const ModelSpec& spec, const Workload& workload,
                                       uint64_t budget_bytes, const FootprintOptions& options);

}  // namespace headroom
