#include "plan/plan_request.h"

#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <string>

namespace headroom {
namespace {

PlanFlagText Qlora8b() {
  PlanFlagText t;
  t.model = "llama-3.1-8b";
  t.method = "qlora";
  t.seq = "4096";
  t.batch = "4";
  t.budget = "100GB";
  return t;
}

PlanRequest MustParse(const PlanFlagText& text) {
  Message error;
  auto r = ParsePlanRequest(text, &error);
  EXPECT_TRUE(r) << EnglishText(error);
  return r ? *r : PlanRequest{};
}

// The error a JSON text gives, in English; "" when it reads.
std::string JsonError(const std::string& text) {
  Message error;
  auto r = PlanRequestFromJson(nlohmann::json::parse(text, nullptr, false), &error);
  return r ? "" : EnglishText(error);
}

TEST(PlanRequest, FlagsAreTyped) {
  const PlanRequest r = MustParse(Qlora8b());
  EXPECT_EQ(r.source, ModelSource::kCatalog);
  EXPECT_EQ(r.model, "llama-3.1-8b");
  EXPECT_EQ(r.workload.method, Method::kQlora);
  EXPECT_EQ(r.workload.weight_dtype, DType::kNf4);
  EXPECT_EQ(r.workload.seq, 4096);
  EXPECT_EQ(r.workload.batch, 4);
  EXPECT_EQ(r.budget_bytes, 100'000'000'000ULL);
  EXPECT_FALSE(r.reserve_bytes);
}

// The error of parsing and resolving `text` (with a budget, so no /proc is read), in
// English; "" when both succeed.
std::string ResolveError(const PlanFlagText& text) {
  Message error;
  auto r = ParsePlanRequest(text, &error);
  if (r && ResolvePlanRequest(*r, PlanContext{}, &error)) return "";
  return EnglishText(error);
}

// Regression: every numeric flag of plan, given a meaningless value, is refused by an error
// that starts with that flag (13 of them blamed another: `--params 8B --hidden
// 9223372036854775807` blamed --params), and none is accepted.
TEST(PlanRequest, EveryNumericFlagRefusesMeaninglessValuesByItsOwnName) {
  using Field = std::string PlanFlagText::*;
  struct Row {
    const char* flag;
    Field field;
    bool shape;  // goes with --params
  };
  const Row rows[] = {
      {"--params", &PlanFlagText::params, true},
      {"--hidden", &PlanFlagText::hidden, true},
      {"--layers", &PlanFlagText::layers, true},
      {"--heads", &PlanFlagText::heads, true},
      {"--kv-heads", &PlanFlagText::kv_heads, true},
      {"--intermediate", &PlanFlagText::intermediate, true},
      {"--vocab", &PlanFlagText::vocab, true},
      {"--experts", &PlanFlagText::experts, true},
      {"--active-experts", &PlanFlagText::active_experts, true},
      {"--lora-rank", &PlanFlagText::lora_rank, false},
      {"--lora-dropout", &PlanFlagText::lora_dropout, false},
      {"--batch", &PlanFlagText::batch, false},
      {"--seq", &PlanFlagText::seq, false},
      {"--budget", &PlanFlagText::budget, false},
      {"--overhead", &PlanFlagText::overhead, false},
  };
  const char* values[] = {
      "9223372036854775807", "99999999999999999999", "0", "-1", "1e30", "nan", "x"};
  for (const Row& row : rows) {
    for (const char* value : values) {
      PlanFlagText t;
      if (row.shape) {
        t.params = "8B";
        if (std::string(row.flag) == "--active-experts") t.experts = "8";
      } else {
        t.model = "llama-3.1-8b";
      }
      t.budget = "100GB";
      t.*row.field = value;
      const std::string error = ResolveError(t);
      SCOPED_TRACE(std::string(row.flag) + " " + value + ": " + error);
      if (std::string(row.flag) == "--overhead" && std::string(value) == "0") {
        EXPECT_EQ(error, "");  // no overhead is a meaning
        continue;
      }
      if (std::string(row.flag) == "--lora-dropout" && std::string(value) == "0") {
        EXPECT_EQ(error, "");  // no dropout
        continue;
      }
      EXPECT_EQ(error.rfind(std::string(row.flag) + ": ", 0), 0u);
    }
  }
}

TEST(PlanRequest, ShapeFlagsThatDisagreeAreNamedNotParams) {
  PlanFlagText t;
  t.params = "8B";
  t.budget = "100GB";
  t.hidden = "4097";  // not a multiple of the borrowed 32 heads
  EXPECT_EQ(ResolveError(t),
            "--hidden: the architecture is not valid: hidden_size is not a multiple of "
            "num_attention_heads and head_dim is not given");
  t.heads = "32";
  EXPECT_EQ(ResolveError(t).rfind("--hidden, --heads: the architecture is not valid: ", 0), 0u);
  t = PlanFlagText{};
  t.params = "8B";
  t.budget = "100GB";
  t.experts = "1";
  t.active_experts = "2";
  EXPECT_EQ(ResolveError(t),
            "--experts, --active-experts: the architecture is not valid: num_experts_per_tok is "
            "larger than num_experts");
  t = PlanFlagText{};
  t.params = "8B";
  t.budget = "100GB";
  t.layers = "16777217";
  EXPECT_EQ(ResolveError(t), "--layers: 16777217 is absurdly large (at most 16777216)");
}

TEST(PlanRequest, ALoraRankPastTheHiddenSizeIsRefused) {
  PlanFlagText t;
  t.model = "llama-3.1-8b";
  t.budget = "100GB";
  t.lora_rank = "4096";  // the hidden size: the largest meaningful rank
  EXPECT_EQ(ResolveError(t), "");
  t.lora_rank = "4097";
  EXPECT_EQ(ResolveError(t),
            "--lora-rank: 4097 is larger than the model's hidden size (4096): a rank past the "
            "adapted matrices' smaller side adds nothing");
  t.lora_rank = "9223372036854775807";
  EXPECT_EQ(ResolveError(t),
            "--lora-rank: 9223372036854775807 is absurdly large (at most 16777216)");
}

TEST(PlanRequest, FlagErrorsNameTheFlag) {
  PlanFlagText t = Qlora8b();
  t.batch = "0";
  Message error;
  EXPECT_FALSE(ParsePlanRequest(t, &error));
  EXPECT_EQ(EnglishText(error).rfind("--batch: ", 0), 0u) << EnglishText(error);
  t = Qlora8b();
  t.reserve = "4GiB";
  EXPECT_FALSE(ParsePlanRequest(t, &error));
  EXPECT_EQ(EnglishText(error),
            "conflicting flags: --reserve applies to MemAvailable; --budget is already the whole "
            "budget");
  t = Qlora8b();
  t.hidden = "4096";
  EXPECT_FALSE(ParsePlanRequest(t, &error));
  EXPECT_NE(EnglishText(error).find("go with --params"), std::string::npos);
  t = Qlora8b();
  t.grad_ckpt = "maybe";
  EXPECT_FALSE(ParsePlanRequest(t, &error));
  EXPECT_EQ(EnglishText(error), "--grad-ckpt: 'maybe' is not on, off or offload");
}

TEST(PlanRequest, ResolvesTheCatalogModelAndTheGivenBudget) {
  Message error;
  auto in = ResolvePlanRequest(MustParse(Qlora8b()), PlanContext{"/nonexistent", 0}, &error);
  ASSERT_TRUE(in) << EnglishText(error);
  EXPECT_EQ(in->spec.name, "llama-3.1-8b");
  EXPECT_EQ(in->model_source, "catalog");
  EXPECT_EQ(in->budget.budget_bytes, 100'000'000'000ULL);
}

TEST(PlanRequest, UnknownModelAndUnreadableMeminfoAreErrors) {
  PlanFlagText t = Qlora8b();
  t.model = "llama-9";
  Message error;
  EXPECT_FALSE(ResolvePlanRequest(MustParse(t), PlanContext{"/nonexistent", 0}, &error));
  EXPECT_EQ(EnglishText(error).rfind("unknown model 'llama-9' (closest: ", 0), 0u);
  t = Qlora8b();
  t.budget.clear();
  EXPECT_FALSE(ResolvePlanRequest(MustParse(t), PlanContext{"/nonexistent", 0}, &error));
  EXPECT_NE(EnglishText(error).find("(or give --budget SIZE)"), std::string::npos)
      << EnglishText(error);
}

TEST(PlanRequest, ParamsWithAShapeBorrowTheRestAndSayFrom) {
  PlanFlagText t;
  t.params = "7B";
  t.layers = "32";
  t.budget = "100GB";
  const PlanRequest r = MustParse(t);
  EXPECT_EQ(r.source, ModelSource::kParams);
  EXPECT_EQ(r.params, 7'000'000'000ULL);
  EXPECT_EQ(r.shape.layers, 32);
  EXPECT_FALSE(r.shape.hidden);
  Message error;
  auto in = ResolvePlanRequest(r, PlanContext{"/nonexistent", 0}, &error);
  ASSERT_TRUE(in) << EnglishText(error);
  EXPECT_EQ(in->spec.num_layers, 32);
  ASSERT_EQ(in->model_notes.size(), 1u);
  EXPECT_NE(EnglishText(in->model_notes[0]).find("the catalog's nearest dense model"),
            std::string::npos);
}

TEST(PlanRequest, JsonRoundTrips) {
  PlanFlagText grpo;
  grpo.params = "1.5e9";
  grpo.hidden = "1536";
  grpo.experts = "8";
  grpo.workload = "grpo";
  grpo.rollout_fraction = "0.35";
  grpo.lora_dropout = "0";
  grpo.lora_targets = "attn";
  grpo.master_weights = true;
  grpo.reserve = "0";
  grpo.overhead = "2GiB";
  grpo.root = "/srv/fixture";
  PlanFlagText full;
  full.config = "/models/qwen";
  full.method = "full";
  full.double_quant = "off";
  for (const PlanFlagText& t : {Qlora8b(), grpo, full}) {
    const PlanRequest r = MustParse(t);
    const nlohmann::json j = PlanRequestToJson(r);
    EXPECT_EQ(j["schema_version"], kPlanRequestSchemaVersion);
    Message error;
    auto back = PlanRequestFromJson(nlohmann::json::parse(j.dump()), &error);
    ASSERT_TRUE(back) << EnglishText(error) << "\n" << j.dump();
    EXPECT_EQ(PlanRequestToJson(*back), j);
    EXPECT_EQ(back->shape, r.shape);
    EXPECT_EQ(back->workload.lora_targets, r.workload.lora_targets);
    EXPECT_EQ(back->workload.lora_dropout, r.workload.lora_dropout);
    EXPECT_EQ(back->workload.rollout_fraction, r.workload.rollout_fraction);
    EXPECT_EQ(back->budget_bytes, r.budget_bytes);
    EXPECT_EQ(back->reserve_bytes, r.reserve_bytes);
    EXPECT_EQ(back->overhead_bytes, r.overhead_bytes);
    EXPECT_EQ(back->root, r.root);
  }
}

TEST(PlanRequest, JsonKeysLeftOutTakeTheFlagsDefaults) {
  Message error;
  auto r = PlanRequestFromJson(
      nlohmann::json::parse(R"({"schema_version": 1, "model": "llama-3.1-8b"})"), &error);
  ASSERT_TRUE(r) << EnglishText(error);
  EXPECT_EQ(r->workload.method, Method::kLora);
  EXPECT_EQ(r->workload.seq, 2048);
  EXPECT_EQ(r->workload.batch, 1);
  EXPECT_TRUE(r->workload.grad_ckpt);
}

TEST(PlanRequest, HostileJsonIsRefusedWithWhereAndWhat) {
  EXPECT_EQ(JsonError("not json"), "plan request: not a JSON object");
  EXPECT_EQ(JsonError("[1, 2]"), "plan request: not a JSON object");
  EXPECT_EQ(JsonError("null"), "plan request: not a JSON object");
  EXPECT_EQ(JsonError(R"({"model": "llama-3.1-8b"})"), "plan request: schema_version is not 1");
  EXPECT_EQ(JsonError(R"({"schema_version": 2, "model": "x"})"),
            "plan request: schema_version is not 1");
  EXPECT_EQ(JsonError(R"({"schema_version": "1", "model": "x"})"),
            "plan request: schema_version is not 1");
  EXPECT_EQ(JsonError(R"({"schema_version": 1.5, "model": "x"})"),
            "plan request: schema_version is not 1");
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "rm -rf": true})"),
            "plan request: unknown key \"rm -rf\"");
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": 7})"),
            "plan request: \"model\" is not a string");
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "batch": "4"})"),
            "plan request: \"batch\" is not an integer");
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "batch": 4.5})"),
            "plan request: \"batch\" is not an integer");
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "grad_ckpt": "on"})"),
            "plan request: \"grad_ckpt\" is not true, false or \"offload\"");
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "framework": "keras"})"),
            "--framework: unknown framework 'keras' (expected "
            "hf|trl|unsloth|axolotl|torchtune|llama-factory|litgpt|megatron|pytorch)");
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "platform": "spark"})"),
            "--platform: 'spark' is not unified or discrete");
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "master_weights": 1})"),
            "plan request: \"master_weights\" is not true or false");
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "lora_targets": "q,k"})"),
            "plan request: \"lora_targets\" is not an array of names");
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "lora_targets": []})"),
            "plan request: \"lora_targets\" is not an array of names");
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "lora_targets": ["q", 1]})"),
            "plan request: \"lora_targets\" is not an array of names");
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "lora_dropout": "0.1"})"),
            "plan request: \"lora_dropout\" is not a number");
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": {"name": "x"}})"),
            "plan request: \"model\" is not a string");
}

TEST(PlanRequest, JsonValuesPassTheFlagsChecks) {
  // Each is a value a flag would refuse: the same message as the flag's.
  EXPECT_EQ(JsonError(R"({"schema_version": 1})").rfind("no model: ", 0), 0u);
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "params": 7000000000})"),
            "conflicting flags: give only one of a catalog name, --config and --params");
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "batch": -1})").rfind("--batch: ", 0),
            0u);
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "batch": 0})").rfind("--batch: ", 0),
            0u);
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "seq": 99999999999})"),
            "--seq: 99999999999 is absurdly large");
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "seq": 18446744073709551615})")
                .rfind("--seq: ", 0),
            0u);
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "lora_dropout": 1.5})"),
            "--lora-dropout: '1.5' is not a number in [0, 1)");
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "lora_dropout": -0.1})"),
            "--lora-dropout: '-0.1' is not a number in [0, 1)");
  EXPECT_EQ(
      JsonError(R"({"schema_version": 1, "model": "x", "method": "magic"})").rfind("--method: ", 0),
      0u);
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "method": "full", "lora_rank": 8})")
                .rfind("conflicting flags: --lora-rank", 0),
            0u);
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "rollout_fraction": 0.5})"),
            "conflicting flags: --rollout-fraction goes with --workload grpo");
  EXPECT_EQ(
      JsonError(R"({"schema_version": 1, "model": "x", "budget_bytes": 0})").rfind("--budget: ", 0),
      0u);
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "budget_bytes": 1,
                          "reserve_bytes": 1})")
                .rfind("conflicting flags: --reserve", 0),
            0u);
  EXPECT_EQ(JsonError(R"({"schema_version": 1, "model": "x", "lora_targets": ["q", "nope"]})")
                .rfind("--lora-targets: ", 0),
            0u);
}

}  // namespace
}  // namespace headroom
