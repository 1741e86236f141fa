// Implementation notes. --start plan makes the plans plan --solve makes (plan/solve.h Solve:
// the doubling and bisection over MakePlan), but judges each by the sweep's own test, its peak
// against the limit less the pool's use, not by plan's levels (MemAvailable less the reserve
// and the warning level): a trial passes or fails by the limit, so the start is the largest
// value whose plan stays under it. The two differ by what the default limit keeps back beyond
// plan's fit line (sys/pool_levels.h DefaultSweepLimitBytes), and the line says which was used.
#include "cli/sweep_start.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "base/bytes.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "cli/plan_args.h"
#include "plan/plan.h"
#include "plan/solve.h"
#include "sys/zoneinfo.h"

namespace headroom {
namespace {

// The knob plan solves for the grid's first knob; UsageError for one it cannot.
SolveKnob StartKnob(const Knob& knob) {
  if (knob.name == "batch") return SolveKnob::kBatch;
  if (knob.name == "seq") return SolveKnob::kSeq;
  // TRANSLATORS: {0} is the sweep's first knob (grad_accum or a --param name).
  throw UsageError{
      TrFormat("--start plan: plan solves batch or seq, and this sweep's first knob is {0}; give "
               "--order batch or --order seq, or --start N",
               knob.name)};
}

// The plan's words: the sweep's model and method, the grid's other built-in knobs at their
// smallest, the platform of --device-limit, then --plan-args.
std::vector<std::string> PlanWordsOf(const SweepOptions& o, const std::string& plan_args,
                                     SolveKnob knob) {
  std::vector<std::string> words;
  if (!o.model.empty()) words.push_back(o.model);
  if (!o.method.empty()) words.insert(words.end(), {"--method", o.method});
  const Config smallest = o.grid.Smallest();
  for (const char* other : {"batch", "seq"}) {
    if (other != Name(knob) && smallest.Get(other) > 0)
      words.insert(words.end(), {fmt::format("--{}", other), std::to_string(smallest.Get(other))});
  }
  if (o.device_limit) words.insert(words.end(), {"--platform", "discrete"});
  const auto extra = SplitWords(plan_args, "--plan-args");
  for (const auto& w : extra) {
    if (w == SolveKnobFlag(knob) || w.rfind(std::string(SolveKnobFlag(knob)) + "=", 0) == 0)
      // TRANSLATORS: {0} is --batch or --seq, the knob --start plan solves.
      throw UsageError{TrFormat("--plan-args: {0} is the knob --start plan solves; leave it out",
                                SolveKnobFlag(knob))};
  }
  words.insert(words.end(), extra.begin(), extra.end());
  return words;
}

// The knob's smallest and largest values.
std::pair<int64_t, int64_t> Ends(const Knob& k) {
  if (k.is_range) return {k.lo, *SnapToKnob(k, k.hi)};
  return {k.values.front(), k.values.back()};
}

// What --start plan decided, and the lines that say so.
struct ResolvedStart {
  std::optional<SweepStart> start;
  std::vector<std::string> lines;
};

ResolvedStart FromPlan(const CliEnv& env, const std::string& plan_args, const SweepOptions& o,
                       uint64_t pool_use, const std::string& root_dir) {
  const Knob& first = o.grid.knobs.front();
  const SolveKnob knob = StartKnob(first);
  if (o.model.empty() && plan_args.empty())
    throw UsageError{Tr("--start plan: give --model, the model plan solves for")};
  PlanInputs in = ResolvePlanWords(PlanWordsOf(o, plan_args, knob), "--start plan", root_dir, env);
  if (auto why = KnobDoesNotMove(in.spec, in.workload, in.options, knob))
    throw UsageError{"--start plan: " + TranslatedText(*why)};
  // The room a trial has: the device's limit, or the pool's limit above its use now.
  const uint64_t room =
      o.device_limit ? o.limit_bytes : o.limit_bytes - std::min(o.limit_bytes, pool_use);
  const Solution s = Solve(in, knob, [room](const PlanInputs& at) {
    PlanResult p = MakePlan(at);
    p.verdict = p.footprint.peak_bytes() <= room ? Verdict::kFits : Verdict::kDoesNotFit;
    return p;
  });
  const std::string limit_text =
      o.device_limit ? TrFormat("the device limit {0}", FormatGB(o.limit_bytes))
                     // TRANSLATORS: the room --start plan judged the plan against: {0} the room,
                     // {1} the sweep's --limit, {2} the pool's use now.
                     : TrFormat("{0}: the limit {1} less the pool's use now {2}", FormatGB(room),
                                FormatGB(o.limit_bytes), FormatGB(pool_use));
  if (s.value == 0) {
    // TRANSLATORS: {0} a knob (batch, seq), {1} the plan's peak at 1, {2} the room it had.
    throw UsageError{TrFormat(
        "--start plan: plan says not even {0} 1 fits (peak {1} of {2}); sweep without --start",
        first.name, FormatGB(s.next ? s.next->footprint.peak_bytes() : 0), limit_text)};
  }
  ResolvedStart out;
  SweepStart start;
  start.knob = first.name;
  start.from_plan = true;
  start.plan_value = s.value;
  start.plan_peak_bytes = s.at ? s.at->footprint.peak_bytes() : 0;
  start.plan_room_bytes = room;
  const auto [lowest, top] = Ends(first);
  start.value = *SnapToKnob(first, std::clamp(s.value, lowest, top));
  if (s.value < lowest || s.value > top) {
    // TRANSLATORS: plan's answer is outside the sweep's values: {0} a knob, {1} plan's value,
    // {2} the knob's flag (--batch), {3} its smallest or largest value.
    out.lines.push_back(
        s.value < lowest
            ? TrFormat("plan --solve says {0} {1}, below {2}'s smallest value {3}: the sweep "
                       "starts there",
                       first.name, s.value, first.flag, lowest)
            : TrFormat("plan --solve says {0} {1}, above {2}'s largest value {3}: the sweep "
                       "starts there",
                       first.name, s.value, first.flag, top));
  }
  // TRANSLATORS: {0} a knob, {1} its first value, {2} the plan's peak, {3} what it was judged
  // against ("12.0 GB: the limit ... less the pool's use now ...").
  out.lines.push_back(TrFormat("starting from {0} {1}: plan --solve's answer (peak {2} of {3})",
                               first.name, start.value, FormatGB(start.plan_peak_bytes),
                               limit_text));
  out.start = start;
  return out;
}

}  // namespace

uint64_t SweepPoolUse(const SysRoot& root, uint64_t total, uint64_t available) {
  PerCpuFreeReader per_cpu(root);
  return total - std::min(total, available + per_cpu.ReadBytes().value_or(0));
}

void AddSweepStartFlags(CLI::App& app, std::string& start, std::string& plan_args) {
  app.add_option("--start", start,
                 Tr("the first knob's first trial: N, or plan (plan --solve's answer for --model "
                    "and --method under this sweep's limit); then up until a trial fails, or "
                    "down until one passes"));
  app.add_option("--plan-args", plan_args,
                 Tr("more of plan's input flags for --start plan, e.g. \"--lora-rank 64 "
                    "--grad-ckpt on\""));
}

std::vector<std::string> ResolveSweepStart(const CliEnv& env, const SweepFlags& f,
                                           uint64_t pool_use_bytes, SweepOptions* o) {
  if (f.start != "plan" && !f.plan_args.empty())
    throw UsageError{Tr("--plan-args needs --start plan")};
  if (f.start.empty()) return {};
  if (f.start == "plan") {
    ResolvedStart from = FromPlan(env, f.plan_args, *o, pool_use_bytes, f.root_dir);
    o->start = from.start;
    return from.lines;
  }
  const auto n = ParsePositiveInt(f.start);
  if (!n)
    throw UsageError{TrFormat("--start: '{0}' is neither a whole number from 1 nor plan", f.start)};
  const Knob& first = o->grid.knobs.front();
  const auto at = SnapToKnob(first, *n);
  const auto [lowest, top] = Ends(first);
  if (!at) {
    // TRANSLATORS: {1} the knob's flag (--batch), {2} and {3} its smallest and largest values.
    throw UsageError{
        TrFormat("--start {0}: outside {1}'s values {2}..{3}", *n, first.flag, lowest, top)};
  }
  SweepStart start;
  start.knob = first.name;
  start.value = *at;
  o->start = start;
  // TRANSLATORS: {0} a knob, {1} the first trial's value, {2} what --start gave.
  return {TrFormat("starting from {0} {1} (--start {2})", first.name, *at, *n)};
}

void PrintSweepStartLines(std::FILE* err, const std::vector<std::string>& lines) {
  for (const auto& line : lines) std::fprintf(err, "headroom: sweep: %s\n", line.c_str());
}

void PrintPlanGap(std::FILE* out, const SweepOptions& o, const SweepResult& r) {
  if (!o.start || !o.start->from_plan) return;
  const SweepStart& s = *o.start;
  if (!r.best) {
    // TRANSLATORS: {0} a knob, {1} plan --solve's value for it.
    std::fprintf(out, "%s\n",
                 TrFormat("plan said {0} {1}; the sweep found none that fits", s.knob, s.plan_value)
                     .c_str());
    return;
  }
  const PlanGap g = *PlanGapOf(s, r.best->Get(s.knob));
  // TRANSLATORS: {0} a knob, {1} plan's value, {2} the sweep's answer, {3} the difference with
  // its sign, {4} that as a percentage of plan's value.
  std::fprintf(out, "%s\n",
               TrFormat("plan said {0} {1}, measured {0} {2} (gap {3:+}, {4:+.0f} %)", g.knob,
                        g.plan, g.measured, g.gap, g.percent)
                   .c_str());
}

}  // namespace headroom
