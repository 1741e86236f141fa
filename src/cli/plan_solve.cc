// Implementation notes. Every value the search tries is planned by JudgedPlan, the function
// `plan` itself ends in, so the answer is by construction the largest N for which `plan
// --batch N` says fits. JudgePools is idempotent (on unified memory the host pool takes the
// plan's verdict; on a discrete GPU it judges the footprint again), so the shown plan's
// judgements are taken again from the plan the search kept.
#include "cli/plan_solve.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "base/bytes.h"
#include "cli/i18n.h"
#include "cli/message_text.h"

namespace headroom {
namespace {

// The limiting term's name, in the user's language: the breakdown's label, or the load peak.
std::string LimitLabel(const Solution& s) {
  if (s.limited_by == "load_peak") return Tr("the load peak");
  for (const FootprintTerm& t : s.next->footprint.terms) {
    if (t.key == s.limited_by) return TranslatedText(t.label);
  }
  return s.limited_by;
}

uint64_t LimitBytes(const Footprint& f, const std::string& key) {
  if (key == "load_peak") return f.load_peak_bytes;
  for (const FootprintTerm& t : f.terms) {
    if (t.key == key) return t.bytes;
  }
  return 0;
}

}  // namespace

void AddPlanSolveFlag(CLI::App& app, std::string& solve) {
  app.add_option("--solve", solve,
                 Tr("batch|seq|rank: the largest --batch, --seq or --lora-rank whose plan fits "
                    "(a bisection over the plan; exit 1 when not even 1 fits)"));
}

PlanResult JudgedPlan(const PlanInputs& in, const PlanPools& pools,
                      std::vector<PoolJudgement>* judged) {
  PlanResult plan = MakePlan(in);
  auto pool_judgements = JudgePools(&plan, pools.device, pools.host_known);
  if (judged) *judged = std::move(pool_judgements);
  return plan;
}

SolvedPlan SolvePlan(const std::string& text, const PlanInputs& in, const PlanPools& pools) {
  Message error;
  const auto knob = ParseSolveKnob(text, &error);
  if (!knob) throw UsageError{TranslatedText(error)};
  const auto source = in.sources.find(SolveKnobField(*knob));
  if (source != in.sources.end() && source->second == PlanSource::kFlag) {
    // TRANSLATORS: {0} a knob (batch, seq, rank), {1} its flag (--batch, --seq, --lora-rank).
    throw UsageError{TrFormat("conflicting flags: --solve {0} finds {1}; give one or the other",
                              Name(*knob), SolveKnobFlag(*knob))};
  }
  if (auto why = KnobDoesNotMove(in.spec, in.workload, in.options, *knob)) {
    throw UsageError{TranslatedText(*why)};
  }
  SolvedPlan out;
  out.solution =
      Solve(in, *knob, [&](const PlanInputs& at) { return JudgedPlan(at, pools, nullptr); });
  const Solution& s = out.solution;
  out.shown = s.at ? *s.at : *s.next;
  out.judged = JudgePools(&out.shown, pools.device, pools.host_known);
  return out;
}

void PrintSolution(const CliEnv& env, const Solution& s) {
  const std::string flag(SolveKnobFlag(s.knob));
  const std::string knob(Name(s.knob));
  if (s.value == 0) {
    std::fprintf(env.out, "%s\n", TrFormat("solve {0}: not even {1} 1 fits", knob, flag).c_str());
  } else if (!s.next) {
    // TRANSLATORS: every value up to the flag's largest fits: {1} the flag, {2} that value.
    std::fprintf(env.out, "%s\n",
                 TrFormat("solve {0}: {1} {2} fits, the largest {1} takes ({3} plans)", knob, flag,
                          s.value, s.plans)
                     .c_str());
  } else {
    std::fprintf(env.out, "%s\n",
                 TrFormat("solve {0}: {1} {2} is the largest that fits ({3} plans)", knob, flag,
                          s.value, s.plans)
                     .c_str());
  }
  if (s.at) {
    // TRANSLATORS: {0} {1} the flag and its value, {2} the plan's peak, {3} its verdict.
    std::fprintf(
        env.out, "  %s\n",
        TrFormat("{0} {1}: peak {2} ({3})", flag, s.value, FormatBoth(s.at->footprint.peak_bytes()),
                 TranslatedText(VerdictWord(s.at->verdict)))
            .c_str());
  }
  if (s.next && s.at) {
    // TRANSLATORS: the next value's plan and what stops it: {4} a term of plan's table
    // ("activations (sdpa, grad-ckpt on)", "the load peak"), {5} its bytes at the next value,
    // {6} at the answer.
    std::fprintf(env.out, "  %s\n",
                 TrFormat("{0} {1}: peak {2} ({3}); what stops it: {4}, {5} (from {6})", flag,
                          s.value + 1, FormatBoth(s.next->footprint.peak_bytes()),
                          TranslatedText(VerdictWord(s.next->verdict)), LimitLabel(s),
                          FormatGB(LimitBytes(s.next->footprint, s.limited_by)),
                          FormatGB(LimitBytes(s.at->footprint, s.limited_by)))
                     .c_str());
  } else if (s.next) {
    // TRANSLATORS: nothing fits: the plan at 1 and its largest term ({4}, {5} its bytes).
    std::fprintf(env.out, "  %s\n",
                 TrFormat("{0} 1: peak {1} ({2}); what stops it: {3}, {4}", flag,
                          FormatBoth(s.next->footprint.peak_bytes()),
                          TranslatedText(VerdictWord(s.next->verdict)), LimitLabel(s),
                          FormatGB(LimitBytes(s.next->footprint, s.limited_by)))
                     .c_str());
  }
  std::fprintf(env.out, "\n");
}

int SolveExitStatus(const Solution& s) { return s.value > 0 ? kExitOk : kExitNegative; }

}  // namespace headroom
