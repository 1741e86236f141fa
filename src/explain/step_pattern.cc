// Implementation notes: std::regex (ECMAScript) has no named groups, so Compile rewrites
// "(?<name>" to "(" and counts capturing groups as it goes: every '(' that is not escaped,
// not inside a [...] class and not followed by '?' opens one. regex_error never leaves this
// file: Compile turns it into an Error and Match into "no match" (libstdc++ throws
// error_complexity / error_stack on hostile input).
#include "explain/step_pattern.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

#include "base/json_reader.h"  // QuoteForMessage
#include "base/message.h"
#include "explain/log_formats.h"
#include "explain/log_time.h"

namespace headroom {
namespace {

constexpr std::array<std::string_view, 8> kGroupNames = {"step", "total", "seconds", "ms",
                                                         "rate", "loss",  "elapsed", "time"};

std::string_view RegexReason(std::regex_constants::error_type code) {
  using namespace std::regex_constants;
  switch (code) {
    case error_collate:
      return "invalid collating element";
    case error_ctype:
      return "invalid character class";
    case error_escape:
      return "invalid escape";
    case error_backref:
      return "invalid back reference";
    case error_brack:
      return "unbalanced [ ]";
    case error_paren:
      return "unbalanced parentheses";
    case error_brace:
      return "unbalanced { }";
    case error_badbrace:
      return "invalid {n,m} repeat";
    case error_range:
      return "invalid character range";
    case error_space:
      return "out of memory";
    case error_badrepeat:
      return "nothing to repeat";
    case error_complexity:
      return "too complex";
    case error_stack:
      return "too complex";
    default:
      return "invalid";
  }
}

// The pattern with its named groups made plain, and the number each name got.
struct Rewritten {
  std::string pattern;
  std::array<int, kGroupNames.size()> group{};  // group index per name, 0 when absent
  int captures = 0;
  bool named = false;
};

Result<Rewritten> Rewrite(std::string_view p) {
  Rewritten out;
  out.pattern.reserve(p.size());
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
      in_class = true;  // ECMAScript: "[]" is an empty class, so the next ']' always closes
    } else if (c == '(' && i + 1 < p.size() && p[i + 1] == '?') {
      if (i + 2 < p.size() && p[i + 2] == '<' && i + 3 < p.size() && p[i + 3] != '=' &&
          p[i + 3] != '!') {
        const size_t close = p.find('>', i + 3);
        if (close == std::string_view::npos) {
          return Error{Msg("--step-regex: unterminated group name in {}", QuoteForMessage(p))};
        }
        const std::string_view name = p.substr(i + 3, close - i - 3);
        size_t k = 0;
        while (k < kGroupNames.size() && kGroupNames[k] != name) ++k;
        if (k == kGroupNames.size()) {
          return Error{
              Msg("--step-regex: unknown group name {}: the names are step, "
                  "total, seconds, ms, rate, loss, elapsed, time",
                  QuoteForMessage(name, 40))};
        }
        if (out.group[k] != 0) {
          return Error{Msg("--step-regex: group name {} appears twice", QuoteForMessage(name, 40))};
        }
        out.group[k] = ++out.captures;
        out.named = true;
        out.pattern += '(';
        i = close;
        continue;
      }
    } else if (c == '(') {
      ++out.captures;
    }
    out.pattern += c;
  }
  return out;
}

}  // namespace

Result<StepPattern> StepPattern::Compile(std::string_view pattern) {
  Result<Rewritten> rw = Rewrite(pattern);
  if (!rw.ok()) return rw.error();
  StepPattern p;
  p.pattern_ = std::string(pattern);
  try {
    p.regex_ = std::regex(rw->pattern, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return Error{Msg("--step-regex: invalid pattern {}: {}", QuoteForMessage(pattern),
                     RegexReason(e.code()))};
  }
  // Groups the rewrite counted must be the ones std::regex sees, or the indices are off.
  if (p.regex_.mark_count() != static_cast<unsigned>(rw->captures)) {
    return Error{Msg("--step-regex: could not number the groups of {}", QuoteForMessage(pattern))};
  }
  if (rw->named) {
    const auto& g = rw->group;
    p.step_group_ = g[0];
    p.total_group_ = g[1];
    p.seconds_group_ = g[2];
    p.ms_group_ = g[3];
    p.rate_group_ = g[4];
    p.loss_group_ = g[5];
    p.elapsed_group_ = g[6];
    p.time_group_ = g[7];
  } else {
    p.step_group_ = rw->captures >= 1 ? 1 : 0;
    p.seconds_group_ = rw->captures >= 2 ? 2 : 0;
  }
  if (p.step_group_ == 0) {
    return Error{
        Msg("--step-regex: no group for the step in {}: add (?<step>\\d+) "
            "or make the first group the step",
            QuoteForMessage(pattern))};
  }
  return p;
}

bool StepPattern::Match(std::string_view text, StepRecord* record) const {
  text = text.substr(0, kMaxSearchBytes);
  std::match_results<std::string_view::const_iterator> m;
  try {
    if (!std::regex_search(text.begin(), text.end(), m, regex_)) return false;
  } catch (const std::regex_error&) {
    return false;  // error_complexity / error_stack on a hostile line: treat as no match
  }
  auto group = [&](int i) -> std::string_view {
    if (i == 0 || !m[i].matched) return {};
    return std::string_view(&*m[i].first, static_cast<size_t>(m[i].length()));
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
