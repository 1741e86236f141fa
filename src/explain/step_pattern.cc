// Implementation notes: the pattern runs on RE2 (docs/explain-logs.md "--step-regex"), whose
// matching time is linear in the text; std::regex backtracked, and '(?<step>\d+)((.|x)*)z'
// on long lines ran past 30 s. Compile checks the group names itself (the error
// names the flag and lists the names) and rewrites "(?<name>" to "(?P<name>", the only
// spelling the RE2 of Debian 12 reads; RE2 then numbers the groups. Compile errors come back
// as RE2 error codes, never on stderr (log_errors off).
#include "explain/step_pattern.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <array>
#include <cmath>
#include <vector>

#include "base/json_reader.h"  // QuoteForMessage
#include "base/message.h"
#include "explain/log_formats.h"
#include "explain/log_time.h"

namespace headroom {
namespace {

constexpr std::array<std::string_view, 8> kGroupNames = {"step", "total", "seconds", "ms",
                                                         "rate", "loss",  "elapsed", "time"};

std::string_view RegexReason(re2::RE2::ErrorCode code) {
  switch (code) {
    case re2::RE2::ErrorBadEscape:
      return "invalid escape (backreferences are not supported)";
    case re2::RE2::ErrorBadCharClass:
      return "invalid character class";
    case re2::RE2::ErrorBadCharRange:
      return "invalid character range";
    case re2::RE2::ErrorMissingBracket:
      return "unbalanced [ ]";
    case re2::RE2::ErrorMissingParen:
    case re2::RE2::ErrorUnexpectedParen:
      return "unbalanced parentheses";
    case re2::RE2::ErrorTrailingBackslash:
      return "trailing backslash";
    case re2::RE2::ErrorRepeatArgument:
      return "nothing to repeat";
    case re2::RE2::ErrorRepeatSize:
      return "invalid {n,m} repeat (at most 1000)";
    case re2::RE2::ErrorRepeatOp:
      return "invalid repeat operator";
    case re2::RE2::ErrorBadPerlOp:
      return "invalid (? group (lookaround is not supported)";
    case re2::RE2::ErrorBadUTF8:
      return "invalid UTF-8";
    case re2::RE2::ErrorBadNamedCapture:
      return "invalid group name";
    case re2::RE2::ErrorPatternTooLarge:
      return "too complex";
    default:
      return "invalid";
  }
}

// The pattern with its named groups spelled "(?P<name>", and whether it names any.
struct Rewritten {
  std::string pattern;
  bool named = false;
};

// The length of a named group's opening at p[i] ("(?<" or "(?P<", not a lookbehind "(?<=" or
// "(?<!"); 0 when there is none.
size_t NamedGroupOpening(std::string_view p, size_t i) {
  std::string_view rest = p.substr(i);
  size_t n = 0;
  if (rest.starts_with("(?<")) n = 3;
  if (rest.starts_with("(?P<")) n = 4;
  if (n == 0 || rest.size() <= n || rest[n] == '=' || rest[n] == '!') return 0;
  return n;
}

Result<Rewritten> Rewrite(std::string_view p) {
  Rewritten out;
  out.pattern.reserve(p.size() + 8);
  std::array<bool, kGroupNames.size()> seen{};
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {  // an escape: copy it and the byte it escapes
      out.pattern += c;
      if (i + 1 < p.size()) out.pattern += p[++i];
      continue;
    }
    if (in_class) {
      in_class = c != ']';
    } else if (c == '[') {
      in_class = true;  // RE2: a ']' first in the class ("[]", "[^]") is a member
      const size_t first = i + 1 < p.size() && p[i + 1] == '^' ? i + 2 : i + 1;
      if (first < p.size() && p[first] == ']') {
        out.pattern += p.substr(i, first + 1 - i);
        i = first;
        continue;
      }
    } else if (const size_t open = NamedGroupOpening(p, i); open != 0) {
      const size_t close = p.find('>', i + open);
      if (close == std::string_view::npos) {
        return Error{Msg("--step-regex: unterminated group name in {}", QuoteForMessage(p))};
      }
      const std::string_view name = p.substr(i + open, close - i - open);
      size_t k = 0;
      while (k < kGroupNames.size() && kGroupNames[k] != name) ++k;
      if (k == kGroupNames.size()) {
        return Error{
            Msg("--step-regex: unknown group name {}: the names are step, "
                "total, seconds, ms, rate, loss, elapsed, time",
                QuoteForMessage(name, 40))};
      }
      if (seen[k]) {
        return Error{Msg("--step-regex: group name {} appears twice", QuoteForMessage(name, 40))};
      }
      seen[k] = true;
      out.named = true;
      out.pattern += "(?P<";
      out.pattern += name;
      out.pattern += '>';
      i = close;
      continue;
    }
    out.pattern += c;
  }
  return out;
}

int GroupIndex(const re2::RE2& re, std::string_view name) {
  const auto& groups = re.NamedCapturingGroups();
  const auto it = groups.find(std::string(name));
  return it == groups.end() ? 0 : it->second;
}

}  // namespace

Result<StepPattern> StepPattern::Compile(std::string_view pattern) {
  Result<Rewritten> rw = Rewrite(pattern);
  if (!rw.ok()) return rw.error();
  StepPattern p;
  p.pattern_ = std::string(pattern);
  re2::RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_shared<const re2::RE2>(rw->pattern, options);
  if (!re->ok()) {
    return Error{Msg("--step-regex: invalid pattern {}: {}", QuoteForMessage(pattern),
                     RegexReason(re->error_code()))};
  }
  if (rw->named) {
    p.step_group_ = GroupIndex(*re, "step");
    p.total_group_ = GroupIndex(*re, "total");
    p.seconds_group_ = GroupIndex(*re, "seconds");
    p.ms_group_ = GroupIndex(*re, "ms");
    p.rate_group_ = GroupIndex(*re, "rate");
    p.loss_group_ = GroupIndex(*re, "loss");
    p.elapsed_group_ = GroupIndex(*re, "elapsed");
    p.time_group_ = GroupIndex(*re, "time");
  } else {
    const int captures = re->NumberOfCapturingGroups();
    p.step_group_ = captures >= 1 ? 1 : 0;
    p.seconds_group_ = captures >= 2 ? 2 : 0;
  }
  if (p.step_group_ == 0) {
    return Error{
        Msg("--step-regex: no group for the step in {}: add (?<step>\\d+) "
            "or make the first group the step",
            QuoteForMessage(pattern))};
  }
  p.regex_ = std::move(re);
  return p;
}

bool StepPattern::Match(std::string_view text, StepRecord* record) const {
  text = text.substr(0, kMaxSearchBytes);
  // Group 0 and every group up to the highest one a field reads; an unmatched group is empty.
  const int groups = regex_->NumberOfCapturingGroups() + 1;
  std::array<re2::StringPiece, 32> small;
  std::vector<re2::StringPiece> large;
  re2::StringPiece* m = small.data();
  if (groups > static_cast<int>(small.size())) {
    large.resize(static_cast<size_t>(groups));
    m = large.data();
  }
  if (!regex_->Match(re2::StringPiece(text.data(), text.size()), 0, text.size(),
                     re2::RE2::UNANCHORED, m, groups)) {
    return false;
  }
  auto group = [&](int i) -> std::string_view {
    if (i == 0 || m[i].data() == nullptr) return {};
    return std::string_view(m[i].data(), m[i].size());
  };
  StepRecord r;
  r.step = step_log::ToCount(group(step_group_));
  if (!r.step) return false;
  if (auto total = step_log::ToCount(group(total_group_)); total && *total > 0) {
    r.total_steps = total;
  }
  r.seconds_per_step = step_log::Positive(step_log::ToDouble(group(seconds_group_)));
  if (auto ms = step_log::Positive(step_log::ToDouble(group(ms_group_)))) {
    r.seconds_per_step = *ms / 1000;
  }
  r.steps_per_second = step_log::Positive(step_log::ToDouble(group(rate_group_)));
  r.rate_is_measured = r.seconds_per_step || r.steps_per_second;
  if (!group(loss_group_).empty()) r.loss = step_log::ToDouble(group(loss_group_));
  const std::string_view elapsed = group(elapsed_group_);
  if (!elapsed.empty()) {
    std::optional<double> e = step_log::ToClockSeconds(elapsed);
    if (!e) e = step_log::ToDouble(elapsed);
    if (e && std::isfinite(*e) && *e >= 0) r.elapsed_seconds = e;
  }
  const std::string_view time = group(time_group_);
  if (const auto ts = ParseLogTimestamp(time); ts && ts->length == time.size()) {
    r.time = ts->time;
    r.time_source = ts->has_zone ? StepTimeSource::kLine : StepTimeSource::kLineLocal;
  } else if (auto unix = step_log::ToDouble(time)) {
    r.time = step_log::UnixTime(*unix);
    if (r.time) r.time_source = StepTimeSource::kLine;
  }
  r.format = StepLogFormat::kUserPattern;
  *record = r;
  return true;
}

}  // namespace headroom
