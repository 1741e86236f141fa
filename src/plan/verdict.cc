// Implementation notes. The anchors are the known-working table that DGX Spark owners
// quote (issue #2 of this project collects them from community reports); each carries the
// setup it describes as far as the report states it. The ratio compares this planner's
// estimate of that setup with the reported figure, so a reader can see at once whether
// the planner runs high or low against what people measured.
//
// Advice searches are bisections over monotone functions: the peak grows with seq and
// batch, so the largest value that fits is found in O(log n) plans (each plan is a few
// microseconds).
#include "plan/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/bytes.h"
#include "model/catalog.h"
#include "model/model_family.h"
#include "plan/advice_terms.h"
#include "plan/framework_profile.h"

namespace headroom {
namespace {

uint64_t Peak(const ModelSpec& s, const Workload& w, const FootprintOptions& o) {
  return ComputeFootprint(s, w, o).peak_bytes();
}

// Largest v in [lo, hi] with fits(v), assuming fits is monotone (true then false); 0 if none.
template <typename F>
int64_t LargestFitting(int64_t lo, int64_t hi, F fits) {
  if (hi < lo || !fits(lo)) return 0;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// One piece of advice.
Advice Make(std::string step, Message text, std::optional<int64_t> value, std::string method,
            std::string model, uint64_t peak_bytes) {
  return {std::move(step),  std::move(text), value,        std::move(method),
          std::move(model), peak_bytes,      std::string()};
}

std::optional<Method> CheaperMethod(Method m) {
  switch (m) {
    case Method::kFull:
      return Method::kLora;
    case Method::kLora:
      return Method::kQlora;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::string_view Name(Verdict v) {
  switch (v) {
    case Verdict::kFits:
      return "fits";
    case Verdict::kTight:
      return "tight";
    case Verdict::kDoesNotFit:
      return "does not fit";
  }
  return "?";
}

std::string_view VerdictKey(Verdict v) {
  switch (v) {
    case Verdict::kFits:
      return "fits";
    case Verdict::kTight:
      return "tight";
    case Verdict::kDoesNotFit:
      return "does_not_fit";
  }
  return "?";
}

Message VerdictWord(Verdict v) {
  switch (v) {
    // TRANSLATORS: plan's verdict: the run fits in the memory budget.
    case Verdict::kFits:
      return Msg("fits");
    // TRANSLATORS: plan's verdict: the run fits, but within the last 10 % of the budget.
    case Verdict::kTight:
      return Msg("tight");
    // TRANSLATORS: plan's verdict: the run's peak is over the memory budget.
    case Verdict::kDoesNotFit:
      return Msg("does not fit");
  }
  return Message::Literal("?");
}

Verdict Judge(uint64_t peak, uint64_t budget) {
  return JudgePool(budget, peak, BudgetLevels(budget));
}

Verdict Judge(uint64_t peak, const Budget& budget) {
  return JudgePool(budget.judged_available_bytes, peak, budget.levels);
}

Message LevelsLine(uint64_t peak, const Budget& b) {
  if (b.source == "--budget") return Message{};
  const PoolLevels& l = b.levels;
  const int64_t left = LeftoverBytes(b.judged_available_bytes, peak);
  if (left < 0) {
    // TRANSLATORS: {0} how much the peak is over MemAvailable.
    return Msg("needs {0} more than MemAvailable: it cannot start",
               GiB(static_cast<uint64_t>(-left)));
  }
  const auto leftover = static_cast<uint64_t>(left);
  if (leftover < l.reserve.bytes) {
    // TRANSLATORS: {0} what the run leaves of MemAvailable, {1} the reserve for the OS.
    return Msg("leaves {0}: less than the reserve for the OS, {1}", GiB(leftover),
               GiB(l.reserve.bytes));
  }
  // What the guard would see once the OS has its reserve.
  const uint64_t after = leftover - l.reserve.bytes;
  // TRANSLATORS: {0} what the run leaves of MemAvailable, {1} that less the reserve for the
  // OS, {2} the reserve.
  const Message leaves = l.reserve.bytes
                             ? Msg("leaves {0}, {1} once the reserve for the OS ({2}) is set aside",
                                   GiB(leftover), GiB(after), GiB(l.reserve.bytes))
                             : Msg("leaves {0}", GiB(leftover));
  switch (Judge(peak, b)) {
    case Verdict::kFits:
      // TRANSLATORS: {0} what the run leaves, {1} the guard's warning level.
      return Msg("{0}: at or above the guard's warning level {1}", leaves, GiB(l.warn.bytes));
    case Verdict::kTight:
      // TRANSLATORS: {0} what the run leaves, {1} the warning level, {2} the kill level; the
      // companion is the job's checkpoint hook (docs/companion.md).
      return Msg(
          "{0}: below the guard's warning level {1}, above its kill level {2}; the "
          "companion will be asked for a checkpoint",
          leaves, GiB(l.warn.bytes), GiB(l.kill.bytes));
    case Verdict::kDoesNotFit:
      break;
  }
  // TRANSLATORS: {0} what the run leaves, {1} the guard's kill level.
  return Msg("{0}: below the guard's kill level {1}: the guard would kill it", leaves,
             GiB(l.kill.bytes));
}

const std::vector<Anchor>& KnownAnchors() {
  static const std::vector<Anchor> anchors = {
      // The statements are marked for translation; the terminal shows them translated.
      // Unsloth's Llama-3.3-70B QLoRA notebook (r16, 8-bit AdamW, offloaded checkpointing):
      // the stack is Unsloth, its profile plans the anchor.
      {"70b-qlora", N_("70B QLoRA about 40 GB"), "llama-3.3-70b", Method::kQlora, 2048,
       40'000'000'000ULL, "DGX Spark owners' reports (NVIDIA playbook, Unsloth)",
       Framework::kUnsloth, true},
      {"120b-moe-nvfp4-lora", N_("a ~120B MoE with NVFP4 LoRA about 68 GB"), "gpt-oss-120b",
       Method::kNvfp4Lora, 2048, 68'000'000'000ULL, "DGX Spark owners' reports"},
      {"27b-lora-1024", N_("27B LoRA fits at packing 1024 or less"), "gemma-3-27b", Method::kLora,
       1024, std::nullopt, "DGX Spark owners' reports"},
      {"9b-full", N_("9B full fine-tune fits comfortably"), "gemma-2-9b", Method::kFull, 2048,
       std::nullopt, "DGX Spark owners' reports"},
  };
  return anchors;
}

AnchorMatch ClosestAnchor(const ModelSpec& spec, const Workload& workload, uint64_t plan_peak,
                          const FootprintOptions& options) {
  AnchorMatch best;
  // Like with like: the same method and a size within kAnchorParamFactor either way, else
  // no anchor (an 8B LoRA anchored to a 27B estimate helps nobody).
  double best_score = std::log(kAnchorParamFactor) + 1e-9;  // the factor itself is close
  const double params = static_cast<double>(TotalParams(spec));
  for (const Anchor& a : KnownAnchors()) {
    const ModelSpec* m = FindModel(a.model);
    if (!m || a.method != workload.method) continue;
    const double score = std::fabs(std::log(params / static_cast<double>(TotalParams(*m))));
    if (score < best_score) {
      best_score = score;
      best.anchor = &a;
    }
  }
  if (!best.anchor) return best;
  FootprintOptions single = options;  // anchors were measured on one device
  single.parallel = {};
  // The anchor's setup: its stack's profile plus what the report states.
  Workload aw = ProfileWorkload(best.anchor->framework);
  aw.batch = best.anchor->batch;
  aw.method = best.anchor->method;
  aw.weight_dtype = DefaultWeightDType(aw.method);
  aw.seq = best.anchor->seq;
  best.anchor_estimate_bytes = Peak(*FindModel(best.anchor->model), aw, single);
  const uint64_t reference = best.anchor->reported_bytes.value_or(best.anchor_estimate_bytes);
  if (best.anchor->reported_bytes) {
    best.ratio = static_cast<double>(best.anchor_estimate_bytes) /
                 static_cast<double>(*best.anchor->reported_bytes);
  }
  best.plan_ratio = static_cast<double>(plan_peak) / static_cast<double>(reference);
  return best;
}

std::vector<Advice> AdviseWithinBudget(const ModelSpec& spec, const Workload& workload,
                                       uint64_t budget, const FootprintOptions& options) {
  return AdviseWithinBudget(spec, workload, BudgetFromSize(budget, std::nullopt), options);
}

std::vector<Advice> AdviseWithinBudget(const ModelSpec& spec, const Workload& workload,
                                       const Budget& budget, const FootprintOptions& options) {
  std::vector<Advice> out;
  // Advice aims at "fits", by the plan's own judge: each entry is the verdict of the plan it
  // proposes.
  auto fits = [&](const ModelSpec& s, const Workload& w) {
    return Judge(Peak(s, w, options), budget) == Verdict::kFits;
  };
  // The largest peak that fits, in words where no plan fits (the seq advice's target):
  // MemAvailable less what a fit must leave (the reserve and the warning level).
  const uint64_t fit_line = budget.levels.fit_bytes();
  const uint64_t target =
      budget.judged_available_bytes > fit_line ? budget.judged_available_bytes - fit_line : 0;

  // The largest value of one knob (--seq or --batch) below its current one that fits, and
  // the workload with it; 0 when none does.
  auto shrink = [&](int64_t Workload::*knob, Workload* shrunk) {
    *shrunk = workload;
    const int64_t best = LargestFitting(1, workload.*knob - 1, [&](int64_t v) {
      shrunk->*knob = v;
      return fits(spec, *shrunk);
    });
    shrunk->*knob = best;
    return best;
  };
  Workload shrunk;
  // 1. Shorter packing.
  if (workload.seq > 1) {
    if (const int64_t seq = shrink(&Workload::seq, &shrunk); seq > 0) {
      out.push_back(Make("seq", Msg("shorten the packing: --seq {} is the largest that fits", seq),
                         seq, "", "", Peak(spec, shrunk, options)));
      out.back().verdict = Verdict::kFits;
    } else {
      out.push_back(NoShorterSeqAdvice(spec, workload, options, target));
    }
  }
  // 2. Smaller batch.
  if (workload.batch > 1) {
    if (const int64_t batch = shrink(&Workload::batch, &shrunk); batch > 0) {
      out.push_back(Make("batch",
                         Msg("reduce the batch: --batch {} is the largest that fits at --seq {} "
                             "(raise gradient accumulation to keep the effective batch)",
                             batch, workload.seq),
                         batch, "", "", Peak(spec, shrunk, options)));
      out.back().verdict = Verdict::kFits;
    }
  }
  // 3. A cheaper method.
  for (auto m = CheaperMethod(workload.method); m; m = CheaperMethod(*m)) {
    Workload w = workload;
    w.method = *m;
    w.weight_dtype = DefaultWeightDType(*m);
    const uint64_t peak = Peak(spec, w, options);
    const std::string method(Name(*m));
    const Verdict verdict = Judge(peak, budget);
    // TRANSLATORS: {0} a --method value, {1} its peak, {2} that plan's verdict (fits, tight,
    // does not fit).
    out.push_back(
        Make("method",
             Msg("switch to --method {0}: peak {1} ({2})", method, GB(peak), VerdictWord(verdict)),
             std::nullopt, method, "", peak));
    out.back().verdict = verdict;
    if (verdict == Verdict::kFits) break;
  }
  // 4. The largest smaller model of the same family (model/model_family.h) that fits.
  const ModelSpec* best = nullptr;
  for (const ModelSpec* m : SmallerInFamily(spec)) {
    if (fits(*m, workload)) {
      best = m;
      break;
    }
  }
  if (best) {
    out.push_back(Make("model",
                       Msg("a smaller model: {} ({} parameters) fits with these settings",
                           best->name, FormatParamCount(TotalParams(*best))),
                       std::nullopt, "", best->name, Peak(*best, workload, options)));
    out.back().verdict = Verdict::kFits;
  } else {
    out.push_back(CutTheLargestTerm(spec, workload, options));
  }
  // 5. More machines: the same run fully sharded over two Sparks (one device holds it all
  // today), or over the devices it is already given with ddp or zero2. DDP is never the
  // answer to a node that is too small: each node holds the whole run plus its buckets.
  const Parallelism& given = options.parallel;
  std::vector<Parallelism> spreads;
  if (given.devices == 1) {
    spreads = {{2, Sharding::kFsdp, true}};
  } else if (given.sharding != Sharding::kFsdp && given.sharding != Sharding::kZero3) {
    spreads = {{given.devices, Sharding::kFsdp, true}};
  }
  for (size_t i = 0; i < spreads.size(); ++i) {
    FootprintOptions spread = options;
    spread.parallel = spreads[i];
    const uint64_t peak = Peak(spec, workload, spread);
    const Verdict verdict = Judge(peak, budget);
    const bool last = i + 1 == spreads.size();
    if (verdict != Verdict::kFits && !last) continue;
    const std::string sharding(Name(spreads[i].sharding));
    const int64_t n = spreads[i].devices;
    Advice a = Make("devices",
                    verdict == Verdict::kFits
                        ? Msg("spread it over {0} Sparks: --devices {0} --sharding {1}: peak {2} "
                              "per node (fits; data parallel, never tensor parallelism over the "
                              "link)",
                              n, sharding, GB(peak))
                        // TRANSLATORS: {3} that plan's verdict (tight, does not fit).
                        : Msg("spread it over {0} Sparks: --devices {0} --sharding {1}: peak {2} "
                              "per node ({3})",
                              n, sharding, GB(peak), VerdictWord(verdict)),
                    n, "", "", peak);
    a.sharding = sharding;
    a.verdict = verdict;
    out.push_back(std::move(a));
    break;
  }
  return out;
}

}  // namespace headroom
