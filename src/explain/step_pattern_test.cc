#include "explain/step_pattern.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "explain/step_log.h"

namespace headroom {
namespace {

StepPattern Compiled(std::string_view pattern) {
  Result<StepPattern> p = StepPattern::Compile(pattern);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : EnglishText(p.error().what));
  return std::move(p).value();
}

std::string ErrorOf(std::string_view pattern) {
  Result<StepPattern> p = StepPattern::Compile(pattern);
  EXPECT_FALSE(p.ok()) << pattern;
  return p.ok() ? "" : EnglishText(p.error().what);
}

TEST(StepPattern, NumberedGroupsAreStepThenSecondsPerStep) {
  const StepPattern p = Compiled(R"(it (\d+) took ([0-9.]+)s)");
  StepRecord r;
  ASSERT_TRUE(p.Match("[worker] it 42 took 1.5s (loss 2)", &r));
  EXPECT_EQ(r.format, StepLogFormat::kUserPattern);
  EXPECT_EQ(r.step, 42);
  EXPECT_EQ(r.seconds_per_step, 1.5);
  EXPECT_TRUE(r.rate_is_measured);
  EXPECT_FALSE(p.Match("it x took 1.5s", &r));
}

TEST(StepPattern, NamedGroups) {
  const StepPattern p =
      Compiled(R"((?<time>\S+) step (?<step>\d+)/(?<total>\d+) (?<ms>[\d.]+)ms loss=(?<loss>\S+))");
  StepRecord r;
  ASSERT_TRUE(p.Match("2026-11-29T10:00:00Z step 7/100 250ms loss=nan", &r));
  EXPECT_EQ(r.step, 7);
  EXPECT_EQ(r.total_steps, 100);
  EXPECT_EQ(r.seconds_per_step, 0.25);
  EXPECT_TRUE(std::isnan(*r.loss));
  EXPECT_EQ(r.time_source, StepTimeSource::kLine);
  EXPECT_EQ(FormatUtcIso8601(*r.time), "2026-11-29T10:00:00.000Z");

  const StepPattern q = Compiled(R"(e=(?<elapsed>[\d:]+) r=(?<rate>[\d.]+) s=(?<step>\d+))");
  ASSERT_TRUE(q.Match("e=01:02:03 r=4 s=9", &r));
  EXPECT_EQ(r.elapsed_seconds, 3723.0);
  EXPECT_EQ(r.steps_per_second, 4.0);
}

TEST(StepPattern, EscapedParensClassesAndNonCapturingGroupsAreNotCounted) {
  // "\(", "[(]", "[\]()]" and "(?:" open no group; the step is group 1 after the rewrite.
  const StepPattern p = Compiled(R"(\((?:rank|worker) [(]?(?<step>\d+)[\]()]? (?<seconds>\d+))");
  StepRecord r;
  ASSERT_TRUE(p.Match("(rank (12] 3", &r));
  EXPECT_EQ(r.step, 12);
  EXPECT_EQ(r.seconds_per_step, 3.0);
}

TEST(StepPattern, ErrorsNameTheFlag) {
  EXPECT_EQ(ErrorOf("(\\d+"), "--step-regex: invalid pattern \"(\\d+\": unbalanced parentheses");
  EXPECT_EQ(ErrorOf("(?<foo>\\d+)"),
            "--step-regex: unknown group name \"foo\": the names are step, total, seconds, ms, "
            "rate, loss, elapsed, time");
  EXPECT_EQ(ErrorOf("(?<step>\\d+) (?<step>\\d+)"),
            "--step-regex: group name \"step\" appears twice");
  EXPECT_EQ(ErrorOf("step \\d+"),
            "--step-regex: no group for the step in \"step \\d+\": add (?<step>\\d+) or make the "
            "first group the step");
  EXPECT_EQ(ErrorOf("(?<loss>\\d+)"),
            "--step-regex: no group for the step in \"(?<loss>\\d+)\": add (?<step>\\d+) or make "
            "the first group the step");
  EXPECT_TRUE(ErrorOf("(?<step\\d+").starts_with("--step-regex: unterminated group name"));
  EXPECT_TRUE(ErrorOf("x{2,1}(\\d)").starts_with("--step-regex: invalid pattern"));
}

TEST(StepPattern, ReplacesTheBuiltInFormats) {
  const StepPattern p = Compiled(R"(global_step=(\d+))");
  StepLogOptions options;
  options.pattern = &p;
  const auto r = ParseStepLog(
      "Step 5 | loss:1\n"
      "2026-11-29T10:00:00Z [default1]:global_step=6\n",
      options);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].step, 6);
  EXPECT_EQ(r[0].rank, 1);
  EXPECT_EQ(r[0].time_source, StepTimeSource::kArrival);
}

TEST(StepPattern, LongLinesAreSearchedOnlyAtTheirStart) {
  const StepPattern p = Compiled(R"(c(\d+))");
  StepRecord r;
  const size_t limit = StepPattern::kMaxSearchBytes;
  EXPECT_FALSE(p.Match(std::string(limit, 'a') + "c1", &r));  // past the limit: not searched
  EXPECT_TRUE(p.Match(std::string(limit - 2, 'a') + "c1", &r));
  EXPECT_EQ(r.step, 1);
}

TEST(StepPattern, BothNamedGroupSpellingsAreRead) {
  // "(?<name>" is rewritten to "(?P<name>" for Debian 12's RE2; "(?P<name>" is taken as is.
  StepRecord r;
  ASSERT_TRUE(Compiled(R"(s=(?P<step>\d+) t=(?<seconds>[\d.]+))").Match("s=3 t=0.5", &r));
  EXPECT_EQ(r.step, 3);
  EXPECT_EQ(r.seconds_per_step, 0.5);
  EXPECT_EQ(ErrorOf("(?P<foo>x)"),
            "--step-regex: unknown group name \"foo\": the names are step, total, seconds, ms, "
            "rate, loss, elapsed, time");
  EXPECT_EQ(ErrorOf("(?P<step>\\d+)(?<step>\\d+)"),
            "--step-regex: group name \"step\" appears twice");
}

TEST(StepPattern, ABracketFirstInAClassIsAMember) {
  // RE2: "[]" and "[^]" do not close the class, so the "(?<step>" after it is still a group.
  StepRecord r;
  ASSERT_TRUE(Compiled(R"([]x]+ (?<step>\d+))").Match("]x] 8", &r));
  EXPECT_EQ(r.step, 8);
  ASSERT_TRUE(Compiled(R"([^]]+(?<step>\d+))").Match("ab9", &r));
  EXPECT_EQ(r.step, 9);
}

TEST(StepPattern, WhatRe2DoesNotReadIsRefusedInOneLine) {
  EXPECT_EQ(ErrorOf(R"((\d+)\1)"),
            "--step-regex: invalid pattern \"(\\d+)\\1\": invalid escape (backreferences are not "
            "supported)");
  EXPECT_EQ(ErrorOf(R"((?=a)(\d+))"),
            "--step-regex: invalid pattern \"(?=a)(\\d+)\": invalid (? group (lookaround is not "
            "supported)");
  EXPECT_EQ(ErrorOf(R"((?<=a)(\d+))"),
            "--step-regex: invalid pattern \"(?<=a)(\\d+)\": invalid (? group (lookaround is not "
            "supported)");
  EXPECT_EQ(ErrorOf("(\\d+))"),
            "--step-regex: invalid pattern \"(\\d+))\": unbalanced parentheses");
  EXPECT_EQ(ErrorOf("(\\d{1001})"),
            "--step-regex: invalid pattern \"(\\d{1001})\": invalid {n,m} repeat (at most 1000)");
}

TEST(StepPattern, ABacktrackingPatternRunsInLinearTime) {
  // Regression: with std::regex this pattern on long lines ran past 30 s. RE2 reads 2,000 lines
  // of 4 KiB (8 MB) in well under a second on the build VM; 10 s is the bound, not a figure.
  const StepPattern p = Compiled(R"((?<step>\d+)((.|x)*)z)");
  const std::string line = "1" + std::string(StepPattern::kMaxSearchBytes - 1, 'x');
  StepRecord r;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 2000; ++i) EXPECT_FALSE(p.Match(line, &r));
  EXPECT_TRUE(p.Match("12xxz", &r));
  EXPECT_EQ(r.step, 12);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

}  // namespace
}  // namespace headroom
