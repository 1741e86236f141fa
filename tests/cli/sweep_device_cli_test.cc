// sweep --device-limit (docs/sweep.md "On a discrete GPU"): a trial is judged by the torch
// allocator peak in its step records, not by the host's MemAvailable. The trainer is a plain
// python3 that writes the records a device job's companion would (tests/tools/
// device_records_trainer.py): its device peak is what the records say, while the host memory
// it takes is an interpreter's few MiB. The kill level is 512 MiB of MemAvailable, far below
// anything these trials take.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "run_cli.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::RunCli;
using testing::TempDir;

std::vector<std::string> DeviceSweep(const TempDir& tmp, const std::string& batch,
                                     std::vector<std::string> limit_flags,
                                     const std::string& extra = "") {
  std::vector<std::string> args = {"sweep",
                                   "--state",
                                   tmp.File("journal.db"),
                                   "--min-available",
                                   "512MiB",
                                   "--settle-timeout",
                                   "2s",
                                   "--batch",
                                   batch,
                                   "--json"};
  args.insert(args.end(), limit_flags.begin(), limit_flags.end());
  args.insert(args.end(),
              {"--", "/usr/bin/python3",
               testing::SourcePath("tests/tools/device_records_trainer.py"), "{batch}", "1"});
  if (!extra.empty()) args.push_back(extra);
  return args;
}

TEST(SweepDeviceCli, ATrialOverTheDeviceLimitByItsDevicePeakIsOverThoughTheHostBarelyMoves) {
  TempDir tmp;
  // batch 3: 3 GiB of device memory by its records, over 2.5 GiB; the host's fall is MiBs.
  const auto r = RunCli(DeviceSweep(tmp, "3..3", {"--device-limit", "2560MiB"}), 60000);
  ASSERT_EQ(r.status, 1) << r.err << r.out;  // no config fits
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["limit_of"], "device") << j;
  ASSERT_EQ(j["trials"].size(), 1U) << r.out;
  const auto& t = j["trials"][0];
  EXPECT_EQ(t["status"], "over-limit") << t;
  EXPECT_EQ(t["peak_measure"], "device-allocator") << t;
  EXPECT_EQ(t["peak_bytes"].get<uint64_t>(), 3 * kGiB) << t;
  const std::string notes = t["notes"].get<std::string>();
  EXPECT_NE(notes.find("device peak 3.22 GB is over the device limit 2.68 GB"), std::string::npos)
      << notes;
  EXPECT_NE(notes.find("peak: the device's torch allocator peak"), std::string::npos) << notes;
  EXPECT_NE(r.err.find("device limit 2.68 GB"), std::string::npos) << r.err;
}

TEST(SweepDeviceCli, ATrialUnderTheDeviceLimitIsOkAndPlatformDiscreteReadsLimitSo) {
  TempDir tmp;
  const auto r =
      RunCli(DeviceSweep(tmp, "2..2", {"--platform", "discrete", "--limit", "2560MiB"}), 60000);
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["limit_of"], "device") << j;
  ASSERT_EQ(j["trials"].size(), 1U) << r.out;
  const auto& t = j["trials"][0];
  EXPECT_EQ(t["status"], "ok") << t;
  EXPECT_EQ(t["peak_measure"], "device-allocator") << t;
  EXPECT_EQ(t["peak_bytes"].get<uint64_t>(), 2 * kGiB) << t;
  EXPECT_EQ(t["headroom_bytes"].get<int64_t>(), static_cast<int64_t>(512 * kMiB)) << t;
  EXPECT_EQ(j["best"]["batch"], 2) << j;
}

TEST(SweepDeviceCli, ATrialWithoutStepRecordsIsOneClearErrorNotAHostReading) {
  TempDir tmp;
  const auto r =
      RunCli(DeviceSweep(tmp, "1..1", {"--device-limit", "2560MiB"}, "--no-records"), 60000);
  ASSERT_EQ(r.status, 1) << r.err << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["trials"].size(), 1U) << r.out;
  const auto& t = j["trials"][0];
  EXPECT_EQ(t["status"], "error") << t;
  EXPECT_EQ(t["peak_measure"], "none") << t;
  EXPECT_NE(t["notes"].get<std::string>().find(
                "no device peak: the job wrote no step records with a torch allocator peak; "
                "--device-limit needs the companion"),
            std::string::npos)
      << t;
}

TEST(SweepDeviceCli, BadDeviceLimitsAreOneUsageLine) {
  TempDir tmp;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--device-limit", "80"}, "--device-limit: "},
      {{"--device-limit", "0GiB"}, "--device-limit: "},
      {{"--device-limit", "50%"}, "--device-limit: 50%: give the device's size with its unit"},
      {{"--device-limit", "1GiB", "--limit", "1GiB"}, "--device-limit and --limit: give one"},
      {{"--platform", "discrete"}, "--platform discrete needs --limit SIZE"},
      {{"--platform", "discrete", "--limit", "8"}, "--limit: "},
      {{"--platform", "gpu"}, "--platform"},
  };
  for (const auto& [flags, want] : cases) {
    const auto r = RunCli(DeviceSweep(tmp, "1..1", flags), 60000);
    EXPECT_EQ(r.status, 2) << flags[1] << ": " << r.err;
    EXPECT_NE(r.err.find(want), std::string::npos) << flags[1] << ": " << r.err;
    EXPECT_EQ(r.out, "") << flags[1];
  }
}

}  // namespace
}  // namespace headroom
