// A value for every field of plan/plan_fields' table, for the tests that walk it
// (src/plan/plan_fields_test.cc, src/cli/plan_args_test.cc). A field added to the table
// without a sample here fails them.
#pragma once

#include <map>
#include <string>

namespace headroom::testing {

// A value for each field that differs from its default, written as the request gives it
// back (RequestText), and the other fields it needs beside it.
struct FieldSample {
  std::string value;
  std::map<std::string, std::string> with;
};

inline const std::map<std::string, FieldSample>& PlanFieldSamples() {
  static const std::map<std::string, FieldSample> kSamples{
      {"model", {"llama-3.1-8b", {}}},
      {"framework", {"unsloth", {}}},
      {"config", {"tests/fixtures/models/llama-3.1-8b", {{"model", ""}}}},
      {"params", {"8000000000", {{"model", ""}}}},
      {"hidden", {"4096", {{"model", ""}, {"params", "8000000000"}}}},
      {"layers", {"32", {{"model", ""}, {"params", "8000000000"}}}},
      {"heads", {"32", {{"model", ""}, {"params", "8000000000"}}}},
      {"kv_heads", {"8", {{"model", ""}, {"params", "8000000000"}}}},
      {"intermediate", {"14336", {{"model", ""}, {"params", "8000000000"}}}},
      {"vocab", {"128256", {{"model", ""}, {"params", "8000000000"}}}},
      {"experts", {"8", {{"model", ""}, {"params", "8000000000"}}}},
      {"active_experts", {"2", {{"model", ""}, {"params", "8000000000"}, {"experts", "8"}}}},
      {"method", {"full", {}}},
      {"lora_rank", {"32", {}}},
      {"lora_targets", {"q,v", {}}},
      {"lora_dropout", {"0.1", {}}},
      {"weight_dtype", {"fp16", {}}},
      {"double_quant", {"off", {}}},
      {"optimizer", {"sgd", {}}},
      {"optimizer_step", {"loop", {}}},
      {"master_weights", {"on", {}}},
      {"batch", {"4", {}}},
      {"seq", {"4096", {}}},
      {"grad_ckpt", {"offload", {}}},
      {"attention", {"eager", {}}},
      {"loss", {"chunked", {}}},
      {"workload", {"dpo", {}}},
      {"rollout_fraction", {"0.3", {{"workload", "grpo"}}}},
      {"devices", {"2", {}}},
      {"sharding", {"fsdp", {}}},
      {"reserve", {"1000000000", {}}},
      {"budget", {"100000000000", {}}},
      {"overhead", {"2000000000", {}}},
      {"root", {"/tmp/headroom-root", {}}},
      {"platform", {"discrete", {}}},
  };
  return kSamples;
}

}  // namespace headroom::testing
