// `headroom guardian` in the scenarios of issue 32's "Tested for real" that need more than the
// guardian and a balloon: a job in a cgroup of its own, and the one end-to-end case without
// --only, run in a PID namespace of its own where the whole machine the guardian sees is the
// test's processes. Like guardian_cli_test.cc, every test caps every balloon at a few hundred
// MiB (the namespace case at 2 GiB), sets its levels from the current MemAvailable, bounds
// every wait and reaps by pid.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "guard/job_cgroup.h"
#include "sys/process_survey.h"
#include "testing_children.h"
#include "testing_files.h"
#include "testing_guardian.h"
#include "testing_processes.h"

namespace headroom {
namespace {

using testing::Alive;
using testing::TempDir;

// The pids a balloon wrote to its --pidfile, less its own, once there are `n` (bounded: 10 s).
std::vector<pid_t> WorkerPids(const std::string& pidfile, pid_t parent, size_t n) {
  std::vector<pid_t> pids;
  for (int i = 0; i < 1000 && pids.size() < n; ++i) {
    pids.clear();
    std::ifstream in(pidfile);
    for (pid_t p; in >> p;)
      if (p != parent) pids.push_back(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pids;
}

// Workers that double-forked and called setsid: their parent is init (or a subreaper), their
// session their own; the cgroup the job was started in is all that still ties them to it.
TEST(GuardianScenarios, ADoubleForkedWorkerInTheJobsCgroupIsEndedWithTheJob) {
  TempDir dir("guardian-cgroup");
  auto cgroup =
      JobCgroup::Create(SysRoot("/"), "headroom-guardian-test-" + std::to_string(getpid()));
  ASSERT_TRUE(cgroup) << "no cgroup could be made: " << EnglishText(cgroup.error().what);
  if (!cgroup->is_v2()) GTEST_SKIP() << "no cgroup v2 here: the guardian reads v2 paths only";
  testing::StartedChild job(testing::Balloon({"--cap", "192M", "--children", "2", "--double-fork",
                                              "--setsid", "--pidfile", dir.File("pids")}),
                            {}, "", cgroup->procs_path());
  const std::vector<pid_t> workers = WorkerPids(dir.File("pids"), job.pid(), 2);
  ASSERT_EQ(workers.size(), 2u);
  for (const pid_t p : workers) {
    testing::WaitHeld(p, 90 << 10);
    const auto stat = ReadProcStat(SysRoot("/"), p);
    ASSERT_TRUE(stat);
    EXPECT_NE(stat->ppid, job.pid()) << p << " is still its parent's child";
    EXPECT_NE(stat->session, ReadProcStat(SysRoot("/"), job.pid())->session);
  }
  const auto text = SysRoot("/").ReadFile("proc/" + std::to_string(job.pid()) + "/cgroup");
  ASSERT_TRUE(text);
  const std::string path = ParseCgroupV2Path(*text).value_or("");
  ASSERT_NE(path, "/");
  auto args = testing::CrossedLevels();
  args.insert(args.end(), {"--only", path, "--grace", "2s"});
  testing::StartedChild guardian(testing::GuardianArgs(dir, args),
                                 {"HEADROOM_FAKE_NVML_SCRIPT=/nonexistent"});
  const auto events = testing::WaitEvent(dir.File("events.jsonl"), "ended");
  EXPECT_EQ(guardian.Stop(), 0);
  const auto kill = testing::First(events, "kill");
  ASSERT_FALSE(kill.is_null()) << dir.File("events.jsonl");
  EXPECT_EQ(kill["victim"]["pid"], job.pid());
  EXPECT_EQ(kill["victim"]["cgroup"], path);
  EXPECT_EQ(kill["victim"]["pids"].size(), 3u) << kill["victim"]["pids"];
  EXPECT_NE(job.Reap(5000), -1);
  for (const pid_t p : workers) {
    for (int i = 0; i < 500 && Alive(p); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(Alive(p)) << p;  // init reaps them
  }
  cgroup->KillAll(SysRoot("/"));  // whatever a failure left: the cgroup is removed empty
  for (int i = 0; i < 500 && !cgroup->Empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

// The events of type `type` in `events`.
std::vector<nlohmann::json> OfType(const std::vector<nlohmann::json>& events,
                                   const std::string& type) {
  std::vector<nlohmann::json> out;
  for (const auto& e : events)
    if (e["type"] == type) out.push_back(e);
  return out;
}

// The events of --events FILE once there are `n` of type `type` (bounded: `ms`).
std::vector<nlohmann::json> WaitEvents(const std::string& path, const std::string& type, size_t n,
                                       int ms) {
  std::vector<nlohmann::json> all;
  for (int i = 0; i <= ms / 20; ++i) {
    all.clear();
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_discarded()) all.push_back(j);
    }
    if (OfType(all, type).size() >= n) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return all;
}

// The real guardian (--dry-run, scoped to the test's tree) while a child spawns and reaps
// short-lived processes for 3 s: it keeps deciding, the same way, and stops cleanly.
TEST(GuardianScenarios, ProcessesComingAndGoingDoNotStopTheGuardian) {
  TempDir dir("guardian-churn");
  testing::StartedChild balloon(testing::Balloon({"--cap", "128M"}));
  testing::WaitHeld(balloon.pid(), 120 << 10);
  testing::StartedChild churn(
      {"/bin/sh", "-c",
       "end=$(($(date +%s) + 3)); while [ $(date +%s) -lt $end ]; do "
       "for i in 1 2 3 4 5 6; do /bin/true & /bin/sleep 0.01 & done; wait; done"});
  auto args = testing::CrossedLevels();
  args.insert(args.end(), {"--dry-run", "--grace", "1s", "--only", std::to_string(balloon.pid()),
                           "--only", std::to_string(churn.pid())});
  testing::StartedChild guardian(testing::GuardianArgs(dir, args),
                                 {"HEADROOM_FAKE_NVML_SCRIPT=/nonexistent"}, dir.File("err"));
  EXPECT_NE(churn.Reap(8000), -1);  // 3 s of churn
  const auto events = WaitEvents(dir.File("events.jsonl"), "choice", 3, 10000);
  EXPECT_TRUE(Alive(guardian.pid())) << testing::Slurp(dir / "err");
  EXPECT_EQ(guardian.Stop(), 0) << testing::Slurp(dir / "err");
  const auto choices = OfType(events, "choice");
  EXPECT_GE(choices.size(), 3u);  // a dry run's next choice: after the grace
  for (const auto& c : choices) EXPECT_EQ(c["victim"]["pid"], balloon.pid()) << c["message"];
  EXPECT_TRUE(OfType(events, "kill").empty());
  EXPECT_TRUE(Alive(balloon.pid()));
}

// The journal on a full disk: a 1 MiB tmpfs, mounted in a mount namespace of the guardian's
// own (unshare --mount: the test's mounts are not touched) and filled by the test through
// /proc/PID/root once the guardian has started. The guardian keeps deciding, says once that
// the journal write failed, and stops cleanly.
TEST(GuardianScenarios, AJournalOnAFullDiskIsSaidOnceAndTheGuardianGoesOn) {
  TempDir dir("guardian-fulljournal");
  const std::string small = dir.File("small");
  std::filesystem::create_directories(small);
  testing::StartedChild balloon(testing::Balloon({"--cap", "128M"}));
  testing::WaitHeld(balloon.pid(), 120 << 10);
  auto args = testing::GuardianArgs(dir, testing::CrossedLevels());
  args[2] = "--journal";
  args.insert(args.begin() + 3, small + "/journal.db");
  args.insert(args.end(), {"--dry-run", "--grace", "1s", "--only", std::to_string(balloon.pid())});
  std::vector<std::string> argv{"/usr/bin/unshare",
                                "--mount",
                                "--propagation",
                                "private",
                                "/bin/sh",
                                "-c",
                                "mount -t tmpfs -o size=1m none \"$0\" && exec \"$@\"",
                                small};
  argv.insert(argv.end(), args.begin(), args.end());
  testing::StartedChild guardian(argv, {"HEADROOM_FAKE_NVML_SCRIPT=/nonexistent"}, dir.File("err"));
  auto before = WaitEvents(dir.File("events.jsonl"), "choice", 1, 10000);
  ASSERT_EQ(OfType(before, "choice").size(), 1u)
      << "unshare --mount and a tmpfs mount need root: " << testing::Slurp(dir / "err");
  const std::string inside = "/proc/" + std::to_string(guardian.pid()) + "/root" + small;
  ASSERT_TRUE(std::filesystem::exists(inside + "/journal.db")) << testing::Slurp(dir / "err");
  {
    std::ofstream fill(inside + "/filler", std::ios::binary);
    const std::string block(64 << 10, 'x');
    for (int i = 0; i < 64 && fill.write(block.data(), block.size()) && fill.flush(); ++i) {
    }
  }
  const auto events = WaitEvents(dir.File("events.jsonl"), "choice", 4, 10000);
  EXPECT_GE(OfType(events, "choice").size(), 4u);
  EXPECT_TRUE(Alive(guardian.pid()));
  EXPECT_EQ(guardian.Stop(), 0);
  const std::string err = testing::Slurp(dir / "err");
  size_t said = 0;
  for (size_t at = 0; (at = err.find("disk is full", at)) != std::string::npos; ++at) ++said;
  EXPECT_EQ(said, 1u) << err;  // SQLite's words for ENOSPC
  EXPECT_TRUE(testing::Contains(err, "journal")) << err;
  EXPECT_TRUE(Alive(balloon.pid()));
}

// PID 1 of the namespace: starts the scenario's processes, says their pids (the namespace's)
// in DIR/pids, runs the guardian without --only, and when DIR/stop appears (or after 40 s)
// stops it with SIGTERM, writes its exit status to DIR/guardian.rc and ends the rest. The
// level is set here, once the bystander and the small tree hold their memory: 256 MiB below
// MemAvailable then. The holder starts after, fills 2 GiB at 512 MiB/s and crosses it in half
// a second, and still does when the machine's other processes give back 1.5 GiB meanwhile; a
// crossing that comes sooner (they take memory) finds the holder already the largest.
constexpr const char* kNamespaceInit = R"sh(set -u
D=$1 BALLOON=$2 HEADROOM=$3 NVML=$4
"$BALLOON" --timeout 60s --cap 512M >/dev/null 2>&1 &
BYSTANDER=$!
"$BALLOON" --timeout 60s --cap 96M --children 2 >/dev/null 2>&1 &
TREE=$!
i=0
until [ "$(awk '/^VmRSS/ {print $2}' /proc/$BYSTANDER/status 2>/dev/null)" -ge 500000 ] 2>/dev/null \
  || [ $i -ge 500 ]; do sleep 0.01; i=$((i+1)); done
sleep 0.3
AVAIL=$(awk '/^MemAvailable/ {print int($2 / 1024)}' /proc/meminfo)
"$BALLOON" --timeout 60s --mode memfd --cap 2048M --rate 512M --children 1 \
  --pidfile "$D/holder.pids" >/dev/null 2>&1 &
HOLDER=$!
printf 'scenario gb10\nprocess %s 2048\n' "$HOLDER" >"$D/nvml"
HEADROOM_FAKE_NVML_SCRIPT=$D/nvml "$HEADROOM" guardian --no-journal --events "$D/events.jsonl" \
  --nvml-lib "$NVML" --min-available "$((AVAIL - 256))MiB" --warn-available "$((AVAIL - 64))MiB" \
  --grace 2s >"$D/guardian.out" 2>"$D/guardian.err" &
GUARDIAN=$!
echo "init=$$ holder=$HOLDER bystander=$BYSTANDER tree=$TREE guardian=$GUARDIAN" >"$D/pids.tmp"
mv "$D/pids.tmp" "$D/pids"
i=0
until [ -e "$D/stop" ] || [ $i -ge 4000 ]; do sleep 0.01; i=$((i+1)); done
kill -TERM $GUARDIAN
wait $GUARDIAN
echo $? >"$D/guardian.rc"
kill -KILL $BYSTANDER $TREE $HOLDER 2>/dev/null
wait
)sh";

// The pid in this test's namespace of each process below `ancestor` whose pid in its own
// namespace is a value of `ns_pids` (status's NSpid: the outermost first), by name.
std::map<std::string, pid_t> HostPids(pid_t ancestor, const std::map<std::string, pid_t>& ns_pids) {
  std::map<std::string, pid_t> out;
  for (const auto& d : Descendants(SysRoot("/"), ancestor)) {
    auto status = SysRoot("/").ReadFile("proc/" + std::to_string(d.pid) + "/status");
    if (!status) continue;
    const auto at = status->find("\nNSpid:");
    if (at == std::string::npos) continue;
    std::istringstream line(status->substr(at + 7, status->find('\n', at + 1) - at - 7));
    pid_t inner = 0;
    for (pid_t p; line >> p;) inner = p;
    for (const auto& [name, pid] : ns_pids)
      if (pid == inner && d.pid != inner) out[name] = d.pid;
  }
  return out;
}

// The one case without --only (issue 32: "except the one end-to-end bar-style case"): the
// real guardian makes the whole machine's choice, and the machine is a fresh PID namespace
// with its own /proc, so the candidates are the test's processes alone. A memfd holder that
// the fake NVML reports (with the namespace's pids) holds less RSS than a bystander; it and
// its worker end, the bystander and the namespace's init survive.
// One run of it; `crossed`: whether the guardian signalled anything within 15 s.
void NamespaceScenario(bool* crossed) {
  TempDir dir("guardian-ns");
  testing::WriteFile(dir / "init.sh", kNamespaceInit);
  testing::StartedChild ns({"/usr/bin/unshare", "--pid", "--fork", "--mount-proc", "--kill-child",
                            "/bin/sh", dir.File("init.sh"), dir.path().string(), HEADROOM_BALLOON,
                            HEADROOM_BINARY, HEADROOM_FAKE_NVML_PATH},
                           {}, dir.File("unshare.err"));
  std::map<std::string, pid_t> ns_pids;
  int early = -1;  // unshare's wait status, when it ended before the scenario started
  for (int i = 0; i < 1000 && ns_pids.empty() && early == -1; ++i) {
    std::ifstream in(dir.File("pids"));
    for (std::string word; in >> word;)
      ns_pids[word.substr(0, word.find('='))] = std::stoi(word.substr(word.find('=') + 1));
    if (ns_pids.empty()) early = ns.Reap(10);
  }
  ASSERT_FALSE(ns_pids.empty())
      << "unshare --pid --fork --mount-proc did not start the scenario (it needs root, or "
         "CAP_SYS_ADMIN, and PID namespaces; wait status "
      << early << "): " << testing::Slurp(dir / "unshare.err");
  ASSERT_EQ(ns_pids["init"], 1);
  // The holder's worker (the holder tells its pid).
  const std::vector<pid_t> worker = WorkerPids(dir.File("holder.pids"), ns_pids["holder"], 1);
  ASSERT_EQ(worker.size(), 1u);
  ns_pids["worker"] = worker[0];
  const auto host = HostPids(ns.pid(), ns_pids);
  ASSERT_EQ(host.size(), 6u) << "the namespace's processes as this test sees them";
  const auto events = testing::WaitEvent(dir.File("events.jsonl"), "ended");
  const auto kill = testing::First(events, "kill");
  *crossed = !kill.is_null();
  if (!*crossed) return;  // the machine's other processes gave back more than the fill
  EXPECT_EQ(kill["victim"]["pid"], ns_pids["holder"]);
  EXPECT_EQ(kill["victim"]["pids"].size(), 2u) << kill["victim"]["pids"];  // and its worker
  EXPECT_EQ(kill["victim"]["gpu_bytes"], 2048ULL << 20);
  const std::string message = kill["message"];
  EXPECT_TRUE(testing::Contains(
      message, "victim balloon (pid " + std::to_string(ns_pids["holder"]) + ", 2 processes)"))
      << message;
  EXPECT_TRUE(testing::Contains(message, "gpu 2147483648")) << message;
  EXPECT_TRUE(
      testing::Contains(message, "balloon pid " + std::to_string(ns_pids["bystander"]) + " held"))
      << message;
  const std::string out = testing::Slurp(dir / "guardian.out");
  EXPECT_TRUE(testing::Contains(out, "victim balloon (pid " + std::to_string(ns_pids["holder"])))
      << out;
  for (const char* ended : {"holder", "worker"}) {
    for (int i = 0; i < 500 && Alive(host.at(ended)); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(Alive(host.at(ended))) << ended;
  }
  EXPECT_TRUE(Alive(host.at("bystander")));
  EXPECT_TRUE(Alive(host.at("tree")));
  EXPECT_TRUE(Alive(host.at("init")));
  // The guardian stops on SIGTERM with status 0, then the namespace ends (bounded).
  testing::WriteFile(dir / "stop", "");
  const int status = ns.Reap(15000);
  ASSERT_NE(status, -1);
  EXPECT_EQ(testing::Slurp(dir / "guardian.rc"), "0\n");
}

TEST(GuardianScenarios, WithoutOnlyTheWholeMachinesChoiceEndsTheGpuHolderInANamespace) {
  // MemAvailable is the whole machine's: on a shared one, others can give back more memory
  // than the holder takes and no level is crossed. Three tries, then it is a failure.
  bool crossed = false;
  for (int attempt = 0; attempt < 3 && !crossed && !HasFailure(); ++attempt)
    NamespaceScenario(&crossed);
  EXPECT_TRUE(crossed) << "the guardian signalled nothing in three runs";
}

}  // namespace
}  // namespace headroom
