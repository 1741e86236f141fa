// watch's flags parsed by their own definitions, --interval's configured default and its
// minimum, and --events/--log as durable files with errors naming the flag.
#include "cli/watch_flags.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <string>

#include "base/bytes.h"
#include "config/settings.h"
#include "guard/guard.h"
#include "testing_files.h"
#include "testing_memory.h"

namespace headroom {
namespace {

using std::chrono::milliseconds;
using testing::kTotalPool;

TEST(WatchFlags, TheDefinitionsWriteTheFlags) {
  WatchFlags f;
  CLI::App app;
  AddWatchFlags(app, f);
  app.parse("--interval 1s --events e.jsonl --log job.log --guard --no-journal -- python t.py",
            false);
  EXPECT_EQ(f.interval_text, "1s");
  EXPECT_EQ(f.out_path, "samples.csv");  // the default
  EXPECT_EQ(f.events_path, "e.jsonl");
  EXPECT_EQ(f.log_path, "job.log");
  EXPECT_TRUE(f.guard);
  EXPECT_TRUE(f.no_journal);
  EXPECT_EQ(f.command, (std::vector<std::string>{"python", "t.py"}));
}

TEST(WatchFlags, TheIntervalIsTheFlagsElseTheConfiguredOneAtLeast100ms) {
  EXPECT_EQ(WatchIntervalFlag(CliEnv{}, ""), milliseconds(30000));
  EXPECT_EQ(WatchIntervalFlag(CliEnv{}, "250ms"), milliseconds(250));
  CliEnv env;
  env.config.settings = ResolveSettings(nullptr, [](const char*) -> const char* { return nullptr; },
                                        {{SettingId::kWatchInterval, "2s"}})
                            .settings;
  EXPECT_EQ(WatchIntervalFlag(env, ""), milliseconds(2000));
  try {
    WatchIntervalFlag(CliEnv{}, "50ms");
    ADD_FAILURE() << "below the minimum must throw";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.message, "--interval: 50ms is below the minimum of 100ms");
  }
}

TEST(WatchFlags, DurableLinesAreNoneForNoPathAndAnErrorNamesTheFlag) {
  EXPECT_FALSE(DurableLinesFlag("", "--events", milliseconds(5000)));
  testing::TempDir dir("watch-flags");
  auto lines = DurableLinesFlag(dir.File("events.jsonl"), "--events", milliseconds(5000));
  ASSERT_TRUE(lines);
  EXPECT_TRUE(std::filesystem::exists(dir / "events.jsonl"));
  try {
    DurableLinesFlag(dir.File("no-such-dir/job.log"), "--log", milliseconds(5000));
    ADD_FAILURE() << "an unwritable file must throw";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.message.rfind("--log: ", 0), 0u) << e.message;
  }
}

TEST(WatchFlags, WithoutNvmlTheGpuIsNoneAndTheHeaderSaysWhy) {
  CliEnv env;
  env.err = std::tmpfile();
  ASSERT_NE(env.err, nullptr);
  std::vector<std::string> notes;
  EXPECT_EQ(GpuFromFlag(env, "/nonexistent/libnvidia-ml.so.1", notes), nullptr);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("; GPU columns are empty"), std::string::npos) << notes[0];
  EXPECT_GT(std::ftell(env.err), 0);  // the line on stderr
  std::fclose(env.err);
}

TEST(WatchFlags, TheJobIsGuardedAtTheConfiguredLevelsOnlyWithGuard) {
  WatchFlags f;
  f.command = {"python", "t.py"};
  GuardOptions opt = WatchGuardOptions(CliEnv{}, f, kTotalPool);
  EXPECT_EQ(opt.command, f.command);
  EXPECT_EQ(opt.min_available_bytes, 0u);  // never killed
  EXPECT_EQ(opt.warn_available_bytes, 0u);
  f.guard = true;
  opt = WatchGuardOptions(CliEnv{}, f, kTotalPool);
  EXPECT_EQ(opt.min_available_bytes, DefaultKillLevelBytes(kTotalPool));
  EXPECT_EQ(opt.warn_available_bytes, 2 * DefaultKillLevelBytes(kTotalPool));
  EXPECT_TRUE(opt.extra_env.empty());  // no log: no step records
  EXPECT_FALSE(opt.checkpoint);
  // With a log, the companion's records go beside it; the guard may ask for a checkpoint.
  f.log_path = "/runs/train.log";
  opt = WatchGuardOptions(CliEnv{}, f, kTotalPool);
  EXPECT_EQ(opt.extra_env,
            (std::vector<std::string>{"HEADROOM_STEP_RECORDS=/runs/train.log.steps.jsonl",
                                      "HEADROOM_CHECKPOINT_SIGNAL=10"}));
  ASSERT_TRUE(opt.checkpoint);
  EXPECT_EQ(opt.checkpoint->records_path, "/runs/train.log.steps.jsonl");
  f.guard = false;
  opt = WatchGuardOptions(CliEnv{}, f, kTotalPool);
  EXPECT_EQ(opt.extra_env.back(), "HEADROOM_CHECKPOINT_SIGNAL=none");
  EXPECT_FALSE(opt.checkpoint);
}

TEST(WatchFlags, TheRunIsRecordedUnlessNoJournal) {
  testing::TempDir dir("watch-flags");
  CliEnv env;
  env.err = std::tmpfile();
  ASSERT_NE(env.err, nullptr);
  WatchFlags f;
  f.journal_flag = dir.File("journal.db");
  f.no_journal = true;
  EXPECT_FALSE(WatchRecordFromFlags(env, f).id());
  EXPECT_FALSE(std::filesystem::exists(dir / "journal.db"));
  f.no_journal = false;
  WatchRecord record = WatchRecordFromFlags(env, f);
  EXPECT_TRUE(record.id());
  EXPECT_TRUE(std::filesystem::exists(dir / "journal.db"));
  EXPECT_GT(std::ftell(env.err), 0);  // "run N in PATH"
  record.Finish("stopped", 0, 0);
  std::fclose(env.err);
}

}  // namespace
}  // namespace headroom
