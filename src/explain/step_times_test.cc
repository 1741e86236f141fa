#include "explain/step_times.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include "explain/step_log.h"
#include "testing_files.h"

namespace headroom {
namespace {

using std::chrono::milliseconds;

WallTime At(int64_t ms) { return WallTime(milliseconds(ms)); }

StepRecord Rec(int64_t step, uint64_t stream = 1) {
  StepRecord r;
  r.step = step;
  r.stream = stream;
  return r;
}

TEST(StepTimes, FromTimestamps) {
  std::vector<StepRecord> in;
  for (int64_t s = 0; s <= 4; ++s) {
    in.push_back(Rec(s * 10));
    in.back().time = At(1000 + s * (s < 3 ? 5000 : 20000));  // steps 30..40 run 4x slower
  }
  const auto t = StepTimes(in);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].first_step, 0);
  EXPECT_EQ(t[0].last_step, 10);
  EXPECT_DOUBLE_EQ(t[0].seconds_per_step, 0.5);
  EXPECT_EQ(t[0].source, StepTimingSource::kTimestamps);
  EXPECT_EQ(t[0].end_time, At(6000));
  EXPECT_EQ(t[0].record_index, 1u);
  EXPECT_DOUBLE_EQ(t[3].seconds_per_step, 2.0);
}

TEST(StepTimes, MeasuredBeatsTimestamps) {
  std::vector<StepRecord> in = {Rec(10), Rec(20)};
  in[0].time = At(0);
  in[1].time = At(30'000);  // 3 s/step by the clock, which includes a pause for eval
  in[1].seconds_per_step = 0.8;
  in[1].rate_is_measured = true;
  const auto t = StepTimes(in);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].source, StepTimingSource::kMeasured);
  EXPECT_DOUBLE_EQ(t[0].seconds_per_step, 0.8);
}

TEST(StepTimes, ElapsedOnlyOverLongSpansElseDisplayedRate) {
  std::vector<StepRecord> in = {Rec(0), Rec(2), Rec(100)};
  in[0].elapsed_seconds = 0;
  in[1].elapsed_seconds = 1;  // 1 s in whole seconds: too coarse
  in[1].steps_per_second = 2.5;
  in[2].elapsed_seconds = 51;
  in[2].steps_per_second = 2.5;
  const auto t = StepTimes(in);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].source, StepTimingSource::kDisplayedRate);
  EXPECT_DOUBLE_EQ(t[0].seconds_per_step, 0.4);
  EXPECT_EQ(t[1].source, StepTimingSource::kElapsed);
  EXPECT_DOUBLE_EQ(t[1].seconds_per_step, 50.0 / 98);
  // With no rate, a short elapsed span is used after all.
  in[1].steps_per_second.reset();
  EXPECT_EQ(StepTimes(in)[0].source, StepTimingSource::kElapsed);
}

TEST(StepTimes, RepeatsSkippedAndRestartsStartASegment) {
  std::vector<StepRecord> in = {Rec(1), Rec(2), Rec(2), Rec(3), Rec(1), Rec(2), Rec(5)};
  for (size_t i = 0; i < in.size(); ++i) in[i].time = At(static_cast<int64_t>(i) * 1000);
  const auto t = StepTimes(in);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].segment, 0);
  EXPECT_EQ(t[1].first_step, 2);
  EXPECT_DOUBLE_EQ(t[1].seconds_per_step, 2.0);  // from the first step-2 record, at 1 s
  EXPECT_EQ(t[2].segment, 1);                    // after the step went back to 1
  EXPECT_EQ(t[2].first_step, 1);
  EXPECT_EQ(t[3].last_step, 5);
  EXPECT_DOUBLE_EQ(t[3].seconds_per_step, 1.0 / 3);
}

TEST(StepTimes, TimeOrElapsedGoingBackIsARestart) {
  std::vector<StepRecord> in = {Rec(1), Rec(2), Rec(3)};
  in[0].time = At(5000);
  in[1].time = At(1000);
  in[2].time = At(2000);
  auto t = StepTimes(in);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].segment, 1);
  EXPECT_EQ(t[0].first_step, 2);
  std::vector<StepRecord> e = {Rec(8), Rec(9)};
  e[0].elapsed_seconds = 20;
  e[1].elapsed_seconds = 2;
  e[1].seconds_per_step = 2.5;
  EXPECT_TRUE(StepTimes(e).empty());
}

TEST(StepTimes, PrimaryStreamHasTheMostSteps) {
  std::vector<StepRecord> in = {Rec(1, 7), Rec(2, 7), Rec(1, 9), Rec(2, 9), Rec(3, 9)};
  in.push_back(StepRecord{});  // no step: not counted
  in.back().stream = 7;
  in.push_back(StepRecord{});
  in.back().stream = 7;
  EXPECT_EQ(PrimaryStream(in), 9u);
  EXPECT_EQ(PrimaryStream({Rec(1, 3), Rec(1, 4)}), 3u);  // a tie: the first seen
  EXPECT_FALSE(PrimaryStream({StepRecord{}}));
  EXPECT_TRUE(StepTimes({}).empty());
}

TEST(StepTimes, NoUsableTimeNoInterval) {
  std::vector<StepRecord> in = {Rec(1), Rec(2), Rec(3)};
  in[2].steps_per_second = 2;
  const auto t = StepTimes(in);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].first_step, 2);  // the anchor moved on even without a value
}

// The HF Trainer fixture with an arrival stamp on every segment, as `headroom watch --log`
// writes it (terminators kept): the slowdown of steps 31-40 (0.5 s against 0.25 s) comes out
// exactly, where tqdm's displayed rate (an EMA) smears it over the following steps.
TEST(StepTimes, ArrivalStampsOnTheRealTqdmFixture) {
  std::ifstream in(testing::FixturePath("logs/tqdm_hf_trainer.log"), std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string raw = bytes.str();
  std::string stamped;
  int64_t ms = 0;
  size_t begin = 0;
  for (size_t i = 0; i <= raw.size(); ++i) {
    if (i < raw.size() && raw[i] != '\r' && raw[i] != '\n') continue;
    const std::string_view segment(raw.data() + begin, i - begin);
    // The fake clock of make_tqdm_logs.py: 0.25 s a step, 0.5 s for steps 31-40.
    const size_t slash = segment.find("/60 [");
    if (slash != std::string_view::npos) {
      size_t d = slash;
      while (d > 0 && std::isdigit(static_cast<unsigned char>(segment[d - 1]))) --d;
      const int n = std::stoi(std::string(segment.substr(d, slash - d)));
      ms = 1000LL * 1764410400 + 250LL * std::min(n, 30) + 500LL * std::clamp(n - 30, 0, 10) +
           250LL * std::max(n - 40, 0);
    }
    stamped += FormatUtcIso8601(WallTime(milliseconds(ms))) + " " + std::string(segment);
    if (i < raw.size()) stamped += raw[i];  // the segment's own terminator, as watch keeps it
    begin = i + 1;
  }
  const auto t = StepTimes(ParseStepLog(stamped));
  ASSERT_EQ(t.size(), 60u);
  for (const StepTiming& s : t) {
    EXPECT_EQ(s.source, StepTimingSource::kTimestamps);
    EXPECT_EQ(s.last_step, s.first_step + 1);
    const bool slow = s.last_step >= 31 && s.last_step <= 40;
    EXPECT_DOUBLE_EQ(s.seconds_per_step, slow ? 0.5 : 0.25) << s.last_step;
  }
  // Without the stamps only tqdm's EMA is left: still 4.00 it/s until step 30, slower after.
  const auto ema = StepTimes(ParseStepLog(raw));
  ASSERT_EQ(ema.size(), 60u);
  EXPECT_EQ(ema[10].source, StepTimingSource::kDisplayedRate);
  EXPECT_DOUBLE_EQ(ema[10].seconds_per_step, 0.25);
  EXPECT_GT(ema[35].seconds_per_step, 0.4);
}

}  // namespace
}  // namespace headroom
