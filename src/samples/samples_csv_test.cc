#include "samples/samples_csv.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace headroom {
namespace {

using std::chrono::milliseconds;

WallTime At(int64_t ms) { return WallTime(milliseconds(ms)); }

Sample FullSample(int64_t ms) {
  Sample s;
  s.time = At(ms);
  s.temperature_c = 61;
  s.power_mw = 99'500;
  s.sm_clock_mhz = 2405;
  s.clock_event_reasons = 0x24;
  s.gpu_utilization_pct = 96;
  s.energy_mj = 5'000'123;
  s.mem_total_bytes = 130'663'165'952ULL;
  s.mem_available_bytes = 120'000'000'000ULL;
  s.mem_cached_bytes = 4'000'000'000ULL;
  s.mem_free_bytes = 110'000'000'000ULL;
  s.swap_used_bytes = 0;
  s.psi_some_avg10_pct = 1.25;
  s.psi_full_avg10_pct = 0.5;
  s.cpu_util_pct = 12.5;
  s.extra = {41.5, std::nullopt};
  return s;
}

SamplesHeader Header() {
  SamplesHeader h;
  h.host = "spark-1";
  h.device = "NVIDIA GB10";
  h.platform = "gb10";
  h.interval_ms = 100;
  h.started = At(1'764'410'400'000);
  h.extra_columns = {{"hwmon.spbm.gpu.temp", "C"}, {"hwmon.spbm.sys_total.power", "W"}};
  h.notes = {"clocks.mem: not supported"};
  return h;
}

TEST(SamplesCsv, HeaderStartsWithNvidiaSmiColumns) {
  const std::string text = FormatSamplesHeader(Header());
  EXPECT_TRUE(text.starts_with(
      "# headroom samples schema_version=1 host=spark-1 device=\"NVIDIA GB10\" platform=gb10 "
      "interval_ms=100 started=2025-11-29T10:00:00.000+00:00\n# units: timestamp=ISO8601, "
      "temperature.gpu=C, power.draw=W, "))
      << text;
  EXPECT_NE(text.find("\n# note: clocks.mem: not supported\n"), std::string::npos);
  EXPECT_NE(text.find("\ntimestamp,temperature.gpu,power.draw,clocks.sm,"), std::string::npos);
  EXPECT_TRUE(text.ends_with(",memory.used,hwmon.spbm.gpu.temp,hwmon.spbm.sys_total.power\n"));
}

TEST(SamplesCsv, RowFormatsUnitsAndEmptyFieldsForMissingReadings) {
  const std::string row = FormatSampleRow(FullSample(1'764'410'400'123), 2);
  EXPECT_EQ(
      row,
      "2025-11-29T10:00:00.123+00:00,61,99.50,2405,,sw_power_cap|sw_thermal_slowdown,96,"
      "5000.123,130663165952,120000000000,4000000000,110000000000,0,1.25,0.50,12.5,,,41.5,\n");
  Sample empty;
  empty.time = At(0);
  empty.clock_event_reasons = 0;
  EXPECT_EQ(FormatSampleRow(empty, 1), "1970-01-01T00:00:00.000+00:00,,,,,none,,,,,,,,,,,,,\n");
}

TEST(SamplesCsv, RoundTrips) {
  std::string text = FormatSamplesHeader(Header());
  text += FormatSampleRow(FullSample(1'764'410'400'000), 2);
  Sample second = FullSample(1'764'410'400'100);
  second.temperature_c.reset();
  second.clock_event_reasons = 0;
  second.gpu_memory_used_bytes = 7;
  text += FormatSampleRow(second, 2);
  auto series = ParseSamplesCsv(text);
  ASSERT_TRUE(series.ok()) << EnglishText(series.error().what);
  EXPECT_EQ(series->schema_version, 1);
  EXPECT_EQ(series->header.at("device"), "NVIDIA GB10");
  EXPECT_EQ(series->header.at("host"), "spark-1");
  EXPECT_EQ(series->units.at("power.draw"), "W");
  EXPECT_EQ(series->units.at("hwmon.spbm.gpu.temp"), "C");
  ASSERT_EQ(series->notes.size(), 1u);
  ASSERT_EQ(series->extra_columns.size(), 2u);
  EXPECT_EQ(series->extra_columns[1].name, "hwmon.spbm.sys_total.power");
  EXPECT_EQ(series->extra_columns[1].unit, "W");
  ASSERT_EQ(series->samples.size(), 2u);
  const Sample& a = series->samples[0];
  EXPECT_EQ(a.time, At(1'764'410'400'000));
  EXPECT_EQ(a.temperature_c, 61);
  EXPECT_EQ(a.power_mw, 99'500u);
  EXPECT_EQ(a.clock_event_reasons, 0x24u);
  EXPECT_EQ(a.energy_mj, 5'000'123u);
  EXPECT_EQ(a.mem_available_bytes, 120'000'000'000ULL);
  EXPECT_EQ(a.swap_used_bytes, 0u);
  EXPECT_DOUBLE_EQ(*a.psi_some_avg10_pct, 1.25);
  EXPECT_FALSE(a.mem_clock_mhz.has_value());
  EXPECT_EQ(a.extra[0], 41.5);
  EXPECT_FALSE(a.extra[1].has_value());
  const Sample& b = series->samples[1];
  EXPECT_FALSE(b.temperature_c.has_value());
  EXPECT_EQ(b.clock_event_reasons, 0u);
  EXPECT_EQ(b.gpu_memory_used_bytes, 7u);
  EXPECT_EQ(series->skipped_rows, 0u);
  EXPECT_FALSE(series->torn_last_line);
}

TEST(SamplesCsv, TornLastLineIsSkipped) {
  std::string text = FormatSamplesHeader(Header());
  text += FormatSampleRow(FullSample(1000), 2);
  const std::string last = FormatSampleRow(FullSample(2000), 2);
  text += last.substr(0, last.size() / 2);  // a power cut in the middle of the write
  auto series = ParseSamplesCsv(text);
  ASSERT_TRUE(series.ok());
  EXPECT_EQ(series->samples.size(), 1u);
  EXPECT_TRUE(series->torn_last_line);
}

TEST(SamplesCsv, ZeroFilledTailAndShortRowsAreSkipped) {
  std::string text = FormatSamplesHeader(Header());
  text += FormatSampleRow(FullSample(1000), 2);
  text += "2025-11-29T10:00:00.000+00:00,1,2\n";       // short row
  text += std::string(100, '\0') + "\n";               // ext4 zero block after a crash
  text += "not-a-time" + std::string(20, ',') + "\n";  // right count, bad timestamp
  text += FormatSampleRow(FullSample(3000), 2);
  auto series = ParseSamplesCsv(text);
  ASSERT_TRUE(series.ok());
  EXPECT_EQ(series->samples.size(), 2u);
  EXPECT_EQ(series->skipped_rows, 3u);
}

TEST(SamplesCsv, TimestampsAWallTimeCannotHoldAreSkippedRows) {
  // Found by fuzzing: a year outside 1678-2262 overflowed the int64 nanoseconds (UB); such a
  // row is now one more skipped row, like any timestamp that does not parse.
  std::string text = FormatSamplesHeader(Header());
  text += FormatSampleRow(FullSample(1000), 2);
  text += "9999-12-31T23:59:59.999+00:00" + std::string(20, ',') + "\n";
  text += "1000-01-01T00:00:00.000-05:00" + std::string(20, ',') + "\n";
  text += "2262-04-12T00:00:00.000+00:00" + std::string(20, ',') + "\n";
  text += FormatSampleRow(FullSample(3000), 2);
  auto series = ParseSamplesCsv(text);
  ASSERT_TRUE(series.ok());
  EXPECT_EQ(series->samples.size(), 2u);
  EXPECT_EQ(series->skipped_rows, 3u);
}

TEST(SamplesCsv, MapsColumnsByNameInAnyOrderAndKeepsUnknownOnes) {
  const std::string text =
      "# headroom samples schema_version=1 host=h device=none\n"
      "# a comment the reader does not know\n"
      "power.draw,future.metric,timestamp,mem.available\r\n"
      "12.34,7.5,2026-11-29T11:00:00.5+01:00,42\r\n"
      "\"1.00\",oops,2026-11-29T10:00:01Z,\n";
  auto series = ParseSamplesCsv(text);
  ASSERT_TRUE(series.ok()) << EnglishText(series.error().what);
  ASSERT_EQ(series->samples.size(), 2u);
  ASSERT_EQ(series->extra_columns.size(), 1u);
  EXPECT_EQ(series->extra_columns[0].name, "future.metric");
  const Sample& a = series->samples[0];
  EXPECT_EQ(a.power_mw, 12'340u);
  EXPECT_EQ(a.mem_available_bytes, 42u);
  EXPECT_EQ(a.extra[0], 7.5);
  EXPECT_EQ(a.time, *ParseIso8601WithOffset("2026-11-29T10:00:00.500Z"));
  EXPECT_EQ(series->samples[1].power_mw, 1'000u);
  EXPECT_FALSE(series->samples[1].extra[0].has_value());
  EXPECT_EQ(series->bad_fields, 1u);
}

TEST(SamplesCsv, RefusesWhatIsNotASamplesFile) {
  EXPECT_FALSE(ParseSamplesCsv("").ok());
  EXPECT_FALSE(ParseSamplesCsv("timestamp,power.draw\n1,2\n").ok());
  EXPECT_FALSE(ParseSamplesCsv("# headroom samples host=x\ntimestamp\n").ok());
  auto newer = ParseSamplesCsv("# headroom samples schema_version=2\ntimestamp\n");
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(EnglishText(newer.error().what).find("newer"), std::string::npos);
  EXPECT_FALSE(ParseSamplesCsv("# headroom samples schema_version=1\npower.draw\n").ok());
  EXPECT_FALSE(ParseSamplesCsv("# headroom samples schema_version=1\ntimestamp,a,a\n").ok());
  EXPECT_FALSE(ParseSamplesCsv("# headroom samples schema_version=1\n").ok());
  // Hostile values: no crash, n/a fields.
  auto hostile = ParseSamplesCsv(
      "# headroom samples schema_version=1 device=\"unterminated\n"
      "timestamp,power.draw,temperature.gpu,clocks_event_reasons,mem.total,psi.memory.some.avg10\n"
      "2026-11-29T10:00:00Z,-5,1e308,unknown_0xzz,99999999999999999999999,nan\n"
      "2026-11-29T10:00:00Z,1e300,-1e9,gpu_idle|bogus,-1,inf\n");
  ASSERT_TRUE(hostile.ok());
  ASSERT_EQ(hostile->samples.size(), 2u);
  for (const auto& s : hostile->samples) {
    EXPECT_FALSE(s.power_mw || s.temperature_c || s.clock_event_reasons || s.mem_total_bytes ||
                 s.psi_some_avg10_pct);
  }
  EXPECT_EQ(hostile->bad_fields, 10u);
}

TEST(SamplesCsv, ClockEventReasonNames) {
  EXPECT_EQ(ParseClockEventReasonNames("none"), 0u);
  EXPECT_EQ(ParseClockEventReasonNames("gpu_idle|hw_slowdown"), 0x9u);
  EXPECT_EQ(ParseClockEventReasonNames("unknown_0x200"), 0x200u);
  EXPECT_FALSE(ParseClockEventReasonNames(""));
  EXPECT_FALSE(ParseClockEventReasonNames("gpu_idle|"));
  EXPECT_FALSE(ParseClockEventReasonNames("unknown_0x0"));
}

TEST(SamplesCsv, WriterWritesWholeLinesAndReaderReadsThem) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("headroom-samples-" + std::to_string(::getpid()) + ".csv");
  {
    auto w = SamplesCsvWriter::Create(path, Header(), milliseconds(5000));
    ASSERT_TRUE(w.ok()) << EnglishText(w.error().what);
    ASSERT_TRUE(w->Append(FullSample(1000)).ok());
    ASSERT_TRUE(w->Append(FullSample(2000)).ok());
    // Readable before any sync or close: each line went to the kernel whole.
    auto mid = ReadSamplesCsv(path);
    ASSERT_TRUE(mid.ok());
    EXPECT_EQ(mid->samples.size(), 2u);
  }
  auto series = ReadSamplesCsv(path);
  ASSERT_TRUE(series.ok());
  EXPECT_EQ(series->samples.size(), 2u);
  std::filesystem::remove(path);
  auto missing = ReadSamplesCsv(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(EnglishText(missing.error().what).find(path.string()), std::string::npos);
}

// The reader checks the type on the descriptor it reads from: a FIFO with no writer is an
// error at once, never a read that waits for one.
TEST(SamplesCsv, AFifoIsRefusedWithoutWaitingForAWriter) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("headroom-samples-fifo-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto fifo = dir / "s.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto read = ReadSamplesCsv(fifo);
  ASSERT_FALSE(read.ok());
  const std::string text = EnglishText(read.error().what);
  EXPECT_NE(text.find(fifo.string()), std::string::npos) << text;
  EXPECT_NE(text.find("a FIFO, not a regular file"), std::string::npos) << text;
  std::filesystem::remove_all(dir);
}

// A filter sees each row with the header already read, and only the rows it keeps are
// stored; `rows` counts them all.
TEST(SamplesCsv, AFilterKeepsOnlyTheRowsItWants) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("headroom-samples-keep-" + std::to_string(::getpid()) + ".csv");
  {
    auto w = SamplesCsvWriter::Create(path, Header(), milliseconds(5000));
    ASSERT_TRUE(w.ok()) << EnglishText(w.error().what);
    for (int64_t ms : {1000, 2000, 3000, 4000}) ASSERT_TRUE(w->Append(FullSample(ms)).ok());
  }
  size_t seen = 0;
  auto series =
      ReadSamplesCsv(path, size_t{1} << 20, [&](const SampleSeries& so_far, const Sample&) {
        EXPECT_EQ(so_far.header.at("host"), Header().host);  // the header is read before any row
        return ++seen % 2 == 0;
      });
  std::filesystem::remove(path);
  ASSERT_TRUE(series.ok()) << EnglishText(series.error().what);
  EXPECT_EQ(seen, 4u);
  EXPECT_EQ(series->rows, 4u);
  ASSERT_EQ(series->samples.size(), 2u);
  EXPECT_EQ(series->samples[0].time, FullSample(2000).time);
  EXPECT_EQ(series->samples[1].time, FullSample(4000).time);
  auto unfiltered = ParseSamplesCsv(
      "# headroom samples schema_version=1\ntimestamp\n"
      "2026-11-29T10:00:00Z\n2026-11-29T10:00:01Z\n");
  ASSERT_TRUE(unfiltered.ok());
  EXPECT_EQ(unfiltered->rows, 2u);
  EXPECT_EQ(unfiltered->samples.size(), 2u);
}

}  // namespace
}  // namespace headroom
