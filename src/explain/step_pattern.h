// StepPattern: a user's --step-regex, for logs none of the built-in formats read.
//
// Grammar: RE2's (docs/explain-logs.md "--step-regex"), searched anywhere in a segment after
// the arrival prefix and launcher tags are removed. RE2 matches in time linear in the line,
// whatever the pattern: no backtracking, so no backreferences and no lookaround. Groups:
//   - named: (?<step>...) required; optional (?<total>...), (?<seconds>...) seconds per step,
//     (?<ms>...) milliseconds per step, (?<rate>...) steps per second, (?<loss>...),
//     (?<elapsed>...) seconds or [H:]MM:SS since the start, (?<time>...) an ISO 8601 time or
//     Unix seconds. "(?P<name>" is read the same; "(?<name>" is rewritten to it, since the
//     RE2 of Debian 12 reads only the P spelling.
//   - numbered, when no group is named: group 1 is the step, group 2 (if the pattern has
//     one) the seconds per step.
// A segment is a record when the pattern matches and the step group holds a non-negative
// integer. Example: --step-regex 'it (?<step>\d+) took (?<ms>[0-9.]+) ms'.
//
// The built-in formats use hand-written scanners; a pattern runs RE2 on every segment and is
// slower (docs/explain-logs.md has the figures). Only the first kMaxSearchBytes of a segment
// are searched, which bounds the cost of one segment.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "explain/step_record.h"

namespace re2 {
class RE2;
}

namespace headroom {

class StepPattern {
 public:
  static constexpr size_t kMaxSearchBytes = 4096;

  // Errors (one line, naming the flag): "--step-regex: invalid pattern \"(\": unbalanced
  // parentheses", "--step-regex: unknown group name \"foo\": the names are step, total,
  // seconds, ms, rate, loss, elapsed, time", "--step-regex: no group for the step in ...".
  static Result<StepPattern> Compile(std::string_view pattern);

  // Fills the fields the pattern's groups give (step, total, rates, loss, elapsed, time;
  // format kUserPattern, rate_is_measured) when the pattern matches `text`; false otherwise,
  // leaving *record as it was.
  bool Match(std::string_view text, StepRecord* record) const;

  const std::string& pattern() const { return pattern_; }

 private:
  StepPattern() = default;

  std::string pattern_;                    // as the user wrote it
  std::shared_ptr<const re2::RE2> regex_;  // the rewritten pattern, compiled once
  int step_group_ = 0;                     // 0: no such group
  int total_group_ = 0;
  int seconds_group_ = 0;
  int ms_group_ = 0;
  int rate_group_ = 0;
  int loss_group_ = 0;
  int elapsed_group_ = 0;
  int time_group_ = 0;
};

}  // namespace headroom
