// sweep with a trainer that reports its own peak (the companion's step records, docs/sweep.md):
// the trial's answer does not move when another process takes and frees a GiB during it.
// A real PyTorch trainer (Debian's python3-torch under /usr/bin/python3) and the balloon as the
// other process. Memory safety as in sweep_cli_test.cc: the kill level 3 GiB under the settled
// MemAvailable, the trainer's allocation 512 MiB, the balloon capped at 1 GiB with its own
// timeout, every process waited for. A memory test (SweepCli.*: RUN_SERIAL, flock).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/bytes.h"
#include "run_cli.h"
#include "sys/meminfo.h"
#include "testing_files.h"
#include "testing_torch_jobs.h"

namespace headroom {
namespace {

using testing::RunCli;
using testing::TempDir;
namespace fs = std::filesystem;

TEST(SweepCli, TakesTheJobsOwnPeakFromItsStepRecordsWhateverElseMoves) {
  if (!testing::HaveTorch()) GTEST_SKIP() << "no python3-torch under /usr/bin/python3";
  TempDir tmp;
  auto info = ReadMemInfo(SysRoot("/"));
  ASSERT_TRUE(info);
  const uint64_t total = info->total_bytes().value_or(0);
  const uint64_t available = info->available_bytes().value_or(0);
  const std::string ready = tmp.File("ready");
  testing::CliResult r;
  std::atomic<bool> done{false};
  std::thread sweep([&] {
    r = RunCli({"sweep",
                "--state",
                tmp.File("journal.db"),
                "--limit",
                std::to_string(total - available + 4 * kGiB) + "B",
                "--min-available",
                std::to_string(available - 3 * kGiB) + "B",
                "--require-available",
                "1GiB",
                "--settle-timeout",
                "10s",
                "--batch",
                "2..2",
                "--json",
                "--",
                "/usr/bin/python3",
                testing::SourcePath("tests/tools/records_trainer.py"),
                "{batch}",
                ready,
                "4"},
               180000, {"PYTHONPATH=" + testing::SourcePath("python")});
    done = true;
  });
  // Once the trainer holds its memory: another process takes 1 GiB for 1.5 s and frees it.
  bool saw_ready = false;
  for (int i = 0; i < 1500 && !done && !(saw_ready = fs::exists(ready)); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  int balloon_status = -1;
  if (saw_ready) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execl(HEADROOM_BALLOON, HEADROOM_BALLOON, "--cap", "1G", "--hold", "1.5s", "--timeout",
              "10s", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::waitpid(pid, &balloon_status, 0);
  }
  sweep.join();
  ASSERT_TRUE(saw_ready) << r.err;
  EXPECT_EQ(balloon_status, 0);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["trials"].size(), 1U) << r.out;
  const auto& t = j["trials"][0];
  EXPECT_EQ(t["status"], "ok") << t;
  EXPECT_EQ(t["peak_measure"], "step-records") << t;
  // The trainer's 512 MiB and its interpreter with torch (a few hundred MiB of RSS), never the
  // balloon's GiB, which MemAvailable's fall would have counted.
  const uint64_t peak = t["peak_bytes"].get<uint64_t>();
  EXPECT_GT(peak, 512 * kMiB) << t;
  EXPECT_LT(peak, 512 * kMiB + kGiB - 128 * kMiB) << t;
  EXPECT_NE(t["notes"].get<std::string>().find("peak: the job's step records"), std::string::npos)
      << t;
}

}  // namespace
}  // namespace headroom
