// Implementation notes: HF Trainer's dict lines and JSON lines share one tolerant scanner of a
// flat {key: value, ...}. Why not base/json_reader.h for the JSON lines: it is strict RFC
// 8259, and Python's json.dumps (what most trainers' JSONL loggers call) writes NaN and
// Infinity for a diverged loss, which is exactly the line explain must not lose. Python's
// repr of a dict is JSON-like with single quotes (double quotes for a key holding a single
// quote), bare nan/inf, and sometimes a wrapper from numpy or torch ("np.float64(1.2)",
// "tensor(1.2, device='cuda:0')"). Nested values are skipped. Keys are compared as written:
// an escape inside a key ("\u0073tep") does not match, which no trainer writes.
#include <cmath>

#include "explain/log_formats.h"
#include "explain/log_time.h"

namespace headroom::step_log {
namespace {

struct Member {
  std::string_view key;
  std::string_view value;  // the text inside the quotes, or the bare token trimmed
  bool quoted = false;
};

// The end of the quoted string opening at s[p] (the index after its closing quote), or npos.
size_t SkipQuoted(std::string_view s, size_t p) {
  const char quote = s[p];
  for (++p; p < s.size(); ++p) {
    if (s[p] == '\\') {
      ++p;
    } else if (s[p] == quote) {
      return p + 1;
    }
  }
  return std::string_view::npos;
}

// The end of a bare value starting at s[p]: the first ',' or '}' outside brackets and quotes.
// npos when the brackets do not balance or the text ends first.
size_t SkipBare(std::string_view s, size_t p) {
  int depth = 0;
  for (; p < s.size(); ++p) {
    const char c = s[p];
    if (c == '\'' || c == '"') {
      p = SkipQuoted(s, p);
      if (p == std::string_view::npos) return p;
      --p;
    } else if (c == '(' || c == '[' || c == '{') {
      if (++depth > 32) return std::string_view::npos;  // hostile nesting: not a log dict
    } else if (c == ')' || c == ']' || c == '}') {
      if (depth == 0) return c == '}' ? p : std::string_view::npos;
      --depth;
    } else if (c == ',' && depth == 0) {
      return p;
    }
  }
  return std::string_view::npos;
}

// Calls on_member for each member of the flat dict that makes up all of `s` (trailing spaces
// allowed). False when `s` is not one; members seen before the fault have been reported by
// then (the record they filled is reset by Segment before any other try).
template <typename OnMember>
bool ScanFlatDict(std::string_view s, OnMember&& on_member) {
  if (s.empty() || s[0] != '{') return false;
  size_t p = 1;
  auto skip_space = [&] {
    while (p < s.size() && IsSpace(s[p])) ++p;
  };
  skip_space();
  if (p < s.size() && s[p] == '}') return TrimSpace(s.substr(p + 1)).empty();
  while (true) {
    skip_space();
    if (p >= s.size() || (s[p] != '\'' && s[p] != '"')) return false;
    const size_t key_end = SkipQuoted(s, p);
    if (key_end == std::string_view::npos) return false;
    Member m;
    m.key = s.substr(p + 1, key_end - p - 2);
    p = key_end;
    skip_space();
    if (p >= s.size() || s[p] != ':') return false;
    ++p;
    skip_space();
    if (p >= s.size()) return false;
    if (s[p] == '\'' || s[p] == '"') {
      const size_t end = SkipQuoted(s, p);
      if (end == std::string_view::npos) return false;
      m.value = s.substr(p + 1, end - p - 2);
      m.quoted = true;
      p = end;
    } else {
      const size_t end = SkipBare(s, p);
      if (end == std::string_view::npos) return false;
      m.value = TrimSpace(s.substr(p, end - p));
      p = end;
    }
    on_member(m);
    skip_space();
    if (p >= s.size()) return false;
    if (s[p] == '}') return TrimSpace(s.substr(p + 1)).empty();
    if (s[p] != ',') return false;
    ++p;
  }
}

// A number, also inside a wrapper: "np.float64(1.5)" and "tensor(1.5, device='cuda:0')" -> 1.5.
std::optional<double> NumberOf(const Member& m) {
  std::string_view v = m.value;
  if (!m.quoted && !v.empty() && v.back() == ')') {
    const size_t open = v.find('(');
    if (open == std::string_view::npos || open == 0) return std::nullopt;
    v = v.substr(open + 1, v.size() - open - 2);
    v = TrimSpace(v.substr(0, v.find(',')));
  }
  // Python's json writes Infinity and NaN; from_chars takes both ("infinity" in any case).
  return ToDouble(v);
}

// A step: an integer, or a float with no fraction ("10.0", as some loggers cast it).
std::optional<int64_t> StepOf(const Member& m) {
  if (auto exact = ToCount(m.value)) return exact;
  const std::optional<double> v = NumberOf(m);
  if (!v || !std::isfinite(*v) || *v < 0 || *v >= 9.2e18 || *v != std::floor(*v)) {
    return std::nullopt;
  }
  return static_cast<int64_t>(*v);
}

std::optional<double> NonNegative(std::optional<double> v) {
  if (v && std::isfinite(*v) && *v >= 0) return v;
  return std::nullopt;
}

bool IsAny(std::string_view key, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (key == n) return true;
  }
  return false;
}

// "time"/"timestamp" in a JSON line: an ISO 8601 string, Unix seconds (from 1e8, 1973) or
// Unix milliseconds (from 1e11, what JavaScript's Date.now() gives), up to the year 2200. A
// smaller number is taken for seconds since the start, as some loggers mean by "time".
void ReadJsonTime(const Member& m, StepRecord* r) {
  if (m.quoted) {
    const std::optional<LogTimestamp> ts = ParseLogTimestamp(m.value);
    if (!ts || ts->length != m.value.size()) return;
    r->time = ts->time;
    r->time_source = ts->has_zone ? StepTimeSource::kLine : StepTimeSource::kLineLocal;
    return;
  }
  const std::optional<double> v = NonNegative(NumberOf(m));
  if (!v) return;
  if (*v < 1e8) {
    if (!r->elapsed_seconds) r->elapsed_seconds = v;
    return;
  }
  // A time past the range is not taken, and leaves a time an earlier key gave as it was: it
  // must not clear the time and keep its source (a "_timestamp" in year 3610).
  if (const std::optional<WallTime> t = UnixTime(*v >= 1e11 ? *v / 1000 : *v)) {
    r->time = t;
    r->time_source = StepTimeSource::kLine;
  }
}

}  // namespace

bool ParseHfDict(std::string_view s, StepRecord* r) {
  StepRecord& d = *r;
  std::optional<double> train_loss;
  bool ok = ScanFlatDict(s, [&](const Member& m) {
    if (m.key == "loss") {
      d.loss = NumberOf(m);
    } else if (m.key == "train_loss") {
      train_loss = NumberOf(m);
    } else if (m.key == "epoch") {
      d.epoch = NonNegative(NumberOf(m));
    } else if (m.key == "step" || m.key == "global_step") {
      d.step = StepOf(m);
    } else if (m.key == "train_runtime") {
      d.elapsed_seconds = NonNegative(NumberOf(m));
    } else if (m.key == "train_steps_per_second") {
      d.steps_per_second = Positive(NumberOf(m));
    }
  });
  // An eval dict ("eval_loss", ...) and other dicts carry none of these: not a step record.
  if (!ok || !(d.loss || d.step || d.elapsed_seconds || d.steps_per_second)) return false;
  if (!d.loss) d.loss = train_loss;
  d.rate_is_measured = d.steps_per_second.has_value();  // train_steps_per_second: steps / runtime
  d.format = StepLogFormat::kHfDict;
  return true;
}

bool ParseJsonLine(std::string_view s, StepRecord* r) {
  StepRecord& d = *r;
  bool ok = ScanFlatDict(s, [&](const Member& m) {
    const std::string_view k = m.key;
    if (IsAny(k, {"step", "global_step", "iteration", "iter", "_step"})) {
      d.step = StepOf(m);
    } else if (IsAny(k, {"total_steps", "max_steps"})) {
      const std::optional<int64_t> total = StepOf(m);
      if (total && *total > 0) d.total_steps = total;
    } else if (IsAny(k, {"time", "timestamp", "_timestamp"})) {
      ReadJsonTime(m, &d);
    } else if (IsAny(k, {"elapsed", "elapsed_s", "elapsed_seconds", "runtime", "_runtime"})) {
      d.elapsed_seconds = NonNegative(NumberOf(m));
    } else if (IsAny(k, {"steps_per_second", "steps_per_sec"})) {
      d.steps_per_second = Positive(NumberOf(m));
    } else if (IsAny(k, {"step_time", "step_time_s", "seconds_per_step", "iter_time"})) {
      d.seconds_per_step = Positive(NumberOf(m));
    } else if (IsAny(k, {"loss", "train_loss", "train/loss"})) {
      if (!d.loss || k == "loss") d.loss = NumberOf(m);
    } else if (k == "epoch") {
      d.epoch = NonNegative(NumberOf(m));
    }
  });
  if (!ok || !d.step) return false;
  d.rate_is_measured = d.steps_per_second || d.seconds_per_step;
  d.format = StepLogFormat::kJsonLines;
  return true;
}

}  // namespace headroom::step_log
