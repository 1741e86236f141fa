// Implementation notes: the two "key: value | key: value" formats. Megatron-LM's
// training_log prints
//   " [2025-08-01 07:19:37] iteration        1/    5000 | consumed samples: 128 |
//    elapsed time per iteration (ms): 19138.8 | ... | lm loss: 1.043863E+01 | ..."
// (the timestamp is datetime.now(): local time with no zone, kept as kLineLocal), and
// torchtune's StdoutLogger / DiskLogger print "Step {step} | name:value name:value ...".
// Fields are found by key, never by position: Megatron's field list changes with its flags.
#include "explain/log_formats.h"
#include "explain/log_time.h"

namespace headroom::step_log {
namespace {

// Reads spaces then a count at s[*p]; advances *p past it.
std::optional<int64_t> SpacedCount(std::string_view s, size_t* p) {
  while (*p < s.size() && IsSpace(s[*p])) ++*p;
  const size_t begin = *p;
  while (*p < s.size() && IsDigit(s[*p])) ++*p;
  return ToCount(s.substr(begin, *p - begin));
}

}  // namespace

bool ParseMegatron(std::string_view s, StepRecord* r) {
  StepRecord& d = *r;
  if (!s.empty() && s[0] == '[') {
    const std::optional<LogTimestamp> ts = ParseLogTimestamp(s.substr(1));
    if (!ts || ts->length + 1 >= s.size() || s[ts->length + 1] != ']') return false;
    d.time = ts->time;
    d.time_source = ts->has_zone ? StepTimeSource::kLine : StepTimeSource::kLineLocal;
    s = TrimSpace(s.substr(ts->length + 2));
  }
  if (!s.starts_with("iteration")) return false;
  size_t p = 9;
  d.step = SpacedCount(s, &p);
  if (!d.step || p >= s.size() || s[p] != '/') return false;
  ++p;
  const std::optional<int64_t> total = SpacedCount(s, &p);
  if (!total) return false;
  if (*total > 0) d.total_steps = total;
  while (p < s.size() && IsSpace(s[p])) ++p;
  if (p >= s.size() || s[p] != '|') return false;
  std::string_view fields = s.substr(p + 1);
  while (!fields.empty()) {
    const size_t bar = fields.find('|');
    const std::string_view field = fields.substr(0, bar);
    const size_t colon = field.rfind(':');
    if (colon != std::string_view::npos) {
      const std::string_view key = TrimSpace(field.substr(0, colon));
      const std::string_view value = TrimSpace(field.substr(colon + 1));
      if (key == "elapsed time per iteration (ms)") {
        if (auto ms = Positive(ToDouble(value))) d.seconds_per_step = *ms / 1000;
      } else if (key == "lm loss" || key == "loss") {
        d.loss = ToDouble(value);
      }
    }
    if (bar == std::string_view::npos) break;
    fields.remove_prefix(bar + 1);
  }
  d.rate_is_measured = d.seconds_per_step.has_value();
  d.format = StepLogFormat::kMegatron;
  return true;
}

bool ParseTorchtuneStep(std::string_view s, StepRecord* r) {
  if (!s.starts_with("Step ")) return false;
  StepRecord& d = *r;
  size_t p = 5;
  d.step = SpacedCount(s, &p);
  if (!d.step) return false;
  while (p < s.size() && IsSpace(s[p])) ++p;
  if (p >= s.size() || s[p] != '|') return false;
  std::string_view items = s.substr(p + 1);
  while (!items.empty()) {
    while (!items.empty() && IsSpace(items.front())) items.remove_prefix(1);
    const size_t space = items.find(' ');
    const std::string_view item = items.substr(0, space);
    const size_t colon = item.find(':');
    if (colon != std::string_view::npos && item.substr(0, colon) == "loss") {
      d.loss = ToDouble(item.substr(colon + 1));
    }
    if (space == std::string_view::npos) break;
    items.remove_prefix(space + 1);
  }
  d.format = StepLogFormat::kTorchtuneStep;
  return true;
}

}  // namespace headroom::step_log
