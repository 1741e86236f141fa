#include "guard/checkpoint_request.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "base/bytes.h"
#include "guard/child.h"
#include "guard/guard.h"
#include "testing_files.h"

namespace headroom {
namespace {

CheckpointInputs BelowWarn() {
  CheckpointInputs in;
  in.warn_bytes = 8 * kGiB;
  in.kill_bytes = 4 * kGiB;
  in.available_bytes = 7 * kGiB;  // 3 GiB above the kill level
  in.have_target = true;
  in.need_s = 10;
  return in;
}

TEST(DecideCheckpoint, AsksWhenTheProjectionLeavesTheSaveItsTime) {
  CheckpointInputs in = BelowWarn();
  in.fall_rate_bytes_per_s = 0.1 * kGiB;  // 30 s to the kill level
  const CheckpointDecision d = DecideCheckpoint(in);
  EXPECT_EQ(d.verdict, CheckpointVerdict::kAsk);
  EXPECT_NEAR(d.projected_s, 30.0, 1e-9);
}

TEST(DecideCheckpoint, AFastFallLeavesNoTimeAndIsNotAsked) {
  CheckpointInputs in = BelowWarn();
  in.fall_rate_bytes_per_s = 1.0 * kGiB;  // 3 s, a save needs 10
  const CheckpointDecision d = DecideCheckpoint(in);
  EXPECT_EQ(d.verdict, CheckpointVerdict::kTooLate);
  EXPECT_NEAR(d.projected_s, 3.0, 1e-9);
  in.need_s = 2.5;  // a measured save that fits
  EXPECT_EQ(DecideCheckpoint(in).verdict, CheckpointVerdict::kAsk);
}

TEST(DecideCheckpoint, NotFallingIsAnInfiniteProjection) {
  CheckpointInputs in = BelowWarn();
  in.fall_rate_bytes_per_s = -5e6;  // coming back
  const CheckpointDecision d = DecideCheckpoint(in);
  EXPECT_EQ(d.verdict, CheckpointVerdict::kAsk);
  EXPECT_TRUE(std::isinf(d.projected_s));
}

TEST(DecideCheckpoint, NothingAboveTheWarningLevelOnceAskedOrWhenKilling) {
  CheckpointInputs in = BelowWarn();
  in.fall_rate_bytes_per_s = 1e6;
  in.available_bytes = in.warn_bytes;  // at the level is not below it
  EXPECT_EQ(DecideCheckpoint(in).verdict, CheckpointVerdict::kNothing);
  in = BelowWarn();
  in.armed = false;  // asked already in this crossing
  EXPECT_EQ(DecideCheckpoint(in).verdict, CheckpointVerdict::kNothing);
  in = BelowWarn();
  in.triggered = true;  // the kill is under way: never a save in its way
  EXPECT_EQ(DecideCheckpoint(in).verdict, CheckpointVerdict::kNothing);
  in = BelowWarn();
  in.warn_bytes = 0;  // no warning level
  EXPECT_EQ(DecideCheckpoint(in).verdict, CheckpointVerdict::kNothing);
}

TEST(DecideCheckpoint, BelowTheKillLevelThereIsNoTimeLeft) {
  CheckpointInputs in = BelowWarn();
  in.available_bytes = 3 * kGiB;
  in.fall_rate_bytes_per_s = 1e6;
  const CheckpointDecision d = DecideCheckpoint(in);
  EXPECT_EQ(d.verdict, CheckpointVerdict::kTooLate);
  EXPECT_EQ(d.projected_s, 0.0);
}

TEST(DecideCheckpoint, WithoutACompanionNothingCanBeAsked) {
  CheckpointInputs in = BelowWarn();
  in.have_target = false;
  EXPECT_EQ(DecideCheckpoint(in).verdict, CheckpointVerdict::kNoCompanion);
}

TEST(CheckpointSummaryJson, SaysAskedFinishedDurationAndWhere) {
  CheckpointSummary s;
  s.companion_seen = s.asked = s.started = s.finished = s.ok = true;
  s.how = "SIGUSR1";
  s.need_s = 10;
  s.step = 42;
  s.duration_s = 1.25;
  s.path = "/ckpt/step-42.pt";
  s.source = "loop";
  const auto j = CheckpointSummaryJson(s);
  EXPECT_EQ(j["asked"], true);
  EXPECT_EQ(j["finished"], true);
  EXPECT_EQ(j["step"], 42);
  EXPECT_EQ(j["duration_s"], 1.25);
  EXPECT_EQ(j["path"], "/ckpt/step-42.pt");
  EXPECT_TRUE(j["not_asked"].is_null());
  EXPECT_EQ(j["source"], "loop");
  CheckpointSummary none;
  none.not_asked = Msg("no companion in the job (no start record in the step records)");
  const auto k = CheckpointSummaryJson(none);
  EXPECT_EQ(k["asked"], false);
  EXPECT_TRUE(k["how"].is_null());
  EXPECT_TRUE(k["source"].is_null());
  EXPECT_EQ(k["not_asked"], "no companion in the job (no start record in the step records)");
}

// The asker against a real job: a real Python process with the companion (python/headroom),
// driven with literal readings; a start record that names a process outside the job's tree
// (this test's own, whose default action for SIGUSR1 would end it) is never signalled.
TEST(CheckpointAsker, AsksOnlyTheJobsAnnouncedProcessesAndTimesTheSave) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  testing::TempDir dir;
  const std::string records = dir.File("steps.jsonl");
  {
    // The decoy: announced, handles SIGUSR1, but not in the job's tree.
    std::ofstream(records) << R"({"schema":"headroom.step/1","pid":)" << ::getpid()
                           << R"(,"kind":"start","wall":1,"mono":1,"framework":"plain",)"
                              R"("signal":10,"request_file":false})"
                           << "\n";
  }
  ChildSpec spec;
  spec.command = {"/usr/bin/python3", "-c",
                  "import time, headroom\n"
                  "headroom.on_save(lambda s: 'saved-%d' % s)\n"
                  "for i in range(600):\n"
                  "    if headroom.step(i):\n"
                  "        break\n"
                  "    time.sleep(0.05)\n"};
  spec.extra_env = {"PYTHONPATH=" + testing::SourcePath("python"),
                    "HEADROOM_STEP_RECORDS=" + records};
  const SysRoot root("/");  // the child keeps a pointer to it
  auto child = Child::Spawn(root, std::move(spec));
  ASSERT_TRUE(child) << EnglishText(child.error().what);
  std::FILE* events_file = std::tmpfile();
  ASSERT_NE(events_file, nullptr);
  GuardEvents events(events_file);
  CheckpointOptions options;
  options.records_path = records;
  options.grace = std::chrono::milliseconds(1000);
  CheckpointAsker asker(SysRoot("/"), options, 0.0);
  constexpr uint64_t kWarn = 8 * kGiB, kKill = 4 * kGiB;
  // Wait (at most 30 s) for the job's own start record, above the warning level.
  double t = 0;
  for (int i = 0; i < 300; ++i, t += 0.1) {
    asker.Tick({t, 9 * kGiB, kWarn, kKill, 0, false}, *child, events);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ifstream in(records);
    std::string line;
    int starts = 0;
    while (std::getline(in, line)) starts += line.find("\"start\"") != std::string::npos;
    if (starts >= 2) break;
  }
  // Below the warning level, falling 100 MiB/s: 30 s to the kill level, a save needs 1 s.
  uint64_t available = 7 * kGiB;
  CheckpointSummary sum;
  for (int i = 0; i < 300; ++i, t += 0.1, available -= 10 * kMiB) {
    asker.Tick({t, available, kWarn, kKill, 0, false}, *child, events);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    sum = asker.Finish(events);
    if (sum.finished) break;
  }
  EXPECT_TRUE(sum.companion_seen);
  ASSERT_TRUE(sum.asked) << EnglishText(sum.not_asked);
  EXPECT_EQ(sum.processes_asked, 1);  // the job's process, not the decoy
  EXPECT_EQ(sum.how, "SIGUSR1");
  ASSERT_TRUE(sum.finished);
  EXPECT_TRUE(sum.ok);
  ASSERT_TRUE(sum.step);
  EXPECT_EQ(sum.path, "saved-" + std::to_string(*sum.step));
  EXPECT_EQ(sum.source, "loop");  // the real companion says what wrote it: on_save's function
  // Infinite (no value) while the readings span under half a second, else at least the need.
  if (sum.projected_s) {
    EXPECT_GE(*sum.projected_s, 1.0);
  }
  EXPECT_EQ(sum.need_s, 1.0);
  EXPECT_TRUE(sum.last_measured_s);
  // Once per crossing: still below the level, nothing more is asked.
  asker.Tick({t + 1, available, kWarn, kKill, 0, false}, *child, events);
  EXPECT_EQ(asker.Finish(events).processes_asked, 1);
  std::fclose(events_file);
}

TEST(AnnouncedAfterStart, ARecordOlderThanTheProcessIsAnothers) {
  // 100 ticks a second; the process started 50 s after boot.
  EXPECT_TRUE(AnnouncedAfterStart(50.2, 0.0, 5000, 100));
  EXPECT_TRUE(AnnouncedAfterStart(49.995, 0.0, 5000, 100));  // within the tick it is rounded to
  EXPECT_FALSE(AnnouncedAfterStart(49.5, 0.0, 5000, 100));   // written before it existed
  EXPECT_FALSE(AnnouncedAfterStart(1.0, 0.0, 5000, 100));
  // Field 22 counts time suspended, the record's clock does not: 2 s suspended since boot.
  EXPECT_TRUE(AnnouncedAfterStart(48.5, 2.0, 5000, 100));
  EXPECT_FALSE(AnnouncedAfterStart(47.5, 2.0, 5000, 100));
  EXPECT_FALSE(AnnouncedAfterStart(50.2, 0.0, 5000, 0));  // no clock: never trusted
}

// Records older than the guard (`guard --pid`, or a --step-records file already there): a
// start record naming the job's PID but written before the job's process existed (an earlier
// process that had the PID, whose handler this one may not have), more than the 1 MiB one read
// takes, and an earlier guard's save read after this guard asked. None of it is taken for the
// job's: the stale start record asks nothing of the process (which SIGUSR1 would end), the
// earlier save is not the one asked for, and the newest save in the file is the measured
// duration. The job's own companion, once it announces itself, is asked (request file).
TEST(CheckpointAsker, RecordsOlderThanTheGuardDoNotConfuseIt) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  testing::TempDir dir;
  const std::string records = dir.File("steps.jsonl");
  const std::string request = dir.File("save-request");
  const std::string go1 = dir.File("go1"), go2 = dir.File("go2");
  // The job: no companion (and SIGUSR1's default action) until go1, its start record then,
  // its steps after go2; each wait at most 30 s.
  ChildSpec spec;
  spec.command = {"/usr/bin/python3", "-c",
                  "import os, sys, time\n"
                  "def wait(p):\n"
                  "    for i in range(600):\n"
                  "        if os.path.exists(p):\n"
                  "            return\n"
                  "        time.sleep(0.05)\n"
                  "wait(sys.argv[1])\n"
                  "import headroom\n"
                  "headroom.on_save(lambda s: 'saved-%d' % s)\n"
                  "wait(sys.argv[2])\n"
                  "for i in range(600):\n"
                  "    if headroom.step(i):\n"
                  "        break\n"
                  "    time.sleep(0.05)\n",
                  go1, go2};
  spec.extra_env = {"PYTHONPATH=" + testing::SourcePath("python"),
                    "HEADROOM_STEP_RECORDS=" + records, "HEADROOM_CHECKPOINT_REQUEST=" + request,
                    "HEADROOM_CHECKPOINT_SIGNAL=none"};
  const SysRoot root("/");
  auto child = Child::Spawn(root, std::move(spec));
  ASSERT_TRUE(child) << EnglishText(child.error().what);
  const pid_t pid = child->pid();
  // ~Child kills and reaps the job on every way out of the test.
  const std::string head = R"({"schema":"headroom.step/1","pid":)";
  const std::string step = head + "1" + R"(,"kind":"step","step":1,"wall":4,"mono":4.0})";
  auto steps = [&](std::ofstream& out) {
    for (size_t bytes = 0; bytes < 3 * kMiB / 2; bytes += step.size() + 1) out << step << "\n";
  };
  {
    std::ofstream out(records);
    out << head << pid
        << R"(,"kind":"start","wall":1,"mono":1.0,"framework":"plain","signal":10,)"
           R"("request_file":false})"
        << "\n";
    steps(out);
    out << head << pid
        << R"(,"kind":"save_end","step":9,"wall":5,"mono":5.0,"reason":"scheduled",)"
           R"("duration_s":2.5,"path":"sched.pt","ok":true})"
        << "\n";
  }
  std::FILE* events_file = std::tmpfile();
  ASSERT_NE(events_file, nullptr);
  GuardEvents events(events_file);
  CheckpointOptions options;
  options.records_path = records;
  options.request_path = request;
  CheckpointAsker asker(root, options, 0.0);
  constexpr uint64_t kWarn = 8 * kGiB, kKill = 4 * kGiB;
  // Above the warning level, 100 ms apart: the backlog is read at every reading (1 MiB each),
  // not every 250 ms, so two readings have read all of it.
  double t = 0;
  constexpr uint64_t kAbove = kWarn + 100 * kMiB;
  asker.Tick({t, kAbove, kWarn, kKill, 0, false}, *child, events);
  asker.Tick({t += 0.1, kAbove, kWarn, kKill, 0, false}, *child, events);
  CheckpointSummary sum = asker.summary();
  EXPECT_TRUE(sum.companion_seen);
  ASSERT_TRUE(sum.last_measured_s);
  EXPECT_EQ(*sum.last_measured_s, 2.5);  // the newest save in the file
  // Below the warning level, falling 100 MiB/s (30 s to the kill level, a save needs 2.5 s):
  // the stale start record is all there is, and nothing is asked.
  uint64_t available = kWarn - 100 * kMiB;
  for (int i = 0; i < 20; ++i, available -= 10 * kMiB) {
    asker.Tick({t += 0.1, available, kWarn, kKill, 0, false}, *child, events);
  }
  sum = asker.summary();
  EXPECT_FALSE(sum.asked);
  EXPECT_EQ(EnglishText(sum.not_asked), "no companion process of the job could be asked");
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), 0);  // not signalled: still running
  EXPECT_FALSE(std::filesystem::exists(request));
  // The job's companion announces itself (and waits); then more than a read's worth of steps
  // and an earlier guard's save, with its time before this guard's ask.
  std::ofstream(go1) << "go\n";
  for (int i = 0; i < 300; ++i) {
    std::ifstream in(records);
    std::string line;
    int starts = 0;
    while (std::getline(in, line)) starts += line.find("\"start\"") != std::string::npos;
    if (starts >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  {
    std::ofstream out(records, std::ios::app);
    steps(out);
    out << head << pid << R"(,"kind":"save_start","step":3,"wall":6,"mono":6.0,"reason":"guard"})"
        << "\n"
        << head << pid
        << R"(,"kind":"save_end","step":3,"wall":6,"mono":6.5,"reason":"guard",)"
           R"("duration_s":7.5,"path":"old.pt","ok":true})"
        << "\n";
  }
  for (int i = 0; i < 5; ++i, t += 0.1, available -= 1 * kMiB) {
    asker.Tick({t, available, kWarn, kKill, 0, false}, *child, events);
  }
  sum = asker.summary();
  ASSERT_TRUE(sum.asked) << EnglishText(sum.not_asked);
  EXPECT_EQ(sum.how, "request file");
  EXPECT_EQ(sum.processes_asked, 1);
  EXPECT_EQ(sum.need_s, 2.5);
  EXPECT_FALSE(sum.started);  // the earlier guard's save is not this one
  EXPECT_FALSE(sum.finished);
  ASSERT_TRUE(sum.last_measured_s);
  EXPECT_EQ(*sum.last_measured_s, 7.5);  // but it is the newest measured
  EXPECT_TRUE(std::filesystem::exists(request));
  // The job steps, takes the request and saves.
  std::ofstream(go2) << "go\n";
  for (int i = 0; i < 300; ++i, t += 0.1, available -= 1 * kMiB) {
    asker.Tick({t, available, kWarn, kKill, 0, false}, *child, events);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (asker.summary().finished) break;
  }
  EXPECT_FALSE(std::filesystem::exists(request));  // taken by the job
  sum = asker.Finish(events);
  ASSERT_TRUE(sum.finished);
  EXPECT_TRUE(sum.ok);
  ASSERT_TRUE(sum.step);
  EXPECT_EQ(sum.path, "saved-" + std::to_string(*sum.step));
  ASSERT_TRUE(sum.last_measured_s);
  EXPECT_LT(*sum.last_measured_s, 7.5);  // this save's, measured by the job
  std::fclose(events_file);
}

// Nothing can be asked (--pid without --step-records): nothing is read, the summary says why
// from the start, and the events once per crossing.
TEST(CheckpointAsker, UnavailableSaysWhyAndAsksNothing) {
  if (::access("/bin/sleep", X_OK) != 0) GTEST_SKIP() << "no /bin/sleep";
  ChildSpec spec;
  spec.command = {"/bin/sleep", "30"};
  const SysRoot root("/");
  auto child = Child::Spawn(root, std::move(spec));
  ASSERT_TRUE(child) << EnglishText(child.error().what);
  // ~Child kills and reaps the job on every way out of the test.
  std::FILE* events_file = std::tmpfile();
  ASSERT_NE(events_file, nullptr);
  {
    GuardEvents events(events_file);
    CheckpointOptions options;
    options.unavailable = Msg("no step records: give --step-records FILE");
    CheckpointAsker asker(root, options, 0.0);
    EXPECT_EQ(EnglishText(asker.Finish(events).not_asked),
              "no step records: give --step-records FILE");
    constexpr uint64_t kWarn = 8 * kGiB, kKill = 4 * kGiB;
    double t = 0;
    for (uint64_t available : {9 * kGiB, 7 * kGiB, 6 * kGiB, 9 * kGiB, 7 * kGiB}) {
      asker.Tick({t += 0.1, available, kWarn, kKill, 1e9, false}, *child, events);
    }
    const CheckpointSummary sum = asker.Finish(events);
    EXPECT_FALSE(sum.asked);
    EXPECT_FALSE(sum.companion_seen);
    events.FlushAndFirstError();
  }
  std::rewind(events_file);
  int said = 0;
  char line[4096];
  while (std::fgets(line, sizeof line, events_file)) {
    const auto e = nlohmann::json::parse(line);
    if (e["type"] == "checkpoint_not_asked") {
      ++said;
      EXPECT_EQ(e["why"], "no step records: give --step-records FILE");
    }
  }
  EXPECT_EQ(said, 2);  // two crossings
  std::fclose(events_file);
}

}  // namespace
}  // namespace headroom
