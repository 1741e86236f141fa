#include "sweep/peak_fit.h"

#include <gtest/gtest.h>

#include <cmath>

namespace headroom {
namespace {

TEST(PeakFit, ExactQuadraticFromThreePoints) {
  auto f = [](double x) { return 200 + 100 * x + 25 * x * x; };
  auto m = FitPeak({{1, f(1)}, {2, f(2)}, {4, f(4)}});
  ASSERT_TRUE(m);
  EXPECT_NEAR(m->Predict(8), f(8), 1e-6);
  EXPECT_NEAR(m->Predict(100), f(100), 1e-3);
}

TEST(PeakFit, TwoPointsNeverPredictLessThanAConvexCurveThroughThem) {
  // Linear truth: the two-point model (all growth quadratic) predicts more beyond them.
  auto lin = [](double x) { return 1000 + 100 * x; };
  auto m = FitPeak({{1, lin(1)}, {2, lin(2)}});
  ASSERT_TRUE(m);
  EXPECT_GE(m->Predict(4), lin(4));
  EXPECT_NEAR(m->Predict(2), lin(2), 1e-9);
}

TEST(PeakFit, PublishedGb10SweepIsOverestimatedNotUnder) {
  // Qwen3-0.6B SFT at seq 1024 on a DGX Spark: 21.1 / 29.0 / 46.8 / 80.9 GB at 2/4/8/16.
  auto m = FitPeak({{2, 21.1}, {4, 29.0}, {8, 46.8}});
  ASSERT_TRUE(m);
  EXPECT_GE(m->Predict(16), 80.9);
  EXPECT_LT(m->Predict(16), 80.9 * 1.2);
}

TEST(PeakFit, NoiseWithNegativeCurvatureFallsBackToALine) {
  auto m = FitPeak({{1, 100}, {2, 300}, {4, 500}});
  ASSERT_TRUE(m);
  EXPECT_EQ(m->c, 0);
  EXPECT_GT(m->b, 0);
  EXPECT_GE(m->Predict(4), 500);  // the residual is part of the prediction
}

TEST(PeakFit, TooFewOrHostilePointsGiveNoModel) {
  EXPECT_FALSE(FitPeak({}));
  EXPECT_FALSE(FitPeak({{4, 100}}));
  EXPECT_FALSE(FitPeak({{4, 100}, {4, 120}}));
  EXPECT_FALSE(FitPeak({{0, 100}, {-1, 120}}));
  auto m = FitPeak({{1, 100}, {2, 90}});  // falling: predict the largest seen
  ASSERT_TRUE(m);
  EXPECT_GE(m->Predict(8), 100);
  auto huge = FitPeak({{1, 1e12}, {1e9, 1e18}, {5e8, 3e17}});
  ASSERT_TRUE(huge);
  EXPECT_TRUE(std::isfinite(huge->Predict(2e9)));
}

}  // namespace
}  // namespace headroom
