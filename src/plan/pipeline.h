// Pipeline parallelism: a run split by layers over N devices (N DGX Sparks, one stage each),
// as torch.distributed.pipelining runs it. Each stage holds its share of the decoder layers
// with their gradients and optimizer states; the first stage also the embeddings, the last
// the final norm, lm_head and the loss. The schedule sets how many micro-batches'
// activations a stage holds at once (docs/plan-formulas.md, "Pipeline stages"):
//
//   gpipe        every stage runs all M forwards before any backward: M in flight
//   1f1b         stage s of N warms up with N - s forwards, then one backward before each
//                forward: min(M, N - s) in flight
//   interleaved  each device holds v virtual stages (v = 2 here); device r runs
//                min((v - 1) x m + 2 (N - 1 - r), M v) warm-up forwards of one virtual
//                stage each (m = M / max(1, M / N), the micro-batches per round), then one
//                more before each backward: that many virtual stages' activations in flight
//
// A stage is judged against its own node's budget with the plan's verdict rule (Judge).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/message.h"
#include "base/result.h"
#include "model/model_spec.h"
#include "plan/budget.h"
#include "plan/footprint.h"
#include "plan/verdict.h"
#include "plan/workload.h"

namespace headroom {

enum class Schedule { k1f1b, kGpipe, kInterleaved };

// "1f1b", "gpipe", "interleaved" (also "interleaved1f1b"); the error lists the names.
Result<Schedule> ParseSchedule(std::string_view s);
std::string_view Name(Schedule s);

// Virtual stages per device under the interleaved schedule (torchtitan's and PyTorch's
// examples build two per rank).
inline constexpr int64_t kVirtualStagesPerDevice = 2;

struct PipelineConfig {
  int64_t devices = 2;  // N: one stage per device (interleaved: v virtual stages per device)
  Schedule schedule = Schedule::k1f1b;
  int64_t microbatches = 1;  // M: the global batch is split into M micro-batches
};

// What PyTorch refuses for this schedule (Schedule1F1B: fewer micro-batches than stages;
// ScheduleInterleaved1F1B: M not a multiple of its rounds, max(1, M / N)), as one line; none
// when it runs.
std::optional<Message> ScheduleRefusal(const PipelineConfig& c);

// How many micro-batches' activations stage `stage` (0-based) holds at once, in units of
// the stage's own layers for one micro-batch: gpipe M, 1f1b min(M, N - s); interleaved: the
// virtual stages' micro-batch activations alive on the device divided by v (each covers 1/v
// of the device's layers).
double InFlightMicrobatches(const PipelineConfig& c, int64_t stage);

// Virtual-stage activations alive on device `stage` under the interleaved schedule (each one
// micro-batch through 1/v of the device's layers).
int64_t InterleavedInFlightChunks(const PipelineConfig& c, int64_t stage);

// Micro-batches whose logits (and loss) the last stage holds at once: gpipe M (the loss is
// computed after each forward, kept until its backward), 1f1b and interleaved 1.
int64_t InFlightLogits(const PipelineConfig& c);

// Decoder layers of stage `stage`: L / N, the first L mod N stages one more.
int64_t StageLayers(int64_t layers, int64_t devices, int64_t stage);

struct StageFootprint {
  int64_t index = 0;
  int64_t first_layer = 0;
  int64_t layers = 0;
  bool first = false;    // embeddings
  bool last = false;     // final norm, lm_head, loss
  double in_flight = 0;  // micro-batches' activations alive (interleaved: may be fractional)
  int64_t logits_in_flight = 0;
  uint64_t weights_bytes = 0;
  uint64_t gradients_bytes = 0;
  uint64_t optimizer_bytes = 0;
  uint64_t optimizer_step_bytes = 0;
  uint64_t activations_bytes = 0;  // layers' activations x in flight
  uint64_t logits_bytes = 0;       // last stage: logits and loss x logits in flight
  uint64_t overhead_bytes = 0;
  uint64_t tensor_peak_bytes = 0;
  uint64_t peak_bytes = 0;  // steady or load, the larger
  Verdict verdict = Verdict::kFits;
};

struct PipelinePlan {
  PipelineConfig config;
  int64_t micro_batch = 1;  // sequences per micro-batch
  std::vector<StageFootprint> stages;
  int64_t heaviest = 0;              // the stage with the largest peak
  Verdict verdict = Verdict::kFits;  // the worst stage's
  std::vector<Message> advice;       // when the schedule, not the model, is what does not fit
  std::vector<Message> notes;
};

// The stages of `micro` (the workload with batch = one micro-batch) split over c.devices
// nodes, each judged by the plan's judge against `budget`, one node's (MemAvailable and the
// pool's levels, docs/config.md "The levels"). `options.parallel` is ignored.
PipelinePlan PlanPipeline(const ModelSpec& spec, const Workload& micro,
                          const FootprintOptions& options, const PipelineConfig& c,
                          const Budget& budget);
// The same against a pool of `budget_bytes` alone (plan --budget SIZE's rule).
PipelinePlan PlanPipeline(const ModelSpec& spec, const Workload& micro,
                          const FootprintOptions& options, const PipelineConfig& c,
                          uint64_t budget_bytes);

}  // namespace headroom
