#include "report/report_data.h"

#include <gtest/gtest.h>

#include <limits>

namespace headroom {
namespace {

size_t Nulls(const nlohmann::ordered_json& series) {
  size_t n = 0;
  for (const auto& v : series["mean"]) n += v.is_null();
  return n;
}

TEST(Bucketer, RowsSpacedWiderThanTheGapStayWithinTwoEntriesPerBucket) {
  // Regression: rows 10 s apart under a header saying 100 ms (gap 0.3 s) wrote a break per row,
  // and the page grew with the file. 200,000 s in 2,000 buckets of 100 s: 20,000 rows.
  Bucketer b(200'000, 100, 0.3, true);
  for (int i = 0; i <= 20'000; ++i) b.Add(10.0 * i, 1);
  const auto series = b.Finish();
  EXPECT_EQ(series["t"].size(), 2000u);
  EXPECT_EQ(Nulls(series), 0u);
}

TEST(Bucketer, AGapLongerThanABucketStillBreaksTheLine) {
  Bucketer b(1000, 100, 0.3, true);
  b.Add(0, 1);
  b.Add(1, 1);
  b.Add(450, 2);  // 449 s without a reading: buckets 1-3 are empty
  const auto series = b.Finish();
  ASSERT_EQ(series["t"].size(), 3u);
  EXPECT_TRUE(series["mean"][1].is_null());
  EXPECT_DOUBLE_EQ(series["t"][1].get<double>(), 225.5);
}

TEST(Bucketer, SparseRowsWithShortBucketsKeepTheirBreaks) {
  // A short run: the bucket is the interval, so a pause of more than 3 intervals breaks.
  Bucketer b(20, 1, 3, false);
  for (double t : {0.0, 1.0, 2.0, 10.0, 11.0}) b.Add(t, t);
  const auto series = b.Finish();
  EXPECT_EQ(series["t"].size(), 6u);
  EXPECT_EQ(Nulls(series), 1u);
}

TEST(Bucketer, RestartsInsideTheBucketBeingFilledAreMerged) {
  // A hostile log restarting every step must not write an entry per restart.
  Bucketer b(1000, 100, std::numeric_limits<double>::infinity(), false);
  for (int i = 0; i < 10'000; ++i) {
    const double t = 0.1 * i;
    b.Break(t);
    b.Add(t, 1);
  }
  const auto merged = b.Finish();
  EXPECT_LE(merged["t"].size(), 2u * 10);
  // A restart in another bucket than the one being filled is a break.
  Bucketer c(1000, 100, std::numeric_limits<double>::infinity(), false);
  c.Add(10, 1);
  c.Break(150);
  c.Add(150, 2);
  EXPECT_EQ(Nulls(c.Finish()), 1u);
}

}  // namespace
}  // namespace headroom
