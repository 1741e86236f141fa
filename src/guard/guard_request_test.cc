// The guard's request turned into options: levels and flags carried over, --grace and --pid
// parsed with errors naming the flag, the recorded command for --pid, and the torch cap's
// size (the room above the kill level) and place, refused for an attached process; an attached
// job's checkpoint from the records and request file it was started with.
#include "guard/guard_request.h"

#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <vector>

#include "base/bytes.h"

namespace headroom {
namespace {

GuardRequest Job() {
  GuardRequest r;
  r.command = {"python", "train.py"};
  r.min_available_bytes = 8 * kGiB;
  r.warn_available_bytes = 16 * kGiB;
  return r;
}

TEST(GuardRequest, OptionsCarryTheLevelsAndFlags) {
  GuardRequest r = Job();
  r.grace = "500ms";
  r.psi_kill = true;
  r.use_cgroup = false;
  auto opt = GuardOptionsFor(r);
  ASSERT_TRUE(opt) << EnglishText(opt.error().what);
  EXPECT_EQ(opt->command, r.command);
  EXPECT_EQ(opt->min_available_bytes, 8 * kGiB);
  EXPECT_EQ(opt->warn_available_bytes, 16 * kGiB);
  EXPECT_EQ(opt->grace, std::chrono::milliseconds(500));
  EXPECT_TRUE(opt->psi_kill);
  EXPECT_FALSE(opt->use_cgroup);
  EXPECT_FALSE(opt->attach_pid);
  r.grace = "0";  // SIGKILL at once
  ASSERT_TRUE(GuardOptionsFor(r));
  EXPECT_EQ(GuardOptionsFor(r)->grace, std::chrono::milliseconds(0));
}

TEST(GuardRequest, GraceAndPidErrorsNameTheFlag) {
  GuardRequest r = Job();
  r.grace = "soon";
  auto bad = GuardOptionsFor(r);
  ASSERT_FALSE(bad);
  EXPECT_EQ(EnglishText(bad.error().what).rfind("--grace: 'soon' is not a duration", 0), 0u)
      << EnglishText(bad.error().what);
  r = Job();
  r.command.clear();
  for (const std::string pid : {"0", "-4", "12x", "4194305"}) {
    r.pid = pid;
    bad = GuardOptionsFor(r);
    ASSERT_FALSE(bad) << pid;
    EXPECT_EQ(EnglishText(bad.error().what), "--pid: '" + pid + "' is not a process id");
  }
  r.pid = "4194304";  // 2^22, the largest pid_max
  auto opt = GuardOptionsFor(r);
  ASSERT_TRUE(opt);
  EXPECT_EQ(opt->attach_pid, 4194304);
}

TEST(GuardRequest, TheRunRecordsItsCommandJournalAndEvents) {
  GuardRequest r = Job();
  r.events_path = "/tmp/events.jsonl";
  r.journal = Result<std::filesystem::path>(std::filesystem::path("/var/j.db"));
  GuardStartRecord who;
  who.guard_pid = 1234;
  auto o = GuardedRunFor(r, *GuardOptionsFor(r), 100 * kGiB, who);
  ASSERT_TRUE(o) << EnglishText(o.error().what);
  EXPECT_EQ(o->events_path, "/tmp/events.jsonl");
  ASSERT_TRUE(o->journal && *o->journal);
  EXPECT_EQ(**o->journal, "/var/j.db");
  EXPECT_EQ(o->recorded_command, r.command);
  EXPECT_EQ(o->guard_start.guard_pid, 1234);
  EXPECT_EQ(o->guard.min_available_bytes, 8 * kGiB);
  EXPECT_FALSE(o->torch_cap);

  r.command.clear();
  r.pid = "77";
  r.journal.reset();  // --no-journal
  o = GuardedRunFor(r, *GuardOptionsFor(r), 100 * kGiB, who);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->recorded_command, (std::vector<std::string>{"--pid", "77"}));
  EXPECT_FALSE(o->journal);
}

TEST(GuardRequest, TheTorchCapIsTheRoomAboveTheKillLevel) {
  GuardRequest r = Job();
  r.torch_cap = true;
  r.torch_cap_place = {"", "/opt/lib"};
  auto o = GuardedRunFor(r, *GuardOptionsFor(r), 100 * kGiB, {});
  ASSERT_TRUE(o) << EnglishText(o.error().what);
  ASSERT_TRUE(o->torch_cap);
  EXPECT_EQ(o->torch_cap->cap_bytes, 92 * kGiB);
  EXPECT_EQ(o->torch_cap->tmp_dir, "/tmp");  // TMPDIR unset or empty
  EXPECT_EQ(o->torch_cap->pythonpath, "/opt/lib");
  r.torch_cap_place = {"/scratch", ""};
  o = GuardedRunFor(r, *GuardOptionsFor(r), 4 * kGiB, {});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->torch_cap->cap_bytes, 0u);  // already below the level
  EXPECT_EQ(o->torch_cap->tmp_dir, "/scratch");

  r.command.clear();
  r.pid = "77";
  o = GuardedRunFor(r, *GuardOptionsFor(r), 100 * kGiB, {});
  ASSERT_FALSE(o);
  EXPECT_EQ(EnglishText(o.error().what),
            "--torch-cap: applies to a job started by the guard, not --pid");
}

GuardRequest Attached() {
  GuardRequest r = Job();
  r.command.clear();
  r.pid = "77";
  return r;
}

TEST(GuardRequest, AnAttachedJobsCheckpointUsesTheRecordsAndRequestFileItWasStartedWith) {
  GuardRequest r = Attached();
  r.step_records_path = "/scratch/steps.jsonl";
  r.checkpoint_request_path = "/scratch/save-request";
  r.checkpoint_signal = "USR2";
  r.checkpoint_grace = "2s";
  auto opt = GuardOptionsFor(r);
  ASSERT_TRUE(opt) << EnglishText(opt.error().what);
  ASSERT_TRUE(opt->checkpoint);
  EXPECT_EQ(opt->checkpoint->records_path, "/scratch/steps.jsonl");
  EXPECT_EQ(opt->checkpoint->request_path, "/scratch/save-request");
  EXPECT_EQ(opt->checkpoint->signal, SIGUSR2);
  EXPECT_EQ(opt->checkpoint->grace, std::chrono::milliseconds(2000));
  EXPECT_TRUE(opt->checkpoint->unavailable.empty());
  // --step-records is no longer refused with --pid; the guard sets up no companion of its own.
  auto o = GuardedRunFor(r, *opt, 100 * kGiB, {});
  ASSERT_TRUE(o) << EnglishText(o.error().what);
  EXPECT_FALSE(o->companion);
  ASSERT_TRUE(o->guard.checkpoint);
  EXPECT_EQ(o->guard.checkpoint->records_path, "/scratch/steps.jsonl");
  // The signal only: no request file unless one is named.
  r.checkpoint_request_path.clear();
  r.checkpoint_signal = "SIGUSR1";
  opt = GuardOptionsFor(r);
  ASSERT_TRUE(opt);
  EXPECT_EQ(opt->checkpoint->request_path, "");
  EXPECT_EQ(opt->checkpoint->signal, SIGUSR1);
  // --no-checkpoint: nothing at all, as for a job the guard starts.
  r.checkpoint = false;
  EXPECT_FALSE(GuardOptionsFor(r)->checkpoint);
}

TEST(GuardRequest, AnAttachedJobWithoutStepRecordsSaysWhyNothingCanBeAsked) {
  auto opt = GuardOptionsFor(Attached());
  ASSERT_TRUE(opt);
  ASSERT_TRUE(opt->checkpoint);
  EXPECT_EQ(EnglishText(opt->checkpoint->unavailable),
            "no step records: give --step-records FILE, the HEADROOM_STEP_RECORDS the job was "
            "started with");
  // A job the guard starts always has its records.
  opt = GuardOptionsFor(Job());
  ASSERT_TRUE(opt && opt->checkpoint);
  EXPECT_TRUE(opt->checkpoint->unavailable.empty());
}

TEST(GuardRequest, AttachedCheckpointErrorsNameTheFlag) {
  // No signal and no request file: no way to ask.
  GuardRequest r = Attached();
  r.step_records_path = "/scratch/steps.jsonl";
  r.checkpoint_signal = "none";
  auto bad = GuardOptionsFor(r);
  ASSERT_FALSE(bad);
  EXPECT_EQ(EnglishText(bad.error().what).rfind("--checkpoint-signal none: ", 0), 0u)
      << EnglishText(bad.error().what);
  EXPECT_NE(EnglishText(bad.error().what).find("--checkpoint-request FILE"), std::string::npos);
  r.checkpoint_request_path = "/scratch/save-request";
  EXPECT_TRUE(GuardOptionsFor(r));
  // --checkpoint-request is the attached job's: a job the guard starts gets its own.
  GuardRequest spawned = Job();
  spawned.checkpoint_request_path = "/scratch/save-request";
  bad = GuardOptionsFor(spawned);
  ASSERT_FALSE(bad);
  EXPECT_EQ(EnglishText(bad.error().what).rfind("--checkpoint-request: applies to --pid", 0), 0u)
      << EnglishText(bad.error().what);
  // --hooks acts at the interpreter's start: never for --pid, and the error names it.
  r = Attached();
  r.hooks = true;
  auto o = GuardedRunFor(r, *GuardOptionsFor(r), 100 * kGiB, {});
  ASSERT_FALSE(o);
  EXPECT_EQ(EnglishText(o.error().what),
            "--hooks: applies to a job started by the guard, not --pid");
}

}  // namespace
}  // namespace headroom
