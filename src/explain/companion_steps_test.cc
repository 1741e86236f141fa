#include "explain/companion_steps.h"

#include <gtest/gtest.h>

#include <string>

#include "explain/step_times.h"

namespace headroom {
namespace {

std::string StepLine(int pid, int step, double wall) {
  return "{\"schema\":\"headroom.step/1\",\"pid\":" + std::to_string(pid) +
         ",\"rank\":null,\"kind\":\"step\",\"step\":" + std::to_string(step) +
         ",\"wall\":" + std::to_string(wall) + ",\"mono\":" + std::to_string(wall + 5) +
         ",\"tokens\":null,\"loss\":2.5,\"lr\":null}\n";
}

TEST(CompanionSteps, ExactIntervalsFromTheRecords) {
  std::string text =
      R"({"schema":"headroom.step/1","pid":7,"kind":"start","wall":1764745200,"mono":1,"framework":"plain","signal":10,"request_file":true})"
      "\n";
  // Steps 0..5, 0.25 s apart, then a slow one of 1.5 s.
  for (int i = 0; i <= 5; ++i) text += StepLine(7, i, 1764745200.0 + 0.25 * i);
  text += StepLine(7, 6, 1764745200.0 + 1.25 + 1.5);
  bool from_records = false;
  const auto records = ParseStepSource(text, {}, &from_records);
  EXPECT_TRUE(from_records);
  ASSERT_EQ(records.size(), 7U);
  EXPECT_EQ(records[0].format, StepLogFormat::kCompanion);
  EXPECT_EQ(StepLogFormatName(records[0].format), "headroom-step");
  EXPECT_DOUBLE_EQ(*records[3].loss, 2.5);
  const auto timings = StepTimes(records);
  ASSERT_EQ(timings.size(), 6U);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(timings[i].seconds_per_step, 0.25, 1e-5);
  EXPECT_NEAR(timings[5].seconds_per_step, 1.5, 1e-5);
  EXPECT_EQ(timings[5].source, StepTimingSource::kTimestamps);
}

TEST(CompanionSteps, TwoRanksAreTwoStreams) {
  std::string text;
  for (int i = 0; i < 4; ++i) {
    text += StepLine(10, i, 100.0 + i);
    text += StepLine(11, i, 100.0 + i + 0.01);
  }
  const auto records = ParseStepSource(text, {}, nullptr);
  ASSERT_EQ(records.size(), 8U);
  EXPECT_NE(records[0].stream, records[1].stream);
  EXPECT_EQ(StepTimes(records).size(), 3U);  // one stream's intervals, not both interleaved
}

TEST(CompanionSteps, ALogIsStillALog) {
  bool from_records = true;
  const std::string log = "{'loss': 1.2, 'learning_rate': 2e-05, 'epoch': 0.1}\n";
  (void)ParseStepSource(log, {}, &from_records);
  EXPECT_FALSE(from_records);
  EXPECT_FALSE(IsCompanionRecordsText("\n\n  \n"));
  EXPECT_FALSE(IsCompanionRecordsText(R"({"schema":"headroom.step/1"})"));
}

}  // namespace
}  // namespace headroom
