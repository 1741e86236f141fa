#include "plan/plan_fields.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

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

}  // namespace
}  // namespace headroom
