// Checkpoint before the kill, for real (docs/guard.md): `headroom guard` around a real PyTorch
// loop (Debian's python3-torch under /usr/bin/python3, CPU) that leaks memory step by step and
// uses the companion (python/headroom). Memory safety as in guard_cli_test.cc: the levels are
// set from the settled MemAvailable of the moment (warning 1.25 GiB, kill 2.5 GiB below it),
// the leak is capped at 3.5 GiB and the loop ends by itself after 90 s; every process is the
// guard's, killed by it or ended by its own timeout. The suite fills memory: it is in
// HEADROOM_MEMORY_TESTS (RUN_SERIAL) and runs under flock /tmp/headroom-balloon.lock.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/bytes.h"
#include "run_cli.h"
#include "sys/meminfo.h"
#include "testing_files.h"
#include "testing_memory.h"
#include "testing_torch_jobs.h"

namespace headroom {
namespace {

using testing::FirstEvent;
using testing::HaveTorch;
using testing::ReadJsonLines;
using testing::RunCli;
using testing::SettledAvailable;
using testing::TempDir;
using testing::UnparsedLines;
namespace fs = std::filesystem;

struct LeakyRun {
  testing::CliResult result;
  nlohmann::json summary;
  std::vector<nlohmann::json> events;
};

// The leaky loop under a guard: levels below the settled MemAvailable, --json on stdout.
LeakyRun GuardLeakyLoop(const TempDir& dir, const std::string& ckpt, int leak_mib, double step_s,
                        const std::string& checkpoint_grace) {
  const uint64_t now = SettledAvailable();
  const uint64_t warn = now - 1280 * kMiB, kill = now - 2560 * kMiB;
  const std::string events = dir.File("events.jsonl");
  LeakyRun run;
  run.result = RunCli({"guard",
                       "--json",
                       "--no-journal",
                       "--min-available",
                       std::to_string(kill) + "B",
                       "--warn-available",
                       std::to_string(warn) + "B",
                       "--checkpoint-grace",
                       checkpoint_grace,
                       "--events",
                       events,
                       "--step-records",
                       dir.File("steps.jsonl"),
                       "--",
                       "sh",
                       "-c",
                       "exec \"$0\" \"$@\" >/dev/null",
                       "/usr/bin/python3",
                       testing::SourcePath("tests/tools/leaky_trainer.py"),
                       ckpt,
                       std::to_string(leak_mib),
                       std::to_string(step_s),
                       "3584",
                       "90"},
                      150000, {"PYTHONPATH=" + testing::SourcePath("python")});
  if (!run.result.out.empty()) run.summary = nlohmann::json::parse(run.result.out, nullptr, false);
  run.events = ReadJsonLines(events);
  return run;
}

TEST(GuardCheckpoint, ASlowLeakSavesAtTheWarningLevelThenIsKilled) {
  if (!HaveTorch()) GTEST_SKIP() << "no python3-torch under /usr/bin/python3";
  TempDir dir;
  const std::string ckpt = dir.File("ckpt.pt");
  // 24 MiB every 0.1 s: about 240 MiB/s, so the 1.25 GiB from the warning level to the kill
  // level takes about 5 s, and a save needs well under the 1 s granted.
  const LeakyRun run = GuardLeakyLoop(dir, ckpt, 24, 0.1, "1s");
  ASSERT_FALSE(run.summary.is_discarded()) << run.result.out << run.result.err;
  EXPECT_EQ(UnparsedLines(run.events), 0u);  // the guard writes whole lines
  EXPECT_EQ(run.result.status, 99) << run.result.err;
  EXPECT_EQ(run.summary["killed_by_guard"], true) << run.result.err;
  const auto& cp = run.summary["checkpoint"];
  ASSERT_TRUE(cp.is_object()) << run.result.out;
  EXPECT_EQ(cp["companion_seen"], true);
  ASSERT_EQ(cp["asked"], true) << cp.dump() << run.result.err;
  EXPECT_EQ(cp["how"], "SIGUSR1");
  EXPECT_EQ(cp["finished"], true) << cp.dump();
  EXPECT_EQ(cp["ok"], true) << cp.dump();
  EXPECT_EQ(cp["path"], ckpt);
  EXPECT_GE(cp["duration_s"].get<double>(), 0.0);
  EXPECT_LT(cp["asked_available_bytes"].get<uint64_t>(),
            run.summary["warn_below_bytes"].get<uint64_t>());
  // The order in the events: asked below the warning level, saved, then the kill.
  const int ask = FirstEvent(run.events, "checkpoint_ask");
  const int end = FirstEvent(run.events, "checkpoint_end");
  const int trigger = FirstEvent(run.events, "trigger");
  ASSERT_GE(ask, 0);
  ASSERT_GT(end, ask);
  ASSERT_GT(trigger, end);
  EXPECT_EQ(run.events[end]["path"], ckpt);
  // The checkpoint exists, loads with torch.load and holds the step it was taken at.
  ASSERT_TRUE(fs::exists(ckpt));
  const std::string got = dir.File("step.txt");
  const std::string load =
      "/usr/bin/python3 -c \"import torch, sys; "
      "print(torch.load(sys.argv[1])['step'])\" " +
      ckpt + " > " + got;
  ASSERT_EQ(std::system(load.c_str()), 0);
  std::ifstream in(got);
  int64_t step = -1;
  in >> step;
  EXPECT_EQ(step, cp["step"].get<int64_t>());
  EXPECT_GT(step, 0);
}

TEST(GuardCheckpoint, AFastFillIsKilledOnTimeWithNoSaveAsked) {
  if (!HaveTorch()) GTEST_SKIP() << "no python3-torch under /usr/bin/python3";
  TempDir dir;
  const std::string ckpt = dir.File("ckpt.pt");
  // 256 MiB per step, no pause: hundreds of MiB per second even on a loaded CI machine (170
  // MiB/s seen there), so the 1.25 GiB from the warning to the kill level go in a few seconds,
  // far less than the 60 s a save is granted (that would need a fill under 21 MiB/s).
  const LeakyRun run = GuardLeakyLoop(dir, ckpt, 256, 0.0, "60s");
  ASSERT_FALSE(run.summary.is_discarded()) << run.result.out << run.result.err;
  EXPECT_EQ(UnparsedLines(run.events), 0u);  // the guard writes whole lines
  EXPECT_EQ(run.result.status, 99) << run.result.err;
  EXPECT_EQ(run.summary["killed_by_guard"], true);
  const auto& cp = run.summary["checkpoint"];
  ASSERT_TRUE(cp.is_object());
  EXPECT_EQ(cp["asked"], false) << cp.dump();
  EXPECT_NE(cp["not_asked"].get<std::string>().find("a save needs 60.0 s"), std::string::npos)
      << cp.dump();
  EXPECT_EQ(FirstEvent(run.events, "checkpoint_ask"), -1);
  EXPECT_FALSE(fs::exists(ckpt));
  // On time: the signal within 100 ms of the reading that crossed the level.
  EXPECT_LT(run.summary["crossing_to_signal_ms"].get<double>(), 100.0);
}

// Not memory tests: the companion's wiring, with no pressure.
TEST(GuardCompanion, HooksWireTheTrainerCallbackWithoutCodeChanges) {
  TempDir dir;
  // A stand-in transformers package (the real one is not installable here) whose Trainer keeps
  // callbacks as transformers' CallbackHandler does.
  const fs::path fake = dir.File("site");
  fs::create_directories(fake / "transformers");
  std::ofstream(fake / "transformers" / "__init__.py") << "class TrainerCallback:\n    pass\n";
  std::ofstream(fake / "transformers" / "trainer.py") << R"PY(
class _Handler:
    def __init__(self):
        self.callbacks = []
class Trainer:
    def __init__(self):
        self.callback_handler = _Handler()
    def add_callback(self, c):
        self.callback_handler.callbacks.append(c)
)PY";
  // The job's own sitecustomize runs first, as with --torch-cap.
  std::ofstream(fake / "sitecustomize.py")
      << "import os\nopen(os.environ['CHAIN_OUT'], 'w').write('chained')\n";
  const std::string records = dir.File("steps.jsonl");
  const std::string job =
      "from transformers.trainer import Trainer\n"
      "t = Trainer()\n"
      "print(type(t.callback_handler.callbacks[0]).__name__)\n";
  // No PYTHONPATH to the companion: --hooks finds it relative to the binary (the source
  // tree's python/ beside the build folder).
  const auto r = RunCli({"guard", "--hooks", "--no-journal", "--min-available", "64M",
                         "--step-records", records, "--", "/usr/bin/python3", "-c", job},
                        60000, {"PYTHONPATH=" + fake.string(), "CHAIN_OUT=" + dir.File("chain")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("HeadroomCallback"), std::string::npos) << r.out << r.err;
  std::ifstream chain(dir.File("chain"));
  std::string chained;
  chain >> chained;
  EXPECT_EQ(chained, "chained");
  std::ifstream in(records);
  std::string first;
  std::getline(in, first);
  const auto start = nlohmann::json::parse(first);
  EXPECT_EQ(start["kind"], "start");
  EXPECT_EQ(start["framework"], "hooks");
  EXPECT_EQ(start["signal"], 10);
}

// python -S, -E and -I never run the sitecustomize --hooks installs: the guard says so in one
// line and runs the job, which indeed writes no record (guard/python_flags.h).
TEST(GuardCompanion, HooksSayWhenThePythonFlagsSkipThem) {
  TempDir dir;
  for (const std::string flag : {"-I", "-S", "-E", "-IS"}) {
    const std::string records = dir.File("steps" + flag + ".jsonl");
    const auto r =
        RunCli({"guard", "--hooks", "--no-journal", "--min-available", "64M", "--step-records",
                records, "--", "/usr/bin/python3", flag, "-c", "print('ran')"},
               60000, {"PYTHONPATH=" + testing::SourcePath("python")});
    ASSERT_EQ(r.status, 0) << flag << r.err;
    EXPECT_EQ(r.out, "ran\n") << flag;
    const std::string said =
        "headroom guard: --hooks: the job's python runs with " + flag.substr(0, 2) + " (";
    EXPECT_NE(r.err.find(said), std::string::npos) << flag << r.err;
    std::ifstream in(records);
    std::string first;
    EXPECT_FALSE(std::getline(in, first)) << flag << ": " << first;  // the hooks never ran
  }
  // Flags that leave the site module and PYTHONPATH alone: nothing said.
  const auto r = RunCli({"guard", "--hooks", "--no-journal", "--min-available", "64M", "--",
                         "/usr/bin/python3", "-u", "-c", "print('ran')", "-I"},
                        60000, {"PYTHONPATH=" + testing::SourcePath("python")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("--hooks:"), std::string::npos) << r.err;
}

TEST(GuardCompanion, RecordsAreKeptAndNothingIsAskedAboveTheWarningLevel) {
  TempDir dir;
  const std::string records = dir.File("steps.jsonl");
  const auto r = RunCli({"guard", "--json", "--no-journal", "--min-available", "64M",
                         "--step-records", records, "--", "/usr/bin/python3", "-c",
                         "import headroom\nfor i in range(3):\n    headroom.step(i, loss=1.0)\n"},
                        60000, {"PYTHONPATH=" + testing::SourcePath("python")});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["checkpoint"]["companion_seen"], true) << r.out;
  EXPECT_EQ(summary["checkpoint"]["asked"], false);
  EXPECT_TRUE(summary["checkpoint"]["not_asked"].is_null());
  std::ifstream in(records);
  int steps = 0;
  for (std::string line; std::getline(in, line);) {
    steps += nlohmann::json::parse(line)["kind"] == "step";
  }
  EXPECT_EQ(steps, 3);
}

TEST(GuardCompanion, BadCheckpointFlagsAreUsageErrors) {
  const auto sig = RunCli({"guard", "--checkpoint-signal", "SIGBOGUS", "--", "true"});
  EXPECT_EQ(sig.status, 2);
  EXPECT_NE(sig.err.find("--checkpoint-signal: 'SIGBOGUS' is not a signal name"), std::string::npos)
      << sig.err;
  const auto kill = RunCli({"guard", "--checkpoint-signal", "KILL", "--", "true"});
  EXPECT_EQ(kill.status, 2) << kill.err;
  const auto grace = RunCli({"guard", "--checkpoint-grace", "soon", "--", "true"});
  EXPECT_EQ(grace.status, 2);
  EXPECT_NE(grace.err.find("--checkpoint-grace"), std::string::npos) << grace.err;
  const auto pid = RunCli({"guard", "--hooks", "--pid", "1"});
  EXPECT_EQ(pid.status, 2);
  EXPECT_NE(pid.err.find("--hooks"), std::string::npos) << pid.err;
}

}  // namespace
}  // namespace headroom
