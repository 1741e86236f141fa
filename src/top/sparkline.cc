// Implementation notes. Heights: value v in [lo, hi] maps to level floor((v - lo) / (hi -
// lo) * 8) clamped to 0..7, so each of the eight blocks U+2581..U+2588 covers an eighth of
// the range; the ASCII ramp "_.-=+*#@" keeps the same eight steps. The bar rounds each part
// to whole columns (used first, then cache), so a part smaller than half a column does not
// show; the marks go on top, so a guard level inside the used part still shows.
#include "top/sparkline.h"

#include <algorithm>
#include <cmath>

namespace headroom {
namespace {

constexpr const char* kBlocks[8] = {"\xE2\x96\x81", "\xE2\x96\x82", "\xE2\x96\x83", "\xE2\x96\x84",
                                    "\xE2\x96\x85", "\xE2\x96\x86", "\xE2\x96\x87", "\xE2\x96\x88"};
constexpr char kAsciiRamp[8] = {'_', '.', '-', '=', '+', '*', '#', '@'};

double Clamp01(double f) { return std::isfinite(f) ? std::clamp(f, 0.0, 1.0) : 0.0; }

}  // namespace

GraphRange AutoRange(const std::vector<std::optional<double>>& values, double min_span,
                     double floor) {
  double lo = 0, hi = 0;
  bool any = false;
  for (const auto& v : values) {
    if (!v || !std::isfinite(*v)) continue;
    lo = any ? std::min(lo, *v) : *v;
    hi = any ? std::max(hi, *v) : *v;
    any = true;
  }
  if (!any) return {floor, floor + min_span};
  if (hi - lo < min_span) {
    const double mid = (lo + hi) / 2;
    lo = mid - min_span / 2;
    hi = mid + min_span / 2;
  }
  if (lo < floor) {
    hi += floor - lo;
    lo = floor;
  }
  return {lo, hi};
}

std::string Sparkline(const std::vector<std::optional<double>>& values, size_t width,
                      GraphRange range, bool utf8) {
  std::string out;
  const size_t shown = std::min(width, values.size());
  out.append(width - shown, ' ');
  const double span = range.hi > range.lo ? range.hi - range.lo : 1.0;
  for (size_t i = values.size() - shown; i < values.size(); ++i) {
    const auto& v = values[i];
    if (!v || !std::isfinite(*v)) {
      out += ' ';
      continue;
    }
    const int level = std::clamp(static_cast<int>(std::floor((*v - range.lo) / span * 8)), 0, 7);
    if (utf8) {
      out += kBlocks[level];
    } else {
      out += kAsciiRamp[level];
    }
  }
  return out;
}

std::vector<Span> MemoryBar(size_t width, double used, double cache,
                            const std::vector<BarMark>& marks, bool utf8) {
  used = Clamp01(used);
  cache = Clamp01(std::min(cache, 1.0 - used));
  const auto cols = [&](double f) {
    return static_cast<size_t>(std::lround(f * static_cast<double>(width)));
  };
  const size_t used_cols = std::min(cols(used), width);
  const size_t cache_cols = std::min(cols(used + cache), width) - used_cols;
  std::vector<Role> roles(width, Role::kDim);
  std::vector<std::string> glyphs(width);
  for (size_t i = 0; i < width; ++i) {
    if (i < used_cols) {
      roles[i] = Role::kBarUsed;
      glyphs[i] = utf8 ? "\xE2\x96\x88" : "#";  // full block
    } else if (i < used_cols + cache_cols) {
      roles[i] = Role::kBarCache;
      glyphs[i] = utf8 ? "\xE2\x96\x92" : "+";  // medium shade
    } else {
      roles[i] = Role::kDim;
      glyphs[i] = utf8 ? "\xC2\xB7" : ".";  // middle dot
    }
  }
  for (const BarMark& m : marks) {
    if (width == 0) break;
    const size_t at =
        std::min(static_cast<size_t>(Clamp01(m.fraction) * static_cast<double>(width)), width - 1);
    roles[at] = Role::kMark;
    glyphs[at] = std::string(1, m.glyph);
  }
  std::vector<Span> spans;
  for (size_t i = 0; i < width; ++i) {
    if (!spans.empty() && spans.back().role == roles[i]) {
      spans.back().text += glyphs[i];
    } else {
      spans.push_back(Span{glyphs[i], roles[i]});
    }
  }
  return spans;
}

}  // namespace headroom
