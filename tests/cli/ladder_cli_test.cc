// CLI tests of `headroom ladder`: whole ladders driven through the real binary, the journal
// in a temporary directory, the flush only ever written to a fixture tree's drop_caches.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run_cli.h"
#include "store/journal.h"
#include "sys/meminfo.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::CliResult;
using testing::RunCli;
namespace fs = std::filesystem;

// A journal and a fixture root (meminfo from gb10-pagecache, a drop_caches file holding 0).
class LadderCli : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("headroom-ladder-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "root/proc/sys/vm");
    fs::copy_file(fs::path(testing::FixturePath("gb10-pagecache/proc/meminfo")),
                  dir_ / "root/proc/meminfo");
    std::ofstream(dir_ / "root/proc/sys/vm/drop_caches") << "0\n";
    journal_ = (dir_ / "journal.db").string();
    root_ = (dir_ / "root").string();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  CliResult Ladder(std::vector<std::string> args) {
    std::vector<std::string> full{"ladder", "--journal", journal_, "--root", root_};
    full.insert(full.end(), args.begin(), args.end());
    return RunCli(full);
  }
  nlohmann::json Status() {
    const auto r = Ladder({"--json"});
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
  std::string DropCaches() {
    std::ifstream in(dir_ / "root/proc/sys/vm/drop_caches");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Runs through /bin/sh with stdin from /dev/null (never a terminal); output merged.
  CliResult Shell(const std::string& prefix, const std::string& args) {
    const std::string cmd = prefix + " '" + std::string(HEADROOM_BINARY) + "' ladder --journal '" +
                            journal_ + "' --root '" + root_ + "' " + args + " </dev/null 2>&1";
    CliResult r;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int status = pclose(p);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
  }

  fs::path dir_;
  std::string journal_;
  std::string root_;
};

const char* kPlanArgs = "llama-3.1-8b --method lora --seq 65536 --batch 8 --budget 40GB";

TEST_F(LadderCli, WholeLadderSolvedAtStepTwoWithPlanNumbers) {
  auto r = Ladder({"start", "myjob", "--symptom", "step", "--plan-args", kPlanArgs});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("step 1 of 4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Cached"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("echo 3 > /proc/sys/vm/drop_caches"), std::string::npos) << r.out;

  r = Ladder({"record", "myjob", "--result", "oom", "--note", "still OOM after flush"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("step 2 of 4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--seq"), std::string::npos) << r.out;

  auto j = Status();
  ASSERT_EQ(j["ladders"].size(), 1u);
  const auto& l = j["ladders"][0];
  EXPECT_EQ(l["step"], 2);
  EXPECT_EQ(l["status"], "open");
  const auto& entered = l["entries"].back();
  EXPECT_EQ(entered["kind"], "entered");
  EXPECT_EQ(entered["step"], 2);
  ASSERT_FALSE(entered["evidence"]["advice"].empty()) << entered.dump();
  EXPECT_EQ(entered["evidence"]["advice"][0]["step"], "seq");
  EXPECT_LT(entered["evidence"]["advice"][0]["value"].get<int64_t>(), 65536);
  EXPECT_EQ(l["entries"][1]["result"], "oom");
  EXPECT_EQ(l["entries"][1]["note"], "still OOM after flush");
  EXPECT_FALSE(l["entries"][1]["at"].get<std::string>().empty());

  r = Ladder({"record", "myjob", "--result", "ok"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("solved at step 2"), std::string::npos) << r.out;
  EXPECT_TRUE(Status()["ladders"].empty());
  r = Ladder({"record", "myjob", "--result", "ok"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("headroom: ladder: record: job 'myjob' has no open ladder"),
            std::string::npos)
      << r.err;
}

// --plan-args "--from FILE" with a path relative to where `ladder start` runs: the journal
// records the absolute path, the note names the keys the file has that the plan does not
// model, and the file is read once: later steps plan from the request the journal keeps, from
// another folder, even after the file is gone.
TEST_F(LadderCli, PlanArgsFromARunConfigAreRecordedAbsoluteAndReadOnce) {
  fs::create_directories(dir_ / "run");
  fs::copy_file(testing::FixturePath("run_configs/axolotl/qwen3-32b-qlora.yaml"),
                dir_ / "run/axolotl.yaml");
  const std::string file = (dir_ / "run/axolotl.yaml").string();
  auto r =
      Shell("cd '" + (dir_ / "run").string() + "' && HF_HUB_CACHE=/nonexistent/hub",
            "start q --symptom step --plan-args '--from axolotl.yaml --seq 65536 --budget 40GB'");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("step 1 of 4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("from " + file + " (axolotl): not modelled: " +
                       "gradient_checkpointing: offload (with an adapter every activation is "
                       "offloaded: planned as --grad-ckpt off), optimizer: "
                       "adamw_torch_4bit, lora_mlp_kernel, lora_qkv_kernel, lora_o_kernel"),
            std::string::npos)
      << r.out;
  auto j = Status();
  ASSERT_EQ(j["ladders"].size(), 1u);
  EXPECT_EQ(j["ladders"][0]["plan_args"], "--from " + file + " --seq 65536 --budget 40GB");

  fs::remove(file);
  r = Ladder({"record", "q", "--result", "oom"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("step 2 of 4"), std::string::npos) << r.out;
  j = Status();
  const auto& entered = j["ladders"][0]["entries"].back();
  EXPECT_EQ(entered["step"], 2);
  EXPECT_FALSE(entered["evidence"].contains("error")) << entered.dump();
  ASSERT_FALSE(entered["evidence"]["advice"].empty()) << entered.dump();
  EXPECT_EQ(entered["evidence"]["advice"][0]["step"], "seq");
  EXPECT_LT(entered["evidence"]["advice"][0]["value"].get<int64_t>(), 65536);

  // At start a file that is gone is a usage error naming it, and no ladder is begun.
  r = Ladder({"start", "g", "--symptom", "step", "--plan-args", "--from " + file});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("headroom: ladder: start: --plan-args: --from: "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(Status()["ladders"].size(), 1u);
}

// The journal keeps the plan request in its JSON form (schema version 5), and a ladder
// written before it (plan's flags as words, no plan_request) is still planned from its words.
TEST_F(LadderCli, PlanRequestIsStoredAsJsonAndOldRowsAreReadFromTheirWords) {
  ASSERT_EQ(Ladder({"start", "new", "--symptom", "step", "--plan-args", kPlanArgs}).status, 0);
  ASSERT_EQ(Ladder({"start", "old", "--symptom", "step", "--plan-args", kPlanArgs}).status, 0);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(journal_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT plan_request FROM ladders WHERE job = 'new'", -1, &st,
                               nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  const auto request =
      nlohmann::json::parse(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  EXPECT_EQ(request["schema_version"], 1);
  EXPECT_EQ(request["model"], "llama-3.1-8b");
  EXPECT_EQ(request["seq"], 65536);
  EXPECT_EQ(request["batch"], 8);
  EXPECT_EQ(request["budget_bytes"], 40'000'000'000ULL);
  EXPECT_FALSE(request.contains("root"));  // the reading command's --root, as before
  // What a version 4 headroom wrote: the words only.
  ASSERT_EQ(sqlite3_exec(db, "UPDATE ladders SET plan_request = NULL WHERE job = 'old'", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  for (const char* job : {"new", "old"}) {
    ASSERT_EQ(Ladder({"record", job, "--result", "oom"}).status, 0) << job;
  }
  const auto j = Status();
  ASSERT_EQ(j["ladders"].size(), 2u);
  for (const auto& l : j["ladders"]) {
    EXPECT_EQ(l["plan_args"], kPlanArgs);
    const auto& entered = l["entries"].back();
    EXPECT_FALSE(entered["evidence"].contains("error")) << entered.dump();
    ASSERT_FALSE(entered["evidence"]["advice"].empty()) << entered.dump();
    EXPECT_EQ(entered["evidence"]["advice"][0]["step"], "seq");
  }
  EXPECT_EQ(j["ladders"][0]["entries"].back()["evidence"],
            j["ladders"][1]["entries"].back()["evidence"]);
}

// A stored request edited by hand into nonsense: the step is entered without numbers, and
// why is its evidence.
TEST_F(LadderCli, AHostileStoredPlanRequestIsEvidenceNotACrash) {
  ASSERT_EQ(Ladder({"start", "bad", "--symptom", "step", "--plan-args", kPlanArgs}).status, 0);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(journal_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE ladders SET plan_request = "
                         "'{\"schema_version\": 1, \"model\": \"llama-3.1-8b\", \"batch\": \"x\"}'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const auto r = Ladder({"record", "bad", "--result", "oom"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto entered = Status()["ladders"][0]["entries"].back();
  EXPECT_EQ(entered["evidence"]["error"], "--plan-args: plan request: \"batch\" is not an integer")
      << entered.dump();
}

TEST_F(LadderCli, SkipRefusedWithoutForceAndRecordedWithIt) {
  ASSERT_EQ(Ladder({"start", "myjob", "--symptom", "load"}).status, 0);
  auto r = Ladder({"next", "myjob"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("headroom: ladder: next: step 1 (flush-page-cache) has no result"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(Status()["ladders"][0]["step"], 1);
  r = Ladder({"next", "myjob", "--force", "--note", "flushed by hand"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto l = Status()["ladders"][0];
  EXPECT_EQ(l["step"], 2);
  EXPECT_EQ(l["entries"][1]["kind"], "skipped");
  EXPECT_EQ(l["entries"][1]["step"], 1);
  EXPECT_EQ(l["entries"][1]["note"], "flushed by hand");
  // An OOM while loading: the packing step says it matters less, and is still step 2.
  EXPECT_NE(l["entries"][2]["evidence"]["symptom_note"].get<std::string>().find("load peak"),
            std::string::npos);
}

TEST_F(LadderCli, QloraGoesToBf16LoraThenExhausts) {
  ASSERT_EQ(Ladder({"start", "q", "--symptom", "step", "--plan-args",
                    "llama-3.1-8b --method qlora --seq 4096 --budget 100GB"})
                .status,
            0);
  ASSERT_EQ(Ladder({"record", "q", "--result", "oom"}).status, 0);
  auto r = Ladder({"record", "q", "--result", "oom"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("bf16 LoRA"), std::string::npos) << r.out;
  auto l = Status()["ladders"][0];
  EXPECT_EQ(l["step"], 3);
  EXPECT_EQ(l["entries"].back()["evidence"]["downgrade"]["method"], "lora");
  EXPECT_GT(l["entries"].back()["evidence"]["downgrade"]["peak_bytes"].get<uint64_t>(), 0u);
  ASSERT_EQ(Ladder({"record", "q", "--result", "oom"}).status, 0);
  EXPECT_EQ(Ladder({"next", "q", "--force"}).status, 1);  // step 4 is the last
  r = Ladder({"record", "q", "--result", "oom"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("exhausted"), std::string::npos);
  EXPECT_TRUE(Status()["ladders"].empty());
}

TEST_F(LadderCli, TwoLaddersAreIndependentAndSurviveRestarts) {
  ASSERT_EQ(Ladder({"start", "a", "--symptom", "step"}).status, 0);
  ASSERT_EQ(Ladder({"start", "b", "--symptom", "load"}).status, 0);
  auto r = Ladder({"start", "a", "--symptom", "step"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("already has an open ladder"), std::string::npos) << r.err;
  ASSERT_EQ(Ladder({"record", "a", "--result", "oom"}).status, 0);
  // A fresh process finding the journal through HEADROOM_JOURNAL sees the same state.
  r = RunCli({"ladder", "--root", root_, "--json"}, 20000, {"HEADROOM_JOURNAL=" + journal_});
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["ladders"].size(), 2u);
  EXPECT_EQ(j["ladders"][0]["job"], "a");
  EXPECT_EQ(j["ladders"][0]["step"], 2);
  EXPECT_EQ(j["ladders"][1]["job"], "b");
  EXPECT_EQ(j["ladders"][1]["step"], 1);
  r = Ladder({});
  EXPECT_NE(r.out.find("job 'a'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 2 of 4"), std::string::npos) << r.out;
}

TEST_F(LadderCli, UsageErrorsExitTwo) {
  auto r = Ladder({"start", "j", "--symptom", "boot"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("headroom: ladder: start: --symptom: 'boot' is not load or step"),
            std::string::npos)
      << r.err;
  r = Ladder({"start", "j", "--symptom", "step", "--plan-args", "no-such-model --seq 2048"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--plan-args"), std::string::npos) << r.err;
  EXPECT_EQ(Ladder({"record", "j", "--result", "maybe"}).status, 2);
  EXPECT_TRUE(Status()["ladders"].empty());
  r = RunCli({"ladder", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("exit status"), std::string::npos);
}

TEST_F(LadderCli, ApplyRefusedWhileTheJobRuns) {
  ASSERT_EQ(Ladder({"start", "myjob", "--symptom", "step"}).status, 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/bin/bash", "bash", "-c", "exec -a train-myjob sleep 30", static_cast<char*>(nullptr));
    _exit(127);
  }
  // The fixture's proc/ holds the job's real /proc entry: found like on a real system, and
  // even a wrong answer writes only the fixture's drop_caches.
  fs::create_directory_symlink("/proc/" + std::to_string(pid),
                               dir_ / "root/proc" / std::to_string(pid));
  std::string cmdline;
  for (int i = 0; i < 100 && cmdline.find("train-myjob") == std::string::npos; ++i) {
    usleep(20000);  // until bash has exec'd
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
    std::getline(in, cmdline, '\n');
  }
  auto r = Ladder({"apply", "myjob", "--yes"});
  if (pid > 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.err.find("is running (pid " + std::to_string(pid)), std::string::npos) << r.err;
  EXPECT_EQ(DropCaches(), "0\n");
  // Gone now: a dangling link reads as no process.
  r = Ladder({"apply", "myjob", "--yes"});
  if (geteuid() == 0) {
    EXPECT_EQ(r.status, 0) << r.err;
  }
}

TEST_F(LadderCli, ApplyRefusedWithoutRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch to nobody with setpriv";
  if (system("command -v setpriv >/dev/null 2>&1") != 0) GTEST_SKIP() << "setpriv is not installed";
  ASSERT_EQ(Ladder({"start", "myjob", "--symptom", "step"}).status, 0);
  // nobody must reach the journal to be refused for the right reason.
  fs::permissions(dir_, fs::perms::all);
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.is_regular_file()) fs::permissions(e.path(), fs::perms::all);
  }
  auto r = Shell("setpriv --reuid=65534 --regid=65534 --clear-groups", "apply myjob --yes");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("headroom: ladder: apply: apply needs root"), std::string::npos) << r.out;
  EXPECT_EQ(DropCaches(), "0\n");
}

TEST_F(LadderCli, ApplyAsRootWritesTheFixtureAndRecordsMemAvailable) {
  if (geteuid() != 0) GTEST_SKIP() << "apply needs root";
  ASSERT_EQ(Ladder({"start", "myjob", "--symptom", "step"}).status, 0);
  auto r = Shell("", "apply myjob");  // not a terminal and no --yes
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("pass --yes"), std::string::npos) << r.out;
  EXPECT_EQ(DropCaches(), "0\n");
  r = Ladder({"apply", "myjob", "--yes"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(DropCaches(), "3");
  auto l = Status()["ladders"][0];
  EXPECT_EQ(l["step"], 1);  // the result comes from the next run
  const auto& applied = l["entries"].back();
  EXPECT_EQ(applied["kind"], "applied");
  EXPECT_EQ(applied["evidence"]["mem_available_before_bytes"], 120572027ull * 1024);
  EXPECT_EQ(applied["evidence"]["mem_available_after_bytes"], 120572027ull * 1024);
  // Past step 1 there is nothing to apply.
  ASSERT_EQ(Ladder({"record", "myjob", "--result", "oom"}).status, 0);
  r = Ladder({"apply", "myjob", "--yes"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("step 1 (the flush) only"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace headroom

namespace headroom {
namespace {

// `ladder` shows the resume command after a real guarded run whose checkpoint finished: the
// real guard around a real Python loop with the companion (python/headroom, its on_save), the
// run recorded in the ladder's real SQLite journal. No memory is filled: the warning level is
// all of MemTotal (so MemAvailable is below it from the first reading and, not falling, leaves
// time for a save) and the kill level 64 MiB; the loop ends by itself 3 steps after its save
// or after 20 s.
TEST_F(LadderCli, ShowsTheResumeCommandForTheLastGuardedRunsCheckpoint) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  const fs::path script = dir_ / "resume_loop.py";
  std::ofstream(script) << R"PY(
import sys, time, headroom
out = sys.argv[1]
def save(step):
    path = "%s/ckpt-%d.txt" % (out, step)
    with open(path, "w") as f:
        f.write(str(step))
    return path
headroom.on_save(save)
saved, step, deadline = None, 0, time.monotonic() + 20
while time.monotonic() < deadline and (saved is None or step < saved + 3):
    step += 1
    if headroom.step(step, loss=0.5):
        saved = step
    time.sleep(0.05)
)PY";
  auto r = Ladder({"start", "trainjob", "--symptom", "step", "--match", "resume_loop.py"});
  ASSERT_EQ(r.status, 0) << r.err;
  // Before any guarded run of the job: no checkpoint.
  EXPECT_TRUE(Status()["ladders"][0]["checkpoint"].is_null());

  const auto info = ReadMemInfo(SysRoot("/"));
  ASSERT_TRUE(info && info->total_bytes());
  const auto guard = RunCli(
      {"guard", "--json", "--journal", journal_, "--min-available", "64MiB", "--warn-available",
       // Always warning: a MiB below MemTotal (a level at MemTotal is refused).
       std::to_string(*info->total_bytes() - (1ULL << 20)) + "B", "--checkpoint-grace", "1s",
       "--step-records", (dir_ / "steps.jsonl").string(), "--", "/usr/bin/python3", script.string(),
       dir_.string()},
      60000, {"PYTHONPATH=" + testing::SourcePath("python")});
  ASSERT_EQ(guard.status, 0) << guard.out << guard.err;
  const auto summary = nlohmann::json::parse(guard.out, nullptr, false);
  ASSERT_TRUE(summary.is_object()) << guard.out;
  const auto& cp = summary["checkpoint"];
  ASSERT_EQ(cp["finished"], true) << cp.dump() << guard.err;
  ASSERT_EQ(cp["ok"], true) << cp.dump();
  const int64_t step = cp["step"].get<int64_t>();
  const std::string path = (dir_ / ("ckpt-" + std::to_string(step) + ".txt")).string();
  ASSERT_EQ(cp["path"], path);
  EXPECT_EQ(cp["source"], "loop");
  ASSERT_TRUE(fs::exists(path));

  const auto l = Status()["ladders"][0];
  const auto& c = l["checkpoint"];
  ASSERT_TRUE(c.is_object()) << l.dump();
  EXPECT_EQ(c["path"], path);
  EXPECT_EQ(c["step"], step);
  EXPECT_EQ(c["next_step"], step + 1);
  EXPECT_EQ(c["framework"], "loop");
  EXPECT_EQ(c["source"], "loop");
  EXPECT_GT(c["run_id"].get<int64_t>(), 0);
  ASSERT_EQ(c["resume"].size(), 1u);
  EXPECT_EQ(c["resume"][0], "torch.load(\"" + path + "\")");

  r = Ladder({});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("saved step " + std::to_string(step) + " at " + path), std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find("torch.load(\"" + path + "\") and resume at step " + std::to_string(step + 1)),
      std::string::npos)
      << r.out;

  // Another job's ladder sees none of it.
  ASSERT_EQ(Ladder({"start", "otherjob", "--symptom", "load", "--match", "other.py"}).status, 0);
  const nlohmann::json status = Status();  // kept: a range over a temporary's member dangles
  for (const auto& each : status["ladders"]) {
    if (each["job"] == "otherjob") {
      EXPECT_TRUE(each["checkpoint"].is_null()) << each.dump();
    }
  }
}

// A run recorded by a Trainer callback's companion (source "transformers") and one whose
// records did not say (an older companion): the Trainer's resume call and script flag, and
// for the other the path and the step with the framework said to be unknown.
TEST_F(LadderCli, TheResumeCommandFollowsWhatWroteTheCheckpoint) {
  ASSERT_EQ(Ladder({"start", "hf", "--symptom", "step", "--match", "sft.py"}).status, 0);
  ASSERT_EQ(Ladder({"start", "old", "--symptom", "step", "--match", "old.py"}).status, 0);
  {
    // Runs as the guard records them (store/journal.h), in the ladder's journal.
    auto journal = Journal::Open(journal_);
    ASSERT_TRUE(journal);
    auto record = [&](const std::string& script, const nlohmann::json& checkpoint) {
      auto id =
          journal->BeginRun(RunKind::kGuard, {"python3", script}, std::chrono::system_clock::now());
      ASSERT_TRUE(id);
      const nlohmann::json summary = {{"checkpoint", checkpoint}};
      ASSERT_TRUE(journal->FinishRun(*id, "killed-by-guard", 99, summary.dump(),
                                     std::chrono::system_clock::now()));
    };
    record("sft.py", {{"asked", true},
                      {"finished", true},
                      {"ok", true},
                      {"step", 120},
                      {"path", "/out/checkpoint-120"},
                      {"source", "transformers"}});
    record("old.py", {{"asked", true},
                      {"finished", true},
                      {"ok", true},
                      {"step", 7},
                      {"path", "/o/x.pt"},
                      {"source", nullptr}});
  }
  const nlohmann::json status = Status();
  for (const auto& l : status["ladders"]) {
    const auto& c = l["checkpoint"];
    ASSERT_TRUE(c.is_object()) << l.dump();
    if (l["job"] == "hf") {
      EXPECT_EQ(c["framework"], "transformers");
      EXPECT_EQ(c["resume"],
                nlohmann::json({"trainer.train(resume_from_checkpoint=\"/out/checkpoint-120\")",
                                "--resume_from_checkpoint /out/checkpoint-120"}));
      EXPECT_EQ(c["next_step"], 121);
    } else {
      EXPECT_EQ(c["framework"], "unknown");
      EXPECT_TRUE(c["resume"].empty());
      EXPECT_EQ(c["step"], 7);
    }
  }
  const auto r = Ladder({});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("resume (Transformers Trainer, TRL): "
                       "trainer.train(resume_from_checkpoint=\"/out/checkpoint-120\"), or a "
                       "script's --resume_from_checkpoint /out/checkpoint-120; training "
                       "continues at step 121"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("saved step 7 at /o/x.pt"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the framework that wrote it is not known"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace headroom
