// The peak model of one knob: peak(x) = a + b*x + c*x^2 over the trials that ran ok, used
// to skip trials predicted to break the limit. Growth is super-linear (a published GB10
// sweep, Qwen3-0.6B SFT at seq 1024: 21.1 / 29.0 / 46.8 / 80.9 GB at batch 2 / 4 / 8 / 16),
// so the model allows a quadratic term, and where the points cannot pin it down it leans
// to the side that predicts more memory, never less.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace headroom {

struct PeakPoint {
  double x = 0;      // the knob's value
  double bytes = 0;  // the trial's peak pool use above its baseline
};

struct PeakModel {
  double a = 0, b = 0, c = 0;
  double max_residual_bytes = 0;  // the worst miss on the points it was fitted to
  int points = 0;
  // a + b*x + c*x^2 plus the worst residual.
  double Predict(double x) const;
};

// Two points: the curve a + c*x^2 through both (all growth quadratic: among convex curves
// through the two points with b >= 0 it predicts the most beyond them). Three or more:
// least squares a + b*x + c*x^2, falling back to a line when the curvature comes out
// negative (noise) and to the largest point when the line falls. Fewer than two distinct
// x: nullopt.
std::optional<PeakModel> FitPeak(const std::vector<PeakPoint>& points);

}  // namespace headroom
