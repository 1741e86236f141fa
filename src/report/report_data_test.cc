#include "report/report_data.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <memory>
#include <string>

#include "testing_files.h"

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

// A samples file with a box power column, a hot sensor, a malformed row, a pause and a
// throttle stretch: every kind of thing the page draws or sums.
std::string SamplesText(int rows) {
  std::string text =
      "# headroom samples schema_version=1 host=h device=\"NVIDIA GB10\" platform=gb10 "
      "interval_ms=1000 started=2026-11-29T10:00:00.000+00:00\n"
      "# units: timestamp=ISO8601, hwmon.spbm.sys_total.power=W, hwmon.x.temp=C\n"
      "timestamp,temperature.gpu,power.draw,clocks.sm,clocks_event_reasons,energy,mem.total,"
      "mem.available,mem.cached,swap.used,hwmon.spbm.sys_total.power,hwmon.x.temp\n";
  for (int i = 0; i < rows; ++i) {
    const int t = i < rows / 2 ? i : i + 30;  // a 30 s pause in the middle
    text += fmt::format(
        "2026-11-29T10:{:02}:{:02}.000+00:00,{},{}.5,{},{},{},128000000000,{},{},{},{},{}\n",
        t / 60, t % 60, 50 + i % 17, 90 + i % 11, i % 13 == 0 ? 900 : 2400,
        i % 7 == 0 ? "sw_power_cap" : "none", 1000 + 97 * i, 100000000000 - 1000000 * (i % 29),
        5000000 * i, i % 5 == 0 ? 1024 * i : 0, 150 + i % 9, 40 + i % 23);
    if (i == 3) text += "not,a,row\n";
  }
  return text;
}

// The page from a two-pass read (report_cmd.cc: the extent, then every row bucketed as read,
// keeping none) is the page from the whole series in memory.
TEST(ReportSamplePass, BucketedAsReadIsThePageOfTheWholeSeries) {
  testing::TempDir dir("report-pass");
  const std::string path = dir.File("samples.csv");
  std::ofstream(path) << SamplesText(90);
  auto whole = ReadSamplesCsv(path);
  ASSERT_TRUE(whole.ok());
  ASSERT_EQ(whole->samples.size(), 90u);
  ReportInputs in_memory;
  in_memory.samples = &*whole;
  const auto expected = BuildReportData(in_memory);
  ASSERT_TRUE(expected.ok());

  SamplesExtent extent;
  auto head = ReadSamplesCsv(path, size_t{1} << 20, [&](const SampleSeries&, const Sample& s) {
    extent.Add(s);
    return false;
  });
  ASSERT_TRUE(head.ok());
  EXPECT_TRUE(head->samples.empty());
  std::unique_ptr<ReportSamplePass> pass;
  ASSERT_TRUE(
      ReadSamplesCsv(path, size_t{1} << 20, [&](const SampleSeries& series, const Sample& s) {
        if (!pass) pass = std::make_unique<ReportSamplePass>(series, extent);
        pass->Add(s);
        return false;
      }).ok());
  ASSERT_TRUE(pass);
  ReportInputs streamed;
  streamed.samples = &*head;
  streamed.pass = pass.get();
  const auto got = BuildReportData(streamed);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->dump(), expected->dump());
  EXPECT_EQ((*got)["sampling"]["rows"], 90);
  EXPECT_EQ((*got)["notes"].size(), 1u);  // the malformed row, from the head's count
}

// Rows a writer appends between the two passes are not drawn: the axis is the first pass's.
TEST(ReportSamplePass, RowsWrittenAfterTheFirstPassAreNotDrawn) {
  testing::TempDir dir("report-pass");
  const std::string path = dir.File("samples.csv");
  const std::string text = SamplesText(40);
  std::ofstream(path) << text;
  auto first = ReadSamplesCsv(path);
  ASSERT_TRUE(first.ok());
  ReportInputs in_memory;
  in_memory.samples = &*first;
  const auto expected = BuildReportData(in_memory);
  ASSERT_TRUE(expected.ok());
  SamplesExtent extent;
  for (const Sample& s : first->samples) extent.Add(s);

  // The run went on: 30 more rows, an hour later.
  std::string more = SamplesText(70);
  more = more.substr(more.find('\n', more.find("timestamp,")) + 1);
  std::ofstream(path, std::ios::app) << more.substr(more.find('\n', more.size() / 2) + 1);
  std::unique_ptr<ReportSamplePass> pass;
  auto second =
      ReadSamplesCsv(path, size_t{1} << 20, [&](const SampleSeries& series, const Sample& s) {
        if (!pass) pass = std::make_unique<ReportSamplePass>(series, extent);
        pass->Add(s);
        return false;
      });
  ASSERT_TRUE(second.ok());
  EXPECT_GT(second->rows, 40u);
  ReportInputs streamed;
  streamed.samples = &*first;
  streamed.pass = pass.get();
  const auto got = BuildReportData(streamed);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["series"].dump(), (*expected)["series"].dump());
  EXPECT_EQ((*got)["summary"].dump(), (*expected)["summary"].dump());
  EXPECT_EQ((*got)["sampling"]["rows"], 40);
}

TEST(ReportSamplePass, NoRowIsAnError) {
  SampleSeries empty;
  SamplesExtent extent;
  ReportSamplePass pass(empty, extent);
  ReportInputs in;
  in.samples = &empty;
  in.pass = &pass;
  EXPECT_FALSE(BuildReportData(in).ok());
}

}  // namespace
}  // namespace headroom
