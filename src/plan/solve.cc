// Implementation notes. The search never evaluates far past the answer: doubling stops at the
// first value that does not fit, so the footprint's products stay near the answer's size
// rather than at the flag's bound (2^24 tokens times a batch). Each value is one whole plan
// from the caller (advice included when it does not fit: that is what `plan` at that value
// prints), so the count of plans is the cost; bench/plan_speed measures it.
#include "plan/solve.h"

#include <algorithm>

#include "plan/plan_fields.h"

namespace headroom {
namespace {

uint64_t TermBytes(const Footprint& f, const std::string& key) {
  for (const FootprintTerm& t : f.terms) {
    if (t.key == key) return t.bytes;
  }
  return 0;
}

// Terms held outside the steady peak: the load's own, and host memory on a discrete GPU.
bool OutsideSteadyPeak(const std::string& key) {
  return key == "load_transient" || key.starts_with("host_");
}

}  // namespace

namespace {

// One row per knob: its name (--solve NAME and the JSON), its flag, its field in
// plan_fields.h (whose max bounds the search) and where a Workload keeps it.
struct KnobRow {
  SolveKnob knob;
  std::string_view name;
  std::string_view flag;
  std::string_view field;
  int64_t Workload::*value;
};

constexpr KnobRow kKnobs[] = {
    {SolveKnob::kBatch, "batch", "--batch", "batch", &Workload::batch},
    {SolveKnob::kSeq, "seq", "--seq", "seq", &Workload::seq},
    {SolveKnob::kRank, "rank", "--lora-rank", "lora_rank", &Workload::lora_rank},
};

const KnobRow& Row(SolveKnob knob) {
  for (const KnobRow& r : kKnobs) {
    if (r.knob == knob) return r;
  }
  return kKnobs[0];
}

}  // namespace

std::string_view Name(SolveKnob knob) { return Row(knob).name; }

std::string_view SolveKnobFlag(SolveKnob knob) { return Row(knob).flag; }

std::string_view SolveKnobField(SolveKnob knob) { return Row(knob).field; }

int64_t SolveKnobMax(SolveKnob knob) {
  const PlanField* f = FindPlanField(SolveKnobField(knob));
  return f && f->max ? f->max : 1;
}

std::optional<SolveKnob> ParseSolveKnob(std::string_view text, Message* error) {
  for (const KnobRow& r : kKnobs) {
    if (text == r.name) return r.knob;
  }
  *error = Msg("--solve: '{}' is not a knob plan can solve (batch, seq, rank)", std::string(text));
  return std::nullopt;
}

int64_t& KnobValue(Workload& workload, SolveKnob knob) { return workload.*(Row(knob).value); }

std::optional<Message> KnobDoesNotMove(const ModelSpec& spec, const Workload& workload,
                                       const FootprintOptions& options, SolveKnob knob) {
  if (knob == SolveKnob::kRank && !IsLora(workload.method)) {
    return Msg(
        "--solve rank: --method {} trains no LoRA adapter, so the rank does not move its "
        "peak",
        std::string(Name(workload.method)));
  }
  Workload one = workload;
  Workload two = workload;
  // 1 and 4096: near 1 the optimizer step's peak may stand above a backward that grows.
  KnobValue(one, knob) = 1;
  KnobValue(two, knob) = 4096;
  if (ComputeFootprint(spec, one, options).steady_peak_bytes ==
      ComputeFootprint(spec, two, options).steady_peak_bytes) {
    return Msg("--solve {0}: {1} does not move this plan's peak", std::string(Name(knob)),
               std::string(SolveKnobFlag(knob)));
  }
  return std::nullopt;
}

int64_t LargestThatFits(int64_t max, const std::function<bool(int64_t)>& fits, int* evaluations) {
  int calls = 0;
  const auto judge = [&](int64_t v) {
    ++calls;
    return fits(v);
  };
  int64_t lo = 0;    // the largest value known to fit (0: none yet)
  int64_t hi = max;  // the smallest value known not to fit, or the ceiling
  bool hi_known = false;
  for (int64_t v = 1; max >= 1;) {
    if (!judge(v)) {
      hi = v;
      hi_known = true;
      break;
    }
    lo = v;
    if (v == max) break;
    v = v > max / 2 ? max : v * 2;
  }
  if (lo > 0 && hi_known) {
    while (hi - lo > 1) {  // lo fits, hi does not
      const int64_t mid = lo + (hi - lo) / 2;
      if (judge(mid)) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
  }
  if (evaluations) *evaluations = calls;
  return lo;
}

std::string LimitedBy(const Footprint* at, const Footprint& next) {
  if (next.load_peak_bytes >= next.steady_peak_bytes) return "load_peak";
  std::string best;
  uint64_t best_key = 0;  // growth, or size when `at` is null
  for (const FootprintTerm& t : next.terms) {
    if (OutsideSteadyPeak(t.key) || t.key == "overhead") continue;
    const uint64_t before = at ? TermBytes(*at, t.key) : 0;
    if (t.bytes <= before) continue;
    const uint64_t score = t.bytes - before;
    if (best.empty() || score > best_key) {
      best = t.key;
      best_key = score;
    }
  }
  return best.empty() ? "overhead" : best;
}

Solution Solve(const PlanInputs& inputs, SolveKnob knob, const PlanAt& plan_at) {
  Solution s;
  s.knob = knob;
  PlanInputs trial = inputs;
  // The search's bounds only move inwards, so the last plan that fit is the answer's and the
  // last that did not is the next value's (LargestThatFits ends with hi = lo + 1).
  std::optional<PlanResult> last_fit;
  std::optional<PlanResult> last_over;
  const auto fits = [&](int64_t v) {
    KnobValue(trial.workload, knob) = v;
    PlanResult p = plan_at(trial);
    const bool ok = p.verdict == Verdict::kFits;
    (ok ? last_fit : last_over) = std::move(p);
    return ok;
  };
  const int64_t max = SolveKnobMax(knob);
  s.value = LargestThatFits(max, fits, &s.plans);
  if (s.value > 0) s.at = std::move(last_fit);
  if (s.value < max) s.next = std::move(last_over);
  if (s.next) {
    s.limited_by = LimitedBy(s.at ? &s.at->footprint : nullptr, s.next->footprint);
  } else {
    s.limited_by = "ceiling";
  }
  return s;
}

nlohmann::json SolutionToJson(const Solution& s) {
  using nlohmann::json;
  json j = {{"knob", Name(s.knob)},
            {"flag", SolveKnobFlag(s.knob)},
            {"value", s.value > 0 ? json(s.value) : json(nullptr)},
            {"plans", s.plans},
            {"peak_bytes", s.at ? json(s.at->footprint.peak_bytes()) : json(nullptr)},
            {"limited_by", s.limited_by}};
  j["next_value"] = s.next ? json(s.value + 1) : json(nullptr);
  j["next_peak_bytes"] = s.next ? json(s.next->footprint.peak_bytes()) : json(nullptr);
  j["next_verdict"] = s.next ? json(VerdictKey(s.next->verdict)) : json(nullptr);
  // The limiting term at the answer and at the next value (the load peak's, for load_peak).
  const auto bytes_of = [&](const std::optional<PlanResult>& p) {
    if (!p || s.limited_by == "ceiling") return json(nullptr);
    if (s.limited_by == "load_peak") return json(p->footprint.load_peak_bytes);
    return json(TermBytes(p->footprint, s.limited_by));
  };
  j["limited_by_bytes"] = bytes_of(s.at);
  j["next_limited_by_bytes"] = bytes_of(s.next);
  return j;
}

}  // namespace headroom
