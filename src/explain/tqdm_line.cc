// Implementation notes: a tqdm bar is read from its right end, the only part whose layout
// tqdm fixes (format_meter's r_bar): "{n}/{total} [{elapsed}<{remaining}, {rate}{postfix}]",
// or "{n}{unit} [{elapsed}, {rate}{postfix}]" when the total is unknown. The left part (the
// description, the percentage and the bar drawn in Unicode blocks or '#') is free text and is
// only hashed for the stream. A segment whose last non-space byte is not ']' is rejected
// before anything else, which is what keeps noise lines cheap.
//
// Only the unit "it" counts steps: a download bar ("4.97G/4.97G [00:20<00:00, 245MB/s]") or
// a datasets map bar ("1000/1000 [00:00<00:00, 12345.67 examples/s]") is not a step counter.
#include <cmath>
#include <cstring>

#include "explain/log_formats.h"

namespace headroom::step_log {
namespace {

// Reads the rate "{value}{SI?}it/s", "{value}{SI?}s/it" or "?it/s" (tqdm pads the value
// with spaces to 5 columns: ",  2.00it/s"). False when `token` is none of these.
bool ReadRate(std::string_view token, StepRecord* r) {
  token = TrimSpace(token);
  if (token == "?it/s") return true;  // before the first update: no rate yet
  if (token.ends_with("it/s")) {
    r->steps_per_second = Positive(ToScaled(token.substr(0, token.size() - 4)));
    return r->steps_per_second.has_value();
  }
  if (token.ends_with("s/it")) {
    r->seconds_per_step = Positive(ToScaled(token.substr(0, token.size() - 4)));
    return r->seconds_per_step.has_value();
  }
  return false;
}

// The loss from a postfix "loss=1.99, v_num=0" (Lightning writes train_loss, and
// train_loss_step with on_step logging). Values are tqdm's format of whatever was given.
void ReadPostfixLoss(std::string_view postfix, StepRecord* r) {
  while (!postfix.empty()) {
    const size_t comma = postfix.find(',');
    const std::string_view item = TrimSpace(postfix.substr(0, comma));
    const size_t eq = item.find('=');
    if (eq != std::string_view::npos) {
      const std::string_view key = item.substr(0, eq);
      if (key == "loss" || key == "train_loss" || key == "train_loss_step") {
        if (auto v = ToDouble(item.substr(eq + 1))) r->loss = v;
      }
    }
    if (comma == std::string_view::npos) break;
    postfix.remove_prefix(comma + 1);
  }
}

// A count as tqdm prints it: an integer, or with unit_scale a 3-significant-digit number
// with an SI prefix ("1.25k"), which is as close as the log lets us get to the true count.
std::optional<int64_t> ReadCount(std::string_view s) {
  if (auto exact = ToCount(s)) return exact;
  const std::optional<double> v = ToScaled(s);
  if (!v || !std::isfinite(*v) || *v < 0 || *v >= 9.2e18) return std::nullopt;
  if (s.back() >= '0' && s.back() <= '9' && *v != std::floor(*v)) return std::nullopt;
  return static_cast<int64_t>(std::llround(*v));
}

// The bar whose '[' is at `open` and final ']' at s.size() - 1.
bool TryBar(std::string_view s, size_t open, StepRecord* r, uint64_t* label_hash) {
  // Inside the brackets: elapsed, then "<remaining" when the total is known, then the rate.
  std::string_view inside = s.substr(open + 1, s.size() - open - 2);
  const size_t comma = inside.find(',');
  if (comma == std::string_view::npos) return false;
  std::string_view times = inside.substr(0, comma);
  const size_t lt = times.find('<');
  const bool has_remaining = lt != std::string_view::npos;
  const std::optional<double> elapsed = ToClockSeconds(times.substr(0, lt));
  if (!elapsed) return false;
  if (has_remaining) {
    const std::string_view remaining = times.substr(lt + 1);
    if (remaining != "?" && !ToClockSeconds(remaining)) return false;
  }
  std::string_view rest = inside.substr(comma + 1);
  const size_t postfix_at = rest.find(',');
  StepRecord& bar = *r;
  if (!ReadRate(rest.substr(0, postfix_at), &bar)) return false;
  if (postfix_at != std::string_view::npos) ReadPostfixLoss(rest.substr(postfix_at + 1), &bar);
  bar.elapsed_seconds = elapsed;

  // Left of " [": "{n}/{total}" or "{n}it", after a space, a '|' or nothing.
  if (open == 0 || s[open - 1] != ' ') return false;
  size_t begin = open - 1;
  while (begin > 0 && s[begin - 1] != ' ' && s[begin - 1] != '|') --begin;
  std::string_view counter = s.substr(begin, open - 1 - begin);
  const size_t slash = counter.find('/');
  if (slash != std::string_view::npos) {
    if (!has_remaining) return false;  // tqdm prints "<remaining" whenever it has a total
    bar.total_steps = ReadCount(counter.substr(slash + 1));
    if (!bar.total_steps || *bar.total_steps == 0) return false;
    counter = counter.substr(0, slash);
  } else {
    if (has_remaining || !counter.ends_with("it")) return false;
    counter.remove_suffix(2);
  }
  bar.step = ReadCount(counter);
  if (!bar.step) return false;

  // torchtune's description carries the global step, which the per-epoch bar does not.
  const std::string_view label = s.substr(0, begin);
  const std::string_view desc = label.substr(std::min(label.find_first_not_of(' '), label.size()));
  bar.format = StepLogFormat::kTqdm;
  if (ReadTorchtuneDescription(desc, &bar) > 0) bar.format = StepLogFormat::kTorchtuneProgress;
  *label_hash = HashLetters(kHashSeed, label);
  return true;
}

}  // namespace

bool ParseTqdm(std::string_view s, StepRecord* r, uint64_t* label_hash) {
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);  // status_printer pads with spaces
  if (s.size() < 8 || s.back() != ']') return false;
  // The last '[' opens the r_bar unless the postfix itself holds brackets ("x=[1, 2]"); a
  // few earlier ones are tried, no more, so a line of brackets costs little.
  size_t end = s.size() - 1;
  for (int tries = 0; tries < 4; ++tries) {
    const void* found = memrchr(s.data(), '[', end);
    if (found == nullptr) return false;
    const size_t open = static_cast<const char*>(found) - s.data();
    if (tries > 0) *r = StepRecord{};  // what the failed try before may have filled
    if (TryBar(s, open, r, label_hash)) return true;
    end = open;
  }
  return false;
}

size_t ReadTorchtuneDescription(std::string_view s, StepRecord* r) {
  // "{epoch}|{global_step}|Loss: {loss}" (torchtune recipes' pbar.set_description).
  size_t p = 0;
  auto number = [&](char stop) -> std::optional<int64_t> {
    const size_t begin = p;
    while (p < s.size() && IsDigit(s[p])) ++p;
    if (p == begin || p >= s.size() || s[p] != stop) return std::nullopt;
    return ToCount(s.substr(begin, p++ - begin));
  };
  const std::optional<int64_t> epoch = number('|');
  if (!epoch) return 0;
  const std::optional<int64_t> step = number('|');
  if (!step || !s.substr(p).starts_with("Loss: ")) return 0;
  p += 6;
  const size_t begin = p;
  while (p < s.size() && s[p] != ':' && !IsSpace(s[p])) ++p;
  const std::optional<double> loss = ToDouble(s.substr(begin, p - begin));
  if (!loss) return 0;
  r->epoch = static_cast<double>(*epoch);
  r->step = step;
  r->loss = loss;
  return p;
}

bool ParseTorchtuneProgress(std::string_view s, StepRecord* r) {
  const size_t used = ReadTorchtuneDescription(s, r);
  if (used == 0 || !TrimSpace(s.substr(used)).empty()) return false;
  r->format = StepLogFormat::kTorchtuneProgress;
  return true;
}

}  // namespace headroom::step_log
