#include "samples/sample_loop.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "testing_files.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::Slurp;
using testing::TempDir;

const SysRoot kIdleRoot(fs::path(HEADROOM_SOURCE_DIR) / "tests/fixtures/gb10-idle");

SamplesHeader HeaderFor(const Sampler& sampler) {
  SamplesHeader h;
  h.host = "test";
  h.device = "none";
  h.platform = "none";
  h.interval_ms = 10;
  h.started = std::chrono::system_clock::now();
  h.extra_columns = sampler.extra_columns();
  return h;
}

TEST(SampleLoop, EachSampleIsOneRow) {
  TempDir dir;
  Sampler sampler(kIdleRoot, nullptr);
  auto csv = SamplesCsvWriter::Create(dir / "samples.csv", HeaderFor(sampler),
                                      std::chrono::milliseconds(0));
  ASSERT_TRUE(csv) << EnglishText(csv.error().what);
  int errors = 0;
  SampleLoop loop(sampler, *csv, nullptr, {nullptr, [&](const Error&) { ++errors; }});
  loop.SampleOnce();
  loop.SampleOnce();
  loop.SampleOnce();
  EXPECT_EQ(csv->rows(), 3u);
  EXPECT_EQ(errors, 0);
  const std::string text = Slurp(dir / "samples.csv");
  size_t data_lines = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) data_lines += !line.empty() && line[0] != '#';
  EXPECT_EQ(data_lines, 4u);  // the column names, then three rows
}

TEST(SampleLoop, RunStopsWhenTheStopFdIsReadable) {
  TempDir dir;
  Sampler sampler(kIdleRoot, nullptr);
  auto csv = SamplesCsvWriter::Create(dir / "samples.csv", HeaderFor(sampler),
                                      std::chrono::milliseconds(0));
  ASSERT_TRUE(csv);
  SampleLoop loop(sampler, *csv, nullptr, {});
  int stop[2];
  ASSERT_EQ(::pipe(stop), 0);
  // Already readable: one sample at once, then out.
  ASSERT_EQ(::write(stop[1], "x", 1), 1);
  loop.Run(std::chrono::milliseconds(10'000), stop[0]);
  EXPECT_EQ(csv->rows(), 1u);
  char c;
  ASSERT_EQ(::read(stop[0], &c, 1), 1);
  // Stopped from another thread after a while: a row every interval meanwhile.
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    (void)!::write(stop[1], "x", 1);
  });
  const auto start = std::chrono::steady_clock::now();
  loop.Run(std::chrono::milliseconds(20), stop[0]);
  stopper.join();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(250));
  EXPECT_GE(csv->rows(), 4u);
  ::close(stop[0]);
  ::close(stop[1]);
}

TEST(SampleLoop, SampleUntilSignalEndsAtTheSignalWithItsNumber) {
  TempDir dir;
  Sampler sampler(kIdleRoot, nullptr);
  auto csv = SamplesCsvWriter::Create(dir / "samples.csv", HeaderFor(sampler),
                                      std::chrono::milliseconds(0));
  ASSERT_TRUE(csv) << EnglishText(csv.error().what);
  SampleLoop loop(sampler, *csv, nullptr, {nullptr, nullptr});
  std::atomic<bool> blocked{false};
  Result<int> got = 0;
  // The signal goes to the sampling thread alone, which has it blocked before it is sent.
  std::thread sampling([&] {
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGHUP);
    ::pthread_sigmask(SIG_BLOCK, &mask, nullptr);
    blocked = true;
    got = SampleUntilSignal(loop, std::chrono::milliseconds(10));
  });
  while (!blocked) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ::pthread_kill(sampling.native_handle(), SIGHUP);
  sampling.join();
  ASSERT_TRUE(got) << EnglishText(got.error().what);
  EXPECT_EQ(*got, SIGHUP);
  EXPECT_GE(csv->rows(), 1u);
}

TEST(SampleLoop, TheIntervalIsADurationOfAtLeast100ms) {
  EXPECT_EQ(*ParseSampleInterval("30s"), std::chrono::milliseconds(30000));
  EXPECT_EQ(*ParseSampleInterval("100ms"), std::chrono::milliseconds(100));
  EXPECT_EQ(*ParseSampleInterval("0.5"), std::chrono::milliseconds(500));
  auto fast = ParseSampleInterval("99ms");
  ASSERT_FALSE(fast);
  EXPECT_EQ(EnglishText(fast.error().what), "--interval: 99ms is below the minimum of 100ms");
  auto bad = ParseSampleInterval("often");
  ASSERT_FALSE(bad);
  EXPECT_EQ(EnglishText(bad.error().what).rfind("--interval: 'often' is not a duration", 0), 0u)
      << EnglishText(bad.error().what);
}

TEST(SampleLoop, TheHeaderSaysWhatTheSamplerReads) {
  Sampler sampler(kIdleRoot, nullptr);
  const WallTime started = std::chrono::system_clock::now();
  SamplesHeader h =
      SamplesHeaderFor(sampler, std::chrono::milliseconds(250), "", {"a note"}, started);
  EXPECT_EQ(h.host, "unknown");
  EXPECT_EQ(h.device, "none");  // no GPU backend
  EXPECT_EQ(h.platform, std::string(PlatformKindName(sampler.platform().kind)));
  EXPECT_EQ(h.interval_ms, 250);
  EXPECT_EQ(h.started, started);
  EXPECT_EQ(h.extra_columns.size(), sampler.extra_columns().size());
  EXPECT_EQ(h.notes, std::vector<std::string>{"a note"});
  h = SamplesHeaderFor(sampler, std::chrono::milliseconds(250), "spark-1", {}, started);
  EXPECT_EQ(h.host, "spark-1");
  EXPECT_TRUE(h.notes.empty());
}

}  // namespace
}  // namespace headroom
