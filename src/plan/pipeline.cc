// Implementation notes. The schedules' in-flight counts are read from PyTorch's
// torch/distributed/pipelining/schedules.py (docs/sources.md, "Pipeline schedules"):
// ScheduleGPipe runs every forward, then every backward; Schedule1F1B's warm-up is
// min(M, N - stage_index) forwards, then each backward comes before the next forward (1B1F),
// and it refuses M < N; ScheduleInterleaved1F1B's _get_warmup_ops is
// (v - 1) x microbatches_per_round + 2 (N - 1 - rank), capped at M v, and its steady phase
// runs a forward before each backward (one more alive). The last stage computes the loss
// right after each forward (_maybe_compute_loss) and keeps it until that micro-batch's
// backward. Every stage's terms are the one-device footprint of one micro-batch
// (ComputeFootprint) split by layers: the decoder's share by the stage's layers, the
// embeddings on the first, lm_head (or its tied copy) and the logits on the last.
#include "plan/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "base/bytes.h"
#include "base/text.h"
#include "plan/activations.h"

namespace headroom {
namespace {

constexpr std::array<std::pair<std::string_view, Schedule>, 4> kSchedules{{
    {"1f1b", Schedule::k1f1b},
    {"gpipe", Schedule::kGpipe},
    {"interleaved", Schedule::kInterleaved},
    {"interleaved1f1b", Schedule::kInterleaved},
}};

bool PipeQuantized(DType d) {
  return d == DType::kNf4 || d == DType::kInt4 || d == DType::kNvfp4 || d == DType::kFp8 ||
         d == DType::kInt8;
}

int64_t Rounds(const PipelineConfig& c) { return std::max<int64_t>(1, c.microbatches / c.devices); }

// The whole run's terms for one micro-batch on one device, split into what every stage
// shares by its layers and what only the first or the last stage holds.
struct WholeTerms {
  Footprint f;
  int64_t layers = 1;
  uint64_t embed_weight = 0, head_weight = 0;  // bytes
  uint64_t root_head_in_whole = 0;             // lm_head's bytes in the whole (0 when tied)
  double grad_per_param = 0, opt_per_param = 0, step_per_param = 0;
  uint64_t embed_trainable = 0, head_trainable = 0, layer_trainable = 0;
};

WholeTerms Whole(const ModelSpec& s, const Workload& w, const FootprintOptions& options) {
  WholeTerms t;
  FootprintOptions one = options;
  one.parallel = {};
  t.f = ComputeFootprint(s, w, one);
  t.layers = std::max<int64_t>(1, s.num_layers);
  const double root_bytes =
      PipeQuantized(w.weight_dtype) ? DTypeBytes(w.compute_dtype) : DTypeBytes(w.weight_dtype);
  const uint64_t embed = EmbeddingParams(s);
  // Tied embeddings: the last stage keeps its own copy of the shared matrix for lm_head.
  const uint64_t head = LmHeadParams(s) ? LmHeadParams(s) : embed;
  t.embed_weight = SaturatingBytes(static_cast<double>(embed) * root_bytes);
  t.head_weight = SaturatingBytes(static_cast<double>(head) * root_bytes);
  t.root_head_in_whole = LmHeadParams(s) ? t.head_weight : 0;
  const double trainable = static_cast<double>(std::max<uint64_t>(1, t.f.trainable_params));
  t.grad_per_param = static_cast<double>(t.f.gradients_bytes) / trainable;
  t.opt_per_param = static_cast<double>(t.f.optimizer_bytes) / trainable;
  t.step_per_param = static_cast<double>(t.f.optimizer_step_bytes) / trainable;
  if (w.method == Method::kFull) {
    t.embed_trainable = embed;
    t.head_trainable = head;
    const uint64_t root = embed + LmHeadParams(s);
    t.layer_trainable = t.f.trainable_params > root ? t.f.trainable_params - root : 0;
  } else {
    t.layer_trainable = t.f.trainable_params;  // LoRA adapters live in the decoder layers
  }
  return t;
}

// One stage's terms and peaks; `in_flight` (when given) replaces the schedule's count.
StageFootprint Stage(const WholeTerms& t, const PipelineConfig& c, int64_t index,
                     const Budget& budget, std::optional<double> in_flight = std::nullopt) {
  const Footprint& f = t.f;
  StageFootprint st;
  st.index = index;
  for (int64_t i = 0; i < index; ++i) st.first_layer += StageLayers(t.layers, c.devices, i);
  st.layers = StageLayers(t.layers, c.devices, index);
  st.first = index == 0;
  st.last = index == c.devices - 1;
  st.in_flight = in_flight ? *in_flight : InFlightMicrobatches(c, index);
  st.logits_in_flight = st.last ? (in_flight ? 1 : InFlightLogits(c)) : 0;
  const double share = static_cast<double>(st.layers) / static_cast<double>(t.layers);
  const uint64_t root_all = t.embed_weight + t.root_head_in_whole;
  const uint64_t plain = f.weights_bytes - f.reference_bytes;
  const double decoder = static_cast<double>(plain > root_all ? plain - root_all : 0);
  st.weights_bytes =
      SaturatingBytes(decoder * share + static_cast<double>(f.reference_bytes) * share) +
      (st.first ? t.embed_weight : 0) + (st.last ? t.head_weight : 0);
  const double trainable = static_cast<double>(t.layer_trainable) * share +
                           static_cast<double>(st.first ? t.embed_trainable : 0) +
                           static_cast<double>(st.last ? t.head_trainable : 0);
  st.gradients_bytes = SaturatingBytes(trainable * t.grad_per_param);
  st.optimizer_bytes = SaturatingBytes(trainable * t.opt_per_param);
  st.optimizer_step_bytes = SaturatingBytes(trainable * t.step_per_param);
  st.activations_bytes =
      SaturatingBytes(static_cast<double>(f.layer_activations_bytes) * share * st.in_flight);
  st.logits_bytes = f.logits_bytes * static_cast<uint64_t>(st.logits_in_flight);
  const uint64_t backward = st.weights_bytes + st.optimizer_bytes + st.activations_bytes +
                            st.logits_bytes + f.dequant_bytes + (st.last ? f.first_grad_bytes : 0);
  const uint64_t step =
      st.weights_bytes + st.gradients_bytes + st.optimizer_bytes + st.optimizer_step_bytes;
  st.tensor_peak_bytes = std::max(backward, step);
  // The overhead as the one-device plan holds it, its allocator slack the same share of this
  // stage's tensor peak.
  const uint64_t fixed = f.overhead_bytes - f.allocator_slack_bytes;
  const double slack = f.tensor_peak_bytes ? static_cast<double>(f.allocator_slack_bytes) /
                                                 static_cast<double>(f.tensor_peak_bytes)
                                           : 0;
  st.overhead_bytes = fixed + SaturatingBytes(static_cast<double>(st.tensor_peak_bytes) * slack);
  const uint64_t steady = st.tensor_peak_bytes + st.overhead_bytes + f.rollout_bytes;
  const uint64_t load = st.weights_bytes + f.load_transient_bytes + fixed + f.rollout_bytes;
  st.peak_bytes = std::max(steady, load);
  st.verdict = Judge(st.peak_bytes, budget);
  return st;
}

Verdict Worst(Verdict a, Verdict b) { return static_cast<int>(a) > static_cast<int>(b) ? a : b; }

std::vector<StageFootprint> Stages(const WholeTerms& t, const PipelineConfig& c,
                                   const Budget& budget, std::optional<double> in_flight) {
  std::vector<StageFootprint> out;
  for (int64_t i = 0; i < c.devices; ++i) out.push_back(Stage(t, c, i, budget, in_flight));
  return out;
}

Verdict WorstOf(const std::vector<StageFootprint>& stages) {
  Verdict v = Verdict::kFits;
  for (const StageFootprint& s : stages) v = Worst(v, s.verdict);
  return v;
}

std::string InFlightText(double n) { return fmt::format("{:g}", n); }

// When the plan does not fit: the other schedules that make every stage fit, or, when even
// one micro-batch in flight does not, that the split itself does not fit.
std::vector<Message> ScheduleAdvice(const WholeTerms& t, const PipelinePlan& plan,
                                    const Budget& budget) {
  std::vector<Message> out;
  if (plan.verdict != Verdict::kDoesNotFit) return out;
  const StageFootprint& worst = plan.stages[static_cast<size_t>(plan.heaviest)];
  for (Schedule s : {Schedule::k1f1b, Schedule::kInterleaved, Schedule::kGpipe}) {
    PipelineConfig other = plan.config;
    other.schedule = s;
    if (s == plan.config.schedule || ScheduleRefusal(other)) continue;
    const auto stages = Stages(t, other, budget, std::nullopt);
    if (WorstOf(stages) == Verdict::kDoesNotFit) continue;
    const StageFootprint& same = stages[static_cast<size_t>(plan.heaviest)];
    out.push_back(
        Msg("with {0} stage {1} holds {2} micro-batches instead of {3}: fits "
            "(peak {4})",
            Name(s), worst.index + 1, InFlightText(same.in_flight), InFlightText(worst.in_flight),
            FormatGB(same.peak_bytes)));
    return out;
  }
  const auto one = Stages(t, plan.config, budget, 1.0);
  if (WorstOf(one) == Verdict::kDoesNotFit) {
    out.push_back(
        Msg("even with one micro-batch in flight stage {0} needs {1}: its share of "
            "the model does not fit on one node, whatever the schedule",
            worst.index + 1, FormatGB(one[static_cast<size_t>(plan.heaviest)].peak_bytes)));
  } else {
    out.push_back(
        Msg("with one micro-batch in flight every stage fits: the micro-batches in "
            "flight are what does not fit; a smaller micro-batch (more --microbatches) "
            "lowers each"));
  }
  return out;
}

}  // namespace

Result<Schedule> ParseSchedule(std::string_view s) {
  const std::string key = AsciiLower(s);
  for (const auto& [name, value] : kSchedules) {
    if (name == key) return value;
  }
  return Error{Msg("unknown {0} '{1}' (expected {2})", MsgFrom(N_("schedule")), s,
                   "1f1b|gpipe|interleaved")};
}

std::string_view Name(Schedule s) {
  for (const auto& [name, v] : kSchedules) {
    if (v == s) return name;
  }
  return "?";
}

std::optional<Message> ScheduleRefusal(const PipelineConfig& c) {
  if (c.schedule == Schedule::k1f1b && c.microbatches < c.devices) {
    return Msg(
        "1f1b needs at least as many micro-batches as stages ({0} < {1}; PyTorch's "
        "Schedule1F1B refuses it)",
        c.microbatches, c.devices);
  }
  if (c.schedule == Schedule::kInterleaved && c.microbatches % Rounds(c) != 0) {
    return Msg(
        "interleaved needs the micro-batches to be a multiple of its rounds, {0} / {1} "
        "= {2} ({0} is not; PyTorch's ScheduleInterleaved1F1B refuses it)",
        c.microbatches, c.devices, Rounds(c));
  }
  return std::nullopt;
}

int64_t InterleavedInFlightChunks(const PipelineConfig& c, int64_t stage) {
  const int64_t v = kVirtualStagesPerDevice;
  const int64_t per_round = c.microbatches / Rounds(c);
  const int64_t all = c.microbatches * v;
  const int64_t warmup = std::min((v - 1) * per_round + 2 * (c.devices - 1 - stage), all);
  return warmup < all ? warmup + 1 : all;
}

double InFlightMicrobatches(const PipelineConfig& c, int64_t stage) {
  switch (c.schedule) {
    case Schedule::kGpipe:
      return static_cast<double>(c.microbatches);
    case Schedule::k1f1b:
      return static_cast<double>(std::min(c.microbatches, c.devices - stage));
    case Schedule::kInterleaved:
      return static_cast<double>(InterleavedInFlightChunks(c, stage)) /
             static_cast<double>(kVirtualStagesPerDevice);
  }
  return static_cast<double>(c.microbatches);
}

int64_t InFlightLogits(const PipelineConfig& c) {
  return c.schedule == Schedule::kGpipe ? c.microbatches : 1;
}

int64_t StageLayers(int64_t layers, int64_t devices, int64_t stage) {
  const int64_t n = std::max<int64_t>(1, devices);
  return layers / n + (stage < layers % n ? 1 : 0);
}

PipelinePlan PlanPipeline(const ModelSpec& spec, const Workload& micro,
                          const FootprintOptions& options, const PipelineConfig& c,
                          uint64_t budget_bytes) {
  return PlanPipeline(spec, micro, options, c, BudgetFromSize(budget_bytes, std::nullopt));
}

PipelinePlan PlanPipeline(const ModelSpec& spec, const Workload& micro,
                          const FootprintOptions& options, const PipelineConfig& c,
                          const Budget& budget) {
  PipelinePlan plan;
  plan.config = c;
  plan.micro_batch = micro.batch;
  const WholeTerms t = Whole(spec, micro, options);
  plan.stages = Stages(t, c, budget, std::nullopt);
  for (const StageFootprint& s : plan.stages) {
    if (s.peak_bytes > plan.stages[static_cast<size_t>(plan.heaviest)].peak_bytes) {
      plan.heaviest = s.index;
    }
  }
  plan.verdict = WorstOf(plan.stages);
  plan.advice = ScheduleAdvice(t, plan, budget);
  plan.notes.push_back(
      Msg("pipeline: layers split evenly (the first stages one more when they do not divide), "
          "embeddings on the first stage, final norm, lm_head and the loss on the last; no "
          "data parallelism inside a stage"));
  if (c.schedule == Schedule::kInterleaved) {
    plan.notes.push_back(Msg("interleaved: {} virtual stages per device", kVirtualStagesPerDevice));
  }
  return plan;
}

}  // namespace headroom
