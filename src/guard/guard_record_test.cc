#include "guard/guard_record.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

TEST(GuardRecord, RoundTrip) {
  GuardStartRecord r{4242, 123456, "spark-1", 10'453'460'582ULL, 20'906'921'164ULL, ""};
  const std::string json = GuardStartJson(r);
  EXPECT_EQ(json,
            "{\"guard_pid\":4242,\"guard_start_ticks\":123456,\"host\":\"spark-1\","
            "\"kill_below_bytes\":10453460582,\"warn_below_bytes\":20906921164}");
  const auto back = ParseGuardStartJson(json);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->guard_pid, 4242);
  EXPECT_EQ(back->guard_start_ticks, 123456u);
  EXPECT_EQ(back->host, "spark-1");
  EXPECT_EQ(back->kill_below_bytes, 10'453'460'582ULL);
  EXPECT_EQ(back->warn_below_bytes, 20'906'921'164ULL);
  // Unknown start time: null, read back as unknown.
  r.guard_start_ticks.reset();
  EXPECT_FALSE(ParseGuardStartJson(GuardStartJson(r))->guard_start_ticks);
}

TEST(GuardRecord, StepRecordsRoundTrip) {
  GuardStartRecord r{4242, 1, "spark-1", 1, 2, "/tmp/headroom-companion-x/steps.jsonl"};
  const std::string json = GuardStartJson(r);
  EXPECT_NE(json.find("\"step_records\":\"/tmp/headroom-companion-x/steps.jsonl\""),
            std::string::npos)
      << json;
  EXPECT_EQ(ParseGuardStartJson(json)->step_records, "/tmp/headroom-companion-x/steps.jsonl");
  // None: no key written, none read back; a non-string one is ignored, not a refusal.
  r.step_records.clear();
  EXPECT_EQ(GuardStartJson(r).find("step_records"), std::string::npos);
  const auto odd = ParseGuardStartJson(
      "{\"guard_pid\":12,\"kill_below_bytes\":1,\"warn_below_bytes\":2,\"step_records\":3}");
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->step_records, "");
}

TEST(GuardRecord, RejectsWhatIsNotARecord) {
  for (const char* text :
       {"", "not json", "[]", "{}",
        "{\"guard_pid\":0,\"kill_below_bytes\":1,\"warn_below_bytes\":2}",
        "{\"guard_pid\":-3,\"kill_below_bytes\":1,\"warn_below_bytes\":2}",
        "{\"guard_pid\":\"12\",\"kill_below_bytes\":1,\"warn_below_bytes\":2}",
        "{\"guard_pid\":12,\"warn_below_bytes\":2}",
        "{\"guard_pid\":99999999999,\"kill_below_bytes\":1,\"warn_below_bytes\":2}",
        "{\"guard_pid\":12,\"kill_below_bytes\":1.5,\"warn_below_bytes\":2}"}) {
    EXPECT_FALSE(ParseGuardStartJson(text)) << text;
  }
  // The minimum: pid and levels; an odd host or extra fields are no reason to refuse.
  const auto minimal = ParseGuardStartJson(
      "{\"guard_pid\":12,\"kill_below_bytes\":1,\"warn_below_bytes\":2,"
      "\"host\":7,\"future\":true}");
  ASSERT_TRUE(minimal);
  EXPECT_EQ(minimal->host, "");
}

}  // namespace
}  // namespace headroom
