#include "plan/plan_fields.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "plan/run_config.h"
#include "plan_field_samples.h"

namespace headroom {
namespace {

// The request `text` parses to, written as JSON and read back, as the ladder's journal and
// doctor's stored workload do (plan/plan_request.h).
PlanRequest ThroughJson(const PlanFlagText& text) {
  Message error;
  const auto parsed = ParsePlanRequest(text, &error);
  EXPECT_TRUE(parsed) << EnglishText(error);
  if (!parsed) return {};
  const auto read = PlanRequestFromJson(PlanRequestToJson(*parsed), &error);
  EXPECT_TRUE(read) << EnglishText(error);
  return read ? *read : PlanRequest{};
}

TEST(PlanFields, NamesFlagsAndKeysAreUniqueAndEveryFieldHasHelp) {
  std::set<std::string_view> names, flags, keys;
  for (const PlanField& f : PlanFields()) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_TRUE(flags.insert(f.flag).second) << f.flag;
    EXPECT_TRUE(keys.insert(f.json_key).second) << f.json_key;
    EXPECT_NE(std::string_view(f.help), "") << f.name;
    EXPECT_NE(f.of_request, nullptr) << f.name;
    EXPECT_EQ(f.text == nullptr, f.kind == FieldKind::kFlag) << f.name;
    EXPECT_EQ(FindPlanField(f.name), &f);
  }
  EXPECT_EQ(FindPlanField("no_such_field"), nullptr);
}

// Regression (issue 30): a field missing from one of the hand-kept lists was silently
// dropped when ladder or doctor re-planned a stored request. Every field given survives.
TEST(PlanFields, EveryFieldGivenSurvivesTheJsonRoundTrip) {
  for (const PlanField& f : PlanFields()) {
    SCOPED_TRACE(std::string(f.name));
    const auto sample = testing::PlanFieldSamples().find(std::string(f.name));
    ASSERT_NE(sample, testing::PlanFieldSamples().end()) << "no sample for a field of the table";
    PlanFlagText text;
    text.model = "llama-3.1-8b";
    for (const auto& [name, value] : sample->second.with) {
      SetFieldText(text, *FindPlanField(name), value);
    }
    SetFieldText(text, f, sample->second.value);
    ASSERT_NE(FieldText(text, f), FieldText(PlanFlagText{}, f)) << "the sample is the default";
    const PlanRequest read = ThroughJson(text);
    EXPECT_EQ(FieldText(RequestText(read), f), sample->second.value);
  }
}

TEST(PlanFields, EveryFieldARunConfigSetsReachesThePlan) {
  int reachable = 0;
  for (const PlanField& f : PlanFields()) {
    if (!f.run_config) continue;
    SCOPED_TRACE(std::string(f.name));
    const auto sample = testing::PlanFieldSamples().find(std::string(f.name));
    ASSERT_NE(sample, testing::PlanFieldSamples().end());
    PlanTextLayer file;
    SetFieldText(file.text, f, sample->second.value);
    file.given = {std::string(f.name)};
    const LayeredPlanText layered = LayerPlanText({}, &file);
    EXPECT_EQ(FieldText(layered.text, f), sample->second.value);
    EXPECT_EQ(layered.sources.at(f.name), PlanSource::kFile);
    ++reachable;
  }
  EXPECT_EQ(reachable, 20);  // the fields run_config.cc's readers set
}

TEST(PlanFields, LayersFlagOverFileOverProfileOverDefault) {
  PlanTextLayer flags;
  flags.text.batch = "8";
  flags.given = {"batch"};
  PlanTextLayer file;
  file.text.batch = "2";
  file.text.seq = "4096";
  file.text.framework = "unsloth";
  file.given = {"batch", "seq", "framework"};
  const LayeredPlanText out = LayerPlanText(flags, &file);
  EXPECT_EQ(out.text.batch, "8");
  EXPECT_EQ(out.text.seq, "4096");
  EXPECT_EQ(out.text.optimizer, "adamw-8bit");  // unsloth's profile
  EXPECT_EQ(out.text.grad_ckpt, "offload");
  EXPECT_EQ(out.text.lora_dropout, "0");
  EXPECT_EQ(out.text.attention, "sdpa");  // the default
  EXPECT_EQ(out.sources.at("batch"), PlanSource::kFlag);
  EXPECT_EQ(out.sources.at("seq"), PlanSource::kFile);
  EXPECT_EQ(out.sources.at("framework"), PlanSource::kFile);
  EXPECT_EQ(out.sources.at("optimizer"), PlanSource::kProfile);
  EXPECT_EQ(out.sources.at("attention"), PlanSource::kDefault);
  EXPECT_EQ(out.sources.size(), PlanFields().size());
  EXPECT_EQ(PlanSourcesToJson(out.sources)["seq"], "file");
}

TEST(PlanFields, TheFileYieldsToTheFlagsThatMakeItsValueMoot) {
  PlanTextLayer file;
  file.text.model = "llama-3-8b";
  file.text.weight_dtype = "int8";
  file.text.method = "qlora";
  file.text.lora_rank = "8";
  file.text.rollout_fraction = "0.5";
  file.given = {"model", "weight_dtype", "method", "lora_rank", "rollout_fraction"};
  PlanTextLayer flags;
  flags.text.params = "7B";
  flags.text.method = "full";
  flags.text.workload = "dpo";
  flags.given = {"params", "method", "workload"};
  const LayeredPlanText out = LayerPlanText(flags, &file);
  EXPECT_EQ(out.text.model, "");
  EXPECT_EQ(out.text.weight_dtype, "");
  EXPECT_EQ(out.text.lora_rank, "");
  EXPECT_EQ(out.text.lora_dropout, "");  // no profile dropout for a full fine-tune
  EXPECT_EQ(out.text.rollout_fraction, "");
  EXPECT_EQ(out.sources.at("model"), PlanSource::kDefault);
}

TEST(PlanFields, AnUnknownFrameworkFillsNothingAndParsingRefusesIt) {
  PlanTextLayer flags;
  flags.text.model = "llama-3.1-8b";
  flags.text.framework = "nope";
  flags.given = GivenFields(flags.text);
  const LayeredPlanText out = LayerPlanText(flags);
  EXPECT_EQ(out.text.optimizer, "");
  Message error;
  EXPECT_FALSE(ParsePlanRequest(out.text, &error));
  EXPECT_NE(EnglishText(error).find("--framework"), std::string::npos);
}

}  // namespace
}  // namespace headroom
