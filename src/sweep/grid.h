// The sweep's grid: the knobs a trial fills into the command template ({batch}, {seq},
// {grad_accum} and any --param name), their values, and the order they grow in.
//
// A knob's values come from "LO..HI" (a range: the coarse steps double from LO and end at
// HI; bisection may try any LO + k*STEP in between), "LO..HI:STEP" (the same on a step),
// or "V1,V2,..." (a list: only those values are ever tried, in ascending order).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace headroom {

struct Knob {
  std::string name;             // "batch", "seq", "grad_accum" or a --param name
  std::vector<int64_t> values;  // the coarse steps, ascending, unique
  bool is_range = false;        // any lo + k*step in [lo, hi] may be tried
  int64_t lo = 0, hi = 0, step = 1;

  // The values strictly between `below` and `above` that a trial may take (ascending).
  // For tests and short lists: a range's lattice may hold a billion values.
  std::vector<int64_t> Between(int64_t below, int64_t above) const;
  // The smallest value a trial may take above `v`, if any.
  std::optional<int64_t> Above(int64_t v) const;
  // The largest value in (below, above) for which `ok` holds, assuming `ok` holds for a
  // prefix of the values (monotone): a binary search on a range's lattice, a scan of a list.
  template <typename Pred>
  std::optional<int64_t> LargestWhere(int64_t below, int64_t above, Pred ok) const;
  // The value halfway between, rounded down onto the lattice (or the lower middle of the
  // listed values between), if any value lies between.
  std::optional<int64_t> Middle(int64_t below, int64_t above) const;
  // The flag or spelling a user wrote it as, for messages: "--batch", "--param lr".
  std::string flag;
};

template <typename Pred>
std::optional<int64_t> Knob::LargestWhere(int64_t below, int64_t above, Pred ok) const {
  if (!is_range) {
    std::optional<int64_t> best;
    for (int64_t v : values) {
      if (v > below && v < above && ok(v)) best = v;
    }
    return best;
  }
  // Lattice indexes k: value lo + k*step, in (below, above) and within [lo, hi].
  const int64_t first = below < lo ? 0 : (below - lo) / step + 1;
  int64_t last = (hi - lo) / step;
  if (above <= hi) last = std::min(last, (above - lo - 1) / step);
  if (above <= lo || first > last) return std::nullopt;
  if (!ok(lo + first * step)) return std::nullopt;
  int64_t good = first, bad = last + 1;  // ok(good) holds; bad is past the end or fails
  while (bad - good > 1) {
    const int64_t mid = good + (bad - good) / 2;
    if (ok(lo + mid * step))
      good = mid;
    else
      bad = mid;
  }
  return lo + good * step;
}

// Parses a knob's values. Error: "--batch: '0..4': ..." naming the flag.
Result<Knob> ParseKnob(std::string_view name, std::string_view flag, std::string_view text);
// "--param name=V1,V2" or "name=LO..HI".
Result<Knob> ParseParamKnob(std::string_view text);

// One trial's settings: a value per knob, in the grid's knob order.
struct Config {
  std::vector<std::pair<std::string, int64_t>> values;
  int64_t Get(std::string_view name) const;  // -1 when the knob is not in the grid
  void Set(std::string_view name, int64_t value);
  std::string ToJson() const;  // {"batch":4,"seq":1024}: canonical, key order
  std::string ToText() const;  // batch=4 seq=1024
  bool operator==(const Config& other) const { return values == other.values; }
};

struct Grid {
  std::vector<Knob> knobs;  // in growth order (--order)
  // A knob by name, or nullptr.
  const Knob* Find(std::string_view name) const;
  Config Smallest() const;  // every knob at its first value
};

// Applies --order ("batch,seq"): the named knobs first, in that order, then the rest in
// the order given. Error on a name that is not a knob.
Result<Grid> OrderGrid(std::vector<Knob> knobs, std::string_view order);

// The placeholders in a command template: every "{name}" (name: [a-z_][a-z0-9_]*).
std::vector<std::string> Placeholders(const std::vector<std::string>& command);
// Checks that every knob appears in the template and every placeholder is a knob.
Result<bool> CheckTemplate(const Grid& grid, const std::vector<std::string>& command);
// What the flags say about the grid: each built-in knob's values ("" when its flag is not
// given), the --param NAME=VALUES words, and --order.
struct SweepGridFlags {
  std::string batch, seq, grad_accum;
  std::vector<std::string> params;
  std::string order;
};
// The grid the flags give, checked against the template: the knobs parsed (batch, seq,
// grad_accum, then the --param ones), ordered (--order), every one in the template and
// every placeholder a knob. Error on a bad value, a --param given twice, or no knob at all.
Result<Grid> BuildSweepGrid(const SweepGridFlags& flags, const std::vector<std::string>& command);

// The command with each {name} replaced by the config's value.
std::vector<std::string> FillTemplate(const std::vector<std::string>& command,
                                      const Config& config);

}  // namespace headroom
