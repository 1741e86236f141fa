// Implementation notes.
//  - Values are positive integers: batch sizes, sequence lengths, accumulation steps and
//    the integer knobs a --param names. A cap of 1e9 keeps products (batch x seq in the
//    prior of search.cc) far from overflow.
//  - The coarse steps of a range double, as the owners' manual sweeps do (batch 1, 2, 4,
//    ...); HI is always the last coarse step so the top of the range is reachable.
#include "sweep/grid.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <tuple>

#include "base/message.h"

namespace headroom {
namespace {

constexpr int64_t kMaxValue = 1'000'000'000;
constexpr size_t kMaxListValues = 1000;

Result<int64_t> ParseValue(std::string_view flag, std::string_view whole, std::string_view text) {
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < 1 ||
      v > kMaxValue) {
    return Error{
        Msg("{}: '{}': '{}' is not a whole number from 1 to {}", flag, whole, text, kMaxValue)};
  }
  return v;
}

bool IsNameChar(char c, bool first) {
  return (c >= 'a' && c <= 'z') || c == '_' || (!first && c >= '0' && c <= '9');
}

}  // namespace

std::vector<int64_t> Knob::Between(int64_t below, int64_t above) const {
  std::vector<int64_t> out;
  if (is_range) {
    // The first lo + k*step above `below`.
    int64_t v = below < lo ? lo : lo + ((below - lo) / step + 1) * step;
    for (; v < above && v <= hi; v += step) out.push_back(v);
  } else {
    for (int64_t v : values) {
      if (v > below && v < above) out.push_back(v);
    }
  }
  return out;
}

std::optional<int64_t> Knob::Above(int64_t v) const {
  if (is_range) {
    const int64_t next = v < lo ? lo : lo + ((v - lo) / step + 1) * step;
    if (next > hi) return std::nullopt;
    return next;
  }
  for (int64_t x : values) {
    if (x > v) return x;
  }
  return std::nullopt;
}

std::optional<int64_t> Knob::Middle(int64_t below, int64_t above) const {
  if (!is_range) {
    const auto between = Between(below, above);
    if (between.empty()) return std::nullopt;
    return between[(between.size() - 1) / 2];
  }
  const auto first = Above(below);
  if (!first || *first >= above) return std::nullopt;
  const int64_t last_k = std::min((hi - lo) / step, (above - lo - 1) / step);
  const int64_t first_k = (*first - lo) / step;
  return lo + (first_k + (last_k - first_k) / 2) * step;
}

Result<Knob> ParseKnob(std::string_view name, std::string_view flag, std::string_view text) {
  Knob k;
  k.name = std::string(name);
  k.flag = std::string(flag);
  const auto dots = text.find("..");
  if (dots != std::string_view::npos) {
    std::string_view hi_text = text.substr(dots + 2);
    std::string_view step_text = "1";
    if (const auto colon = hi_text.find(':'); colon != std::string_view::npos) {
      step_text = hi_text.substr(colon + 1);
      hi_text = hi_text.substr(0, colon);
    }
    auto lo = ParseValue(flag, text, text.substr(0, dots));
    if (!lo) return lo.error();
    auto hi = ParseValue(flag, text, hi_text);
    if (!hi) return hi.error();
    auto step = ParseValue(flag, text, step_text);
    if (!step) return step.error();
    if (*hi < *lo) return Error{Msg("{}: '{}': the range ends below its start", flag, text)};
    if ((*hi - *lo) % *step != 0) {
      return Error{Msg("{}: '{}': {} is not {} plus a multiple of the step {}", flag, text, *hi,
                       *lo, *step)};
    }
    k.is_range = true;
    k.lo = *lo;
    k.hi = *hi;
    k.step = *step;
    // Doubling from lo, kept on the step's lattice (lo + k*step), then hi itself.
    for (int64_t v = *lo; v < *hi; v *= 2) {
      const int64_t on_step = *lo + (v - *lo) / *step * *step;
      if (k.values.empty() || on_step > k.values.back()) k.values.push_back(on_step);
      if (v > kMaxValue / 2) break;
    }
    if (k.values.empty() || k.values.back() != *hi) k.values.push_back(*hi);
    return k;
  }
  size_t start = 0;
  while (start <= text.size()) {
    const auto comma = std::min(text.find(',', start), text.size());
    auto v = ParseValue(flag, text, text.substr(start, comma - start));
    if (!v) return v.error();
    k.values.push_back(*v);
    if (k.values.size() > kMaxListValues) {
      return Error{Msg("{}: more than {} values", flag, kMaxListValues)};
    }
    start = comma + 1;
  }
  std::sort(k.values.begin(), k.values.end());
  k.values.erase(std::unique(k.values.begin(), k.values.end()), k.values.end());
  k.lo = k.values.front();
  k.hi = k.values.back();
  return k;
}

Result<Knob> ParseParamKnob(std::string_view text) {
  const auto eq = text.find('=');
  const std::string_view name = text.substr(0, eq == std::string_view::npos ? 0 : eq);
  bool ok = !name.empty() && name.size() <= 64;
  for (size_t i = 0; ok && i < name.size(); ++i) ok = IsNameChar(name[i], i == 0);
  if (!ok) {
    return Error{
        Msg("--param: '{}' is not NAME=VALUES (NAME: lower-case letters, digits and _)", text)};
  }
  if (name == "batch" || name == "seq" || name == "grad_accum") {
    return Error{
        Msg("--param: use --{} for {{{}}}", name == "grad_accum" ? "grad-accum" : name, name)};
  }
  return ParseKnob(name, fmt::format("--param {}", name), text.substr(eq + 1));
}

int64_t Config::Get(std::string_view name) const {
  for (const auto& [k, v] : values) {
    if (k == name) return v;
  }
  return -1;
}

void Config::Set(std::string_view name, int64_t value) {
  for (auto& [k, v] : values) {
    if (k == name) {
      v = value;
      return;
    }
  }
  values.emplace_back(std::string(name), value);
}

std::string Config::ToJson() const {
  std::string out = "{";
  for (const auto& [k, v] : values) {
    if (out.size() > 1) out += ',';
    out += fmt::format("\"{}\":{}", k, v);  // names are [a-z0-9_]: nothing to escape
  }
  return out + "}";
}

std::string Config::ToText() const {
  std::string out;
  for (const auto& [k, v] : values) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{}={}", k, v);
  }
  return out;
}

const Knob* Grid::Find(std::string_view name) const {
  for (const auto& k : knobs) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

Config Grid::Smallest() const {
  Config c;
  for (const auto& k : knobs) c.values.emplace_back(k.name, k.values.front());
  return c;
}

Result<Grid> OrderGrid(std::vector<Knob> knobs, std::string_view order) {
  Grid g;
  size_t start = 0;
  while (!order.empty() && start <= order.size()) {
    const auto comma = std::min(order.find(',', start), order.size());
    std::string name(order.substr(start, comma - start));
    if (name == "grad-accum") name = "grad_accum";
    const auto it =
        std::find_if(knobs.begin(), knobs.end(), [&](const Knob& k) { return k.name == name; });
    if (it == knobs.end()) {
      if (g.Find(name)) return Error{Msg("--order: '{}' is named twice", name)};
      return Error{
          Msg("--order: '{}' is not a knob of this sweep (give its values with --{} or --param)",
              name, name)};
    }
    g.knobs.push_back(std::move(*it));
    knobs.erase(it);
    start = comma + 1;
  }
  for (auto& k : knobs) g.knobs.push_back(std::move(k));
  return g;
}

std::vector<std::string> Placeholders(const std::vector<std::string>& command) {
  std::vector<std::string> out;
  for (const auto& arg : command) {
    for (size_t open = arg.find('{'); open != std::string::npos; open = arg.find('{', open + 1)) {
      const auto close = arg.find('}', open);
      if (close == std::string::npos) break;
      const std::string name = arg.substr(open + 1, close - open - 1);
      bool ok = !name.empty();
      for (size_t i = 0; ok && i < name.size(); ++i) ok = IsNameChar(name[i], i == 0);
      if (ok && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    }
  }
  return out;
}

Result<bool> CheckTemplate(const Grid& grid, const std::vector<std::string>& command) {
  const auto names = Placeholders(command);
  for (const auto& k : grid.knobs) {
    if (std::find(names.begin(), names.end(), k.name) == names.end()) {
      return Error{Msg("{} is given but the command has no {{{}}} to fill", k.flag, k.name)};
    }
  }
  for (const auto& n : names) {
    if (!grid.Find(n)) {
      const std::string flag = n == "batch" || n == "seq" ? "--" + n
                               : n == "grad_accum"        ? std::string("--grad-accum")
                                                          : fmt::format("--param {}=V1,V2", n);
      return Error{Msg("the command has {{{}}} but no values for it: give {}", n, flag)};
    }
  }
  return true;
}

std::vector<std::string> FillTemplate(const std::vector<std::string>& command,
                                      const Config& config) {
  std::vector<std::string> out;
  out.reserve(command.size());
  for (std::string arg : command) {
    for (const auto& [name, value] : config.values) {
      const std::string key = "{" + name + "}";
      const std::string text = std::to_string(value);
      for (size_t at = arg.find(key); at != std::string::npos;
           at = arg.find(key, at + text.size())) {
        arg.replace(at, key.size(), text);
      }
    }
    out.push_back(std::move(arg));
  }
  return out;
}

Result<Grid> BuildSweepGrid(const SweepGridFlags& flags, const std::vector<std::string>& command) {
  std::vector<Knob> knobs;
  for (const auto& [text, name, flag] :
       {std::tuple{&flags.batch, "batch", "--batch"}, std::tuple{&flags.seq, "seq", "--seq"},
        std::tuple{&flags.grad_accum, "grad_accum", "--grad-accum"}}) {
    if (text->empty()) continue;
    auto k = ParseKnob(name, flag, *text);
    if (!k) return k.error();
    knobs.push_back(std::move(*k));
  }
  for (const auto& p : flags.params) {
    auto k = ParseParamKnob(p);
    if (!k) return k.error();
    if (std::any_of(knobs.begin(), knobs.end(), [&](const Knob& o) { return o.name == k->name; }))
      return Error{Msg("--param {}: given twice", k->name)};
    knobs.push_back(std::move(*k));
  }
  if (knobs.empty())
    return Error{Msg("nothing to sweep: give --batch, --seq, --grad-accum or --param")};
  auto grid = OrderGrid(std::move(knobs), flags.order);
  if (!grid) return grid.error();
  if (auto ok = CheckTemplate(*grid, command); !ok) return ok.error();
  return grid;
}

}  // namespace headroom
