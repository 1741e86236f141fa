#include "cli/plan_pipeline.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "base/bytes.h"
#include "base/text.h"
#include "cli/i18n.h"
#include "cli/message_text.h"

namespace headroom {
namespace {

[[noreturn]] void Refuse(std::string message) { throw UsageError{std::move(message)}; }

int64_t PositiveFlag(const std::string& text, std::string_view flag) {
  const auto v = ParsePositiveInt(text);
  if (!v) Refuse(TrFormat("{0}: expected a whole number of at least 1, got '{1}'", flag, text));
  return *v;
}

std::string Percent(uint64_t part, uint64_t whole) {
  if (whole == 0) return "-";
  return fmt::format("{:.0f} %", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string StageName(const StageFootprint& s) {
  // TRANSLATORS: a pipeline stage's name in plan's table: {0} its number (from 1), {1} and
  // {2} its first and last decoder layers.
  std::string name = TrFormat("stage {0} (layers {1}-{2})", s.index + 1, s.first_layer,
                              s.first_layer + s.layers - 1);
  if (s.first) name += Tr(" + embeddings");
  if (s.last) name += Tr(" + norm, lm_head, loss");
  return name;
}

nlohmann::json StageJson(const StageFootprint& s) {
  return {{"stage", s.index},
          {"first_layer", s.first_layer},
          {"layers", s.layers},
          {"embeddings", s.first},
          {"lm_head", s.last},
          {"in_flight_microbatches", s.in_flight},
          {"logits_in_flight", s.logits_in_flight},
          {"weights_bytes", s.weights_bytes},
          {"gradients_bytes", s.gradients_bytes},
          {"optimizer_bytes", s.optimizer_bytes},
          {"optimizer_step_bytes", s.optimizer_step_bytes},
          {"activations_bytes", s.activations_bytes},
          {"logits_bytes", s.logits_bytes},
          {"overhead_bytes", s.overhead_bytes},
          {"tensor_peak_bytes", s.tensor_peak_bytes},
          {"peak_bytes", s.peak_bytes},
          {"verdict", VerdictKey(s.verdict)}};
}

nlohmann::json PipelineJson(const PlanInputs& in, const PipelinePlan& p) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageFootprint& s : p.stages) stages.push_back(StageJson(s));
  nlohmann::json advice = nlohmann::json::array();
  for (const Message& m : p.advice) advice.push_back(EnglishText(m));
  nlohmann::json notes = nlohmann::json::array();
  for (const Message& m : p.notes) notes.push_back(EnglishText(m));
  return {{"model", in.spec.name},
          {"parallel",
           {{"devices", p.config.devices},
            {"sharding", "pipeline"},
            {"schedule", Name(p.config.schedule)},
            {"microbatches", p.config.microbatches},
            {"micro_batch", p.micro_batch},
            {"global_batch", p.micro_batch * p.config.microbatches}}},
          {"budget_bytes", in.budget.budget_bytes},
          {"stages", std::move(stages)},
          {"heaviest_stage", p.heaviest},
          {"verdict", VerdictKey(p.verdict)},
          {"advice", std::move(advice)},
          {"notes", std::move(notes)}};
}

void PrintStages(const CliEnv& env, const PlanInputs& in, const PipelinePlan& p) {
  // TRANSLATORS: plan's title with --sharding pipeline: {0} the model, {1} devices, {2} the
  // schedule (a value of --schedule), {3} micro-batches, {4} sequences in each, {5} the budget.
  std::fprintf(env.out, "%s\n\n",
               TrFormat("headroom plan: {0}, pipeline over {1} devices, {2}, {3} micro-batches of "
                        "{4}; each node's budget {5}",
                        in.spec.name, p.config.devices, Name(p.config.schedule),
                        p.config.microbatches, p.micro_batch, FormatGB(in.budget.budget_bytes))
                   .c_str());
  for (const StageFootprint& s : p.stages) {
    // TRANSLATORS: one pipeline stage: {0} micro-batches in flight, {1} weights, {2}
    // activations and logits, {3} the peak, {4} the share of the node's budget, {5} the verdict.
    std::fprintf(env.out, "  %s\n    %s\n", StageName(s).c_str(),
                 TrFormat("{0} micro-batches in flight, weights {1}, activations {2}: peak {3}, "
                          "{4} of the node's budget ({5})",
                          fmt::format("{:g}", s.in_flight), FormatGB(s.weights_bytes),
                          FormatGB(s.activations_bytes + s.logits_bytes), FormatGB(s.peak_bytes),
                          Percent(s.peak_bytes, in.budget.budget_bytes),
                          TranslatedText(VerdictWord(s.verdict)))
                     .c_str());
  }
  const StageFootprint& h = p.stages[static_cast<size_t>(p.heaviest)];
  // TRANSLATORS: {0} the heaviest stage's number, {1} its peak, {2} the verdict of the plan.
  std::fprintf(env.out, "\n%s\n",
               TrFormat("heaviest: stage {0}, peak {1}; verdict: {2}", h.index + 1,
                        FormatGB(h.peak_bytes), TranslatedText(VerdictWord(p.verdict)))
                   .c_str());
  for (const Message& m : p.advice) {
    std::fprintf(env.out, "  %s\n", TranslatedText(m).c_str());
  }
  for (const Message& m : p.notes) std::fprintf(env.out, "  %s\n", TranslatedText(m).c_str());
}

}  // namespace

void AddPipelineFlags(CLI::App& app, PipelineFlags& flags) {
  app.add_option("--schedule", flags.schedule,
                 Tr("with --sharding pipeline: 1f1b|gpipe|interleaved, how many micro-batches' "
                    "activations each stage holds (default 1f1b)"));
  app.add_option("--microbatches", flags.microbatches,
                 Tr("with --sharding pipeline: micro-batches per step; --batch is the global "
                    "batch (default: the number of devices)"));
}

std::optional<PipelineConfig> TakePipeline(PlanFlags* fl, const PipelineFlags& flags) {
  if (AsciiLower(fl->sharding) != "pipeline") {
    if (!flags.schedule.empty()) Refuse(Tr("--schedule needs --sharding pipeline"));
    if (!flags.microbatches.empty()) Refuse(Tr("--microbatches needs --sharding pipeline"));
    return std::nullopt;
  }
  PipelineConfig c;
  c.devices = fl->devices.empty() ? 1 : PositiveFlag(fl->devices, "--devices");
  if (c.devices < 2 || c.devices > kMaxDevices) {
    Refuse(TrFormat("--sharding pipeline needs --devices from 2 to {0} (one stage per device)",
                    kMaxDevices));
  }
  if (!flags.schedule.empty()) {
    const auto s = ParseSchedule(flags.schedule);
    if (!s) Refuse("--schedule: " + TranslatedText(s.error().what));
    c.schedule = *s;
  }
  c.microbatches =
      flags.microbatches.empty() ? c.devices : PositiveFlag(flags.microbatches, "--microbatches");
  const int64_t batch = PositiveFlag(fl->batch, "--batch");
  if (batch % c.microbatches != 0) {
    Refuse(TrFormat("--batch {0} does not divide into {1} micro-batches", batch, c.microbatches));
  }
  if (const auto refused = ScheduleRefusal(c)) Refuse("--schedule: " + TranslatedText(*refused));
  fl->batch = std::to_string(batch / c.microbatches);
  fl->devices.clear();
  fl->sharding.clear();
  return c;
}

int PrintPipelinePlan(const CliEnv& env, const PlanInputs& in, const PipelineConfig& c, bool json) {
  const PipelinePlan p = PlanPipeline(in.spec, in.workload, in.options, c, in.budget);
  if (json) {
    std::fprintf(env.out, "%s\n", PipelineJson(in, p).dump(2).c_str());
  } else {
    PrintStages(env, in, p);
  }
  return p.verdict == Verdict::kDoesNotFit ? kExitNegative : kExitOk;
}

}  // namespace headroom
