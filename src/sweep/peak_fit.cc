// Implementation notes.
//  - Least squares by the 3x3 normal equations in long double with x scaled to [0, 1]:
//    knob values go up to 1e9 and x^4 terms would lose precision otherwise.
//  - The residual term makes the model's own misfit part of every prediction, so noisy
//    points widen the margin instead of hiding in it.
#include "sweep/peak_fit.h"

#include <algorithm>
#include <cmath>

namespace headroom {
namespace {

// Solves the 3x3 system m * v = r by Gaussian elimination with partial pivoting.
bool Solve3(long double m[3][3], long double r[3], long double v[3]) {
  for (int col = 0; col < 3; ++col) {
    int pivot = col;
    for (int row = col + 1; row < 3; ++row) {
      if (std::fabs(m[row][col]) > std::fabs(m[pivot][col])) pivot = row;
    }
    if (std::fabs(m[pivot][col]) < 1e-18L) return false;
    std::swap(m[col], m[pivot]);
    std::swap(r[col], r[pivot]);
    for (int row = col + 1; row < 3; ++row) {
      const long double f = m[row][col] / m[col][col];
      for (int k = col; k < 3; ++k) m[row][k] -= f * m[col][k];
      r[row] -= f * r[col];
    }
  }
  for (int row = 2; row >= 0; --row) {
    long double s = r[row];
    for (int k = row + 1; k < 3; ++k) s -= m[row][k] * v[k];
    v[row] = s / m[row][row];
  }
  return true;
}

// Least squares of degree 1 or 2 in scaled x; false when singular.
bool LeastSquares(const std::vector<PeakPoint>& pts, int degree, double scale, PeakModel& out) {
  long double m[3][3] = {}, r[3] = {}, v[3] = {};
  const int n = degree + 1;
  for (const auto& p : pts) {
    const long double x = p.x / scale;
    long double pw[5] = {1, x, x * x, x * x * x, x * x * x * x};
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) m[i][j] += pw[i + j];
      r[i] += pw[i] * p.bytes;
    }
  }
  if (degree == 1) {
    m[2][2] = 1;  // pin the quadratic coefficient to zero
  }
  if (!Solve3(m, r, v)) return false;
  out.a = static_cast<double>(v[0]);
  out.b = static_cast<double>(v[1] / scale);
  out.c = degree == 2 ? static_cast<double>(v[2] / (static_cast<long double>(scale) * scale)) : 0.0;
  return true;
}

void SetResidual(const std::vector<PeakPoint>& pts, PeakModel& m) {
  m.max_residual_bytes = 0;
  for (const auto& p : pts) {
    const double fit = m.a + m.b * p.x + m.c * p.x * p.x;
    m.max_residual_bytes = std::max(m.max_residual_bytes, std::fabs(fit - p.bytes));
  }
}

}  // namespace

double PeakModel::Predict(double x) const { return a + b * x + c * x * x + max_residual_bytes; }

std::optional<PeakModel> FitPeak(const std::vector<PeakPoint>& input) {
  std::vector<PeakPoint> pts;
  for (const auto& p : input) {
    if (std::isfinite(p.x) && std::isfinite(p.bytes) && p.x > 0) pts.push_back(p);
  }
  std::sort(pts.begin(), pts.end(),
            [](const PeakPoint& l, const PeakPoint& r) { return l.x < r.x; });
  int distinct = 0;
  for (size_t i = 0; i < pts.size(); ++i) distinct += i == 0 || pts[i].x != pts[i - 1].x;
  if (distinct < 2) return std::nullopt;
  const double max_bytes =
      std::max_element(pts.begin(), pts.end(), [](const PeakPoint& l, const PeakPoint& r) {
        return l.bytes < r.bytes;
      })->bytes;
  PeakModel m;
  m.points = static_cast<int>(pts.size());
  if (distinct == 2) {
    const PeakPoint& p1 = pts.front();
    const PeakPoint& p2 = pts.back();
    m.c = std::max(0.0, (p2.bytes - p1.bytes) / (p2.x * p2.x - p1.x * p1.x));
    m.a = m.c > 0 ? p1.bytes - m.c * p1.x * p1.x : max_bytes;
  } else {
    const double scale = pts.back().x;
    if (!LeastSquares(pts, 2, scale, m) || m.c < 0) {
      if (!LeastSquares(pts, 1, scale, m)) return std::nullopt;
      if (m.b < 0) m = PeakModel{max_bytes, 0, 0, 0, m.points};
    }
  }
  SetResidual(pts, m);
  return m;
}

}  // namespace headroom
