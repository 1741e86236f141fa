// The guardian's loop against real processes (the balloon, tests/tools) with literal
// MemAvailable readings and a set clock: what it signals, when, and what it leaves alone.
// Every choice is scoped to the balloon's own tree (--only), and every balloon is reaped.
#include "guardian/guardian_loop.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "sys/processes.h"
#include "testing_children.h"

namespace headroom {
namespace {

constexpr uint64_t kGuardianGiB = 1ULL << 30;

// A balloon holding its cap (64 MiB), killed and reaped at the end (testing_children.h).
class HeldBalloon : public testing::StartedChild {
 public:
  explicit HeldBalloon(const std::vector<std::string>& extra) : StartedChild(BalloonArgs(extra)) {
    // Until it holds its cap (bounded: 5 s). The balloon's own status, not the forked copy of
    // this test before exec (whose RSS, under ASan, is past 60 MiB already).
    const std::string name =
        std::filesystem::path(HEADROOM_BALLOON).filename().string().substr(0, 15);
    for (int i = 0; i < 500; ++i) {
      auto status = SysRoot("/").ReadFile("proc/" + std::to_string(pid()) + "/status");
      if (status && status->find("Name:\t" + name + "\n") != std::string::npos &&
          status->find("VmRSS:") != std::string::npos) {
        const auto at = status->find("VmRSS:");
        if (std::stoull(status->substr(at + 6)) >= 60 * 1024) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

 private:
  static std::vector<std::string> BalloonArgs(const std::vector<std::string>& extra) {
    std::vector<std::string> args{HEADROOM_BALLOON, "--cap", "64M", "--timeout", "30s"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
};

struct Rig {
  double now = 0;
  std::deque<uint64_t> readings;
  uint64_t last = 0;
  std::vector<GuardianEvent> events;
  GuardianIo Io() {
    GuardianIo io;
    io.now_s = [this] { return now; };
    io.read_available = [this]() -> std::optional<uint64_t> {
      if (!readings.empty()) {
        last = readings.front();
        readings.pop_front();
      }
      return last;
    };
    io.emit = [this](const GuardianEvent& e) { events.push_back(e); };
    return io;
  }
  std::vector<std::string> Types() const {
    std::vector<std::string> out;
    for (const auto& e : events) out.push_back(e.type);
    return out;
  }
};

GuardianOptions OptionsFor(pid_t scope) {
  GuardianOptions o;
  o.min_available_bytes = 3 * kGuardianGiB / 2;  // 1.5 GiB
  o.grace = std::chrono::milliseconds(3000);
  o.choice.self = ::getpid();
  o.choice.only = {*ParseScope(std::to_string(scope))};
  return o;
}

TEST(GuardianLoop, MemoryBackWhileChoosingEndsNothing) {
  HeldBalloon b({});
  Rig rig;
  rig.readings = {2 * kGuardianGiB, kGuardianGiB * 14 / 10, 2 * kGuardianGiB};
  GuardianLoop loop(SysRoot("/"), OptionsFor(b.pid()), rig.Io());
  rig.now = 1;
  loop.Step();
  EXPECT_EQ(rig.Types(), std::vector<std::string>{"recovered"});
  EXPECT_EQ(loop.counts().kills, 0);
  EXPECT_EQ(b.Reap(200), -1);  // still running
}

// Crossing the warning level makes the choice once (the rehearsal: its pages faulted in and
// locked before the kill level), says who would be ended, and signals nothing.
TEST(GuardianLoop, TheWarningRehearsesTheChoiceAndSignalsNothing) {
  HeldBalloon b({});
  Rig rig;
  rig.readings = {3 * kGuardianGiB, 3 * kGuardianGiB};
  int gpu_reads = 0;
  GuardianOptions o = OptionsFor(b.pid());
  o.warn_available_bytes = 4 * kGuardianGiB;
  GuardianIo io = rig.Io();
  io.read_gpu = [&] {
    ++gpu_reads;
    return std::map<pid_t, uint64_t>{};
  };
  GuardianLoop loop(SysRoot("/"), o, io);
  rig.now = 1;
  loop.Step();
  rig.now = 2;
  loop.Step();
  EXPECT_EQ(rig.Types(), std::vector<std::string>{"warn"});
  EXPECT_EQ(gpu_reads, 1);  // once, at the crossing
  ASSERT_TRUE(rig.events[0].fields.contains("would_end"));
  EXPECT_EQ(rig.events[0].fields["would_end"]["pid"], b.pid());
  EXPECT_EQ(loop.counts().kills, 0);
  EXPECT_EQ(b.Reap(200), -1);  // still running
}

// A projected trigger (MemAvailable still above the level, falling fast) is called off only
// by a reading that rose: the same reading again (the kernel's counters not folded yet) or one
// a few pages higher is no recovery while a fill goes on.
TEST(GuardianLoop, AProjectedTriggerIsNotCalledOffByAnUnchangedReading) {
  HeldBalloon b({});
  const uint64_t near = kGuardianGiB * 155 / 100;  // 1.55 GiB: above the 1.5 GiB level
  {
    Rig rig;
    rig.readings = {2 * kGuardianGiB, near, near + (64ULL << 20)};  // rose 64 MiB: recovered
    GuardianLoop loop(SysRoot("/"), OptionsFor(b.pid()), rig.Io());
    rig.now = 0.01;
    loop.Step();
    ASSERT_EQ(rig.Types(), std::vector<std::string>{"recovered"});
    EXPECT_EQ(rig.events[0].fields["reason"], "projected");
    EXPECT_EQ(b.Reap(200), -1);
  }
  Rig rig;
  rig.readings = {2 * kGuardianGiB, near, near + 8192};  // two pages more: still filling
  GuardianLoop loop(SysRoot("/"), OptionsFor(b.pid()), rig.Io());
  rig.now = 0.01;
  loop.Step();
  ASSERT_EQ(rig.Types(), std::vector<std::string>{"kill"});
  EXPECT_EQ(rig.events[0].fields["reason"], "projected");
  EXPECT_EQ(rig.events[0].fields["victim"]["pid"], b.pid());
  EXPECT_NE(b.Reap(5000), -1);
}

// Just after a victim is gone its memory comes back late and MemAvailable's late fall reads
// as a new fill: for the recovery watch (2 s) neither the projection nor the level ends a
// second job unless MemAvailable falls 256 MiB below its reading at the victim's end; after
// it, the level acts again.
TEST(GuardianLoop, TheWakeOfAVictimEndsNoSecondJobUntilTheRecoveryWatchEnds) {
  HeldBalloon first({"--cap", "96M"});
  HeldBalloon second({});
  const uint64_t near = kGuardianGiB * 155 / 100;  // 1.55 GiB: above the 1.5 GiB level
  Rig rig;
  rig.readings = {2 * kGuardianGiB, near, near};
  auto o = OptionsFor(first.pid());
  o.choice.only.push_back(*ParseScope(std::to_string(second.pid())));
  GuardianLoop loop(SysRoot("/"), o, rig.Io());
  rig.now = 0.01;
  loop.Step();
  ASSERT_EQ(rig.Types(), std::vector<std::string>{"kill"});
  EXPECT_EQ(rig.events[0].fields["victim"]["pid"], first.pid());
  ASSERT_NE(first.Reap(5000), -1);
  rig.readings = {kGuardianGiB * 16 / 10};
  rig.now = 0.1;
  loop.Step();
  ASSERT_EQ(rig.Types(), (std::vector<std::string>{"kill", "ended"}));
  rig.readings = {kGuardianGiB * 152 / 100};  // falling 8 GiB/s, 20 MiB above the level
  rig.now = 0.11;
  loop.Step();
  rig.readings = {kGuardianGiB * 145 / 100};  // below the level, 154 MiB below the end
  rig.now = 0.7;
  loop.Step();
  rig.now = 1.9;
  loop.Step();
  EXPECT_EQ(rig.Types(), (std::vector<std::string>{"kill", "ended"}));
  EXPECT_EQ(second.Reap(200), -1);
  rig.now = 2.2;  // the watch is over and MemAvailable is still below the level: it acts
  loop.Step();
  ASSERT_EQ(rig.Types(), (std::vector<std::string>{"kill", "ended", "kill"}));
  EXPECT_EQ(rig.events[2].fields["victim"]["pid"], second.pid());
  EXPECT_NE(second.Reap(5000), -1);
}

// A second fill while the first victim's recovery is watched: 256 MiB below the reading at
// the victim's end ends its job at once.
TEST(GuardianLoop, ASecondFillJustAfterAVictimEndedEndsItsJob) {
  HeldBalloon first({"--cap", "96M"});
  HeldBalloon second({});
  Rig rig;
  rig.readings = {kGuardianGiB * 14 / 10};  // below the 1.5 GiB level
  auto o = OptionsFor(first.pid());
  o.choice.only.push_back(*ParseScope(std::to_string(second.pid())));
  GuardianLoop loop(SysRoot("/"), o, rig.Io());
  rig.now = 0.01;
  loop.Step();
  ASSERT_EQ(rig.Types(), std::vector<std::string>{"kill"});
  ASSERT_NE(first.Reap(5000), -1);
  rig.now = 0.1;
  loop.Step();
  ASSERT_EQ(rig.Types(), (std::vector<std::string>{"kill", "ended"}));
  rig.readings = {kGuardianGiB * 14 / 10 - (200ULL << 20)};  // 200 MiB lower: the wake
  rig.now = 0.2;
  loop.Step();
  EXPECT_EQ(rig.Types(), (std::vector<std::string>{"kill", "ended"}));
  rig.readings = {kGuardianGiB * 14 / 10 - (300ULL << 20)};  // 300 MiB lower: a new fill
  rig.now = 0.3;
  loop.Step();
  ASSERT_EQ(rig.Types(), (std::vector<std::string>{"kill", "ended", "kill"}));
  EXPECT_EQ(rig.events[2].fields["victim"]["pid"], second.pid());
  EXPECT_NE(second.Reap(5000), -1);
}

TEST(GuardianLoop, SigtermEndsTheVictimAndItsEndIsReported) {
  HeldBalloon b({});
  Rig rig;
  rig.readings = {2 * kGuardianGiB, kGuardianGiB * 14 / 10, kGuardianGiB * 14 / 10};
  GuardianLoop loop(SysRoot("/"), OptionsFor(b.pid()), rig.Io());
  rig.now = 1;
  loop.Step();
  ASSERT_EQ(rig.Types(), std::vector<std::string>{"kill"});
  EXPECT_EQ(rig.events[0].fields["signal"], "SIGTERM");
  EXPECT_EQ(rig.events[0].fields["victim"]["pid"], b.pid());
  const int status = b.Reap(5000);
  ASSERT_NE(status, -1);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << status;
  rig.now = 1.5;
  rig.readings = {3 * kGuardianGiB};
  loop.Step();
  EXPECT_EQ(rig.Types(), (std::vector<std::string>{"kill", "ended"}));
}

TEST(GuardianLoop, DryRunSignalsNothing) {
  HeldBalloon b({});
  Rig rig;
  rig.readings = {2 * kGuardianGiB, kGuardianGiB * 14 / 10, kGuardianGiB * 14 / 10};
  auto o = OptionsFor(b.pid());
  o.dry_run = true;
  GuardianLoop loop(SysRoot("/"), o, rig.Io());
  rig.now = 1;
  loop.Step();
  ASSERT_EQ(rig.Types(), std::vector<std::string>{"choice"});
  EXPECT_NE(EnglishText(rig.events[0].line).find("dry run, nothing signalled: victim balloon"),
            std::string::npos)
      << EnglishText(rig.events[0].line);
  EXPECT_EQ(b.Reap(300), -1);
}

TEST(GuardianLoop, AVictimIgnoringSigtermIsKilledWhenTheGraceEnds) {
  HeldBalloon b({"--ignore-term"});
  Rig rig;
  rig.readings = {2 * kGuardianGiB, kGuardianGiB * 14 / 10, kGuardianGiB * 14 / 10};
  GuardianLoop loop(SysRoot("/"), OptionsFor(b.pid()), rig.Io());
  rig.now = 1;
  loop.Step();
  ASSERT_EQ(rig.Types(), std::vector<std::string>{"kill"});
  rig.now = 3.9;  // within the grace: nothing more
  loop.Step();
  EXPECT_EQ(b.Reap(300), -1);
  EXPECT_EQ(rig.Types().size(), 1u);
  rig.now = 4.01;  // the grace (3 s) ran out
  loop.Step();
  EXPECT_EQ(rig.Types(), (std::vector<std::string>{"kill", "escalate"}));
  const int status = b.Reap(5000);
  ASSERT_NE(status, -1);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
}

TEST(GuardianLoop, SustainedFullPressureIsAReasonWithMemoryAboveTheLevel) {
  HeldBalloon b({});
  Rig rig;
  rig.readings = {4 * kGuardianGiB};  // far above the 1.5 GiB level, and steady
  bool pressure = false;
  GuardianIo io = rig.Io();
  io.psi_full = [&] { return pressure; };
  auto o = OptionsFor(b.pid());
  o.dry_run = true;
  GuardianLoop loop(SysRoot("/"), o, io);
  rig.now = 1;
  loop.Step();
  EXPECT_TRUE(rig.events.empty());
  pressure = true;
  rig.now = 2;
  loop.Step();
  ASSERT_EQ(rig.Types(), std::vector<std::string>{"choice"});
  EXPECT_EQ(rig.events[0].fields["reason"], "psi");
}

TEST(GuardianLoop, NoVictimOutsideTheScope) {
  HeldBalloon b({});
  Rig rig;
  rig.readings = {2 * kGuardianGiB, kGuardianGiB * 14 / 10};
  auto o = OptionsFor(b.pid());
  o.choice.protect = {"balloon"};  // protected, but the only one: still the victim
  o.choice.only = {*ParseScope("/no/such/cgroup")};
  GuardianLoop loop(SysRoot("/"), o, rig.Io());
  rig.now = 1;
  loop.Step();
  EXPECT_EQ(rig.Types(), std::vector<std::string>{"no-victim"});
  EXPECT_EQ(b.Reap(200), -1);
}

}  // namespace
}  // namespace headroom
