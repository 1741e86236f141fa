// RunSweep with a fake trial runner and a fake clock over a fixture proc/meminfo: the
// journal rows, resume (finished trials not repeated, an interrupted one run again), the
// settle wait and the predicted-over-limit skip, without balloons or the guard.
#include "sweep/sweep.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "base/bytes.h"
#include "sweep/anchors.h"
#include "sweep/results.h"
#include "testing_files.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr uint64_t kTotal = 100 * kGiB;
constexpr uint64_t kIdleAvailable = 95 * kGiB;  // the pool holds 5 GiB before the sweep

void WriteMeminfo(const fs::path& root, uint64_t available) {
  fs::create_directories(root / "proc");
  std::ofstream(root / "proc" / "meminfo") << "MemTotal:       " << kTotal / 1024 << " kB\n"
                                           << "MemFree:        " << available / 1024 << " kB\n"
                                           << "MemAvailable:   " << available / 1024 << " kB\n";
}

// Moves only when slept; `on_sleep` sees each sleep's count.
class FakeClock final : public SweepClock {
 public:
  std::chrono::steady_clock::time_point Now() override { return now_; }
  void SleepFor(milliseconds d) override {
    now_ += d;
    ++sleeps;
    if (on_sleep) on_sleep(sleeps);
  }
  int sleeps = 0;
  std::function<void(int)> on_sleep;

 private:
  std::chrono::steady_clock::time_point now_{std::chrono::hours(1)};
};

// A trainer whose peak is `batch` GiB above the baseline.
struct FakeTrainer {
  uint64_t limit_bytes = 0;
  std::vector<int64_t> launched;
  std::optional<int64_t> interrupt_at;  // a forwarded SIGINT during this batch
  std::function<void()> after_trial;

  Result<TrialRun> operator()(const SysRoot&, const TrialSpec& spec) {
    const int64_t batch = std::stoll(spec.command.at(1));
    launched.push_back(batch);
    TrialRun run;
    run.peak_bytes = static_cast<uint64_t>(batch) * kGiB;
    run.peak_pool_bytes = (kTotal - kIdleAvailable) + run.peak_bytes;
    run.outcome = run.peak_pool_bytes <= limit_bytes ? TrialOutcome::kOk : TrialOutcome::kOverLimit;
    run.guard.peak_tree_rss_bytes = kGiB / 2;
    run.guard.duration_s = 1.5;
    if (interrupt_at && *interrupt_at == batch) run.guard.forwarded_signal = 2;
    if (after_trial) after_trial();
    return run;
  }
};

class SweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteMeminfo(dir_.path(), kIdleAvailable);
    auto journal = Journal::Open(dir_.path() / "journal.db");
    ASSERT_TRUE(journal) << EnglishText(journal.error().what);
    journal_.emplace(std::move(*journal));
  }

  SweepOptions Options(FakeTrainer& trainer) {
    SweepOptions o;
    auto knob = ParseKnob("batch", "--batch", "1,2,4,8,16");
    EXPECT_TRUE(knob);
    o.grid.knobs.push_back(*knob);
    o.command = {"train", "{batch}"};
    o.limit_bytes = 20 * kGiB;  // pool use: 5 GiB before + batch GiB
    o.margin_bytes = 0;
    o.min_available_bytes = 4 * kGiB;
    o.settle_tolerance_bytes = 256ULL << 20;
    o.settle_timeout = milliseconds(2000);
    o.log_dir = dir_.path() / "logs";
    trainer.limit_bytes = o.limit_bytes;
    o.run_trial = [&trainer](const SysRoot& root, const TrialSpec& spec) {
      return trainer(root, spec);
    };
    o.clock = &clock_;
    return o;
  }

  Result<SweepResult> Run(const SweepOptions& o) {
    return RunSweep(SysRoot(dir_.path()), o, *journal_, SweepProgress{});
  }

  std::map<int64_t, TrialRow> JournalTrials(int64_t run_id) {
    std::map<int64_t, TrialRow> out;
    auto trials = journal_->Trials(run_id);
    EXPECT_TRUE(trials);
    for (const auto& t : *trials) {
      out[nlohmann::json::parse(t.config_json)["batch"].get<int64_t>()] = t;
    }
    return out;
  }

  testing::TempDir dir_{"sweep-test"};
  FakeClock clock_;
  std::optional<Journal> journal_;
};

TEST_F(SweepTest, EveryTrialGoesToTheJournalAndTheOverLimitPredictionIsSkipped) {
  FakeTrainer trainer;
  const auto res = Run(Options(trainer));
  ASSERT_TRUE(res) << EnglishText(res.error().what);
  // 1, 2, 4, 8 fit (5 + 8 = 13 GiB of a 20 GiB limit); 16 is predicted at 21 GiB.
  EXPECT_EQ(trainer.launched, (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(res->exit_status, 0);
  ASSERT_TRUE(res->best);
  EXPECT_EQ(res->best->Get("batch"), 8);
  EXPECT_EQ(res->best_peak_bytes, 8 * kGiB);
  EXPECT_EQ(res->best_headroom_bytes, static_cast<int64_t>(20 * kGiB - 13 * kGiB));
  EXPECT_EQ(res->launched, 4);
  EXPECT_FALSE(res->resumed);
  const SweepRow& last = res->rows.back();
  EXPECT_EQ(last.config.Get("batch"), 16);
  EXPECT_EQ(last.outcome, TrialOutcome::kSkipped);
  ASSERT_TRUE(last.predicted_peak_bytes);
  EXPECT_GT(*last.predicted_peak_bytes + (kTotal - kIdleAvailable), 20 * kGiB);
  EXPECT_FALSE(last.notes.empty());  // the search's reason

  const auto trials = JournalTrials(res->run_id);
  ASSERT_EQ(trials.size(), 5u);
  EXPECT_EQ(trials.at(8).outcome, "ok");
  EXPECT_EQ(trials.at(8).peak_bytes, static_cast<int64_t>(8 * kGiB));
  EXPECT_EQ(trials.at(8).headroom_bytes, static_cast<int64_t>(7 * kGiB));
  // The other two measures live in the notes.
  EXPECT_NE(trials.at(8).notes.find("tree RSS peak "), std::string::npos) << trials.at(8).notes;
  EXPECT_NE(trials.at(8).notes.find("cgroup peak n/a"), std::string::npos);
  EXPECT_EQ(trials.at(16).outcome, "skipped");
  // A trial-start event before each launch.
  auto events = journal_->Events(res->run_id);
  ASSERT_TRUE(events);
  int starts = 0;
  for (const auto& e : *events) starts += e.type == "trial-start";
  EXPECT_EQ(starts, 4);
}

TEST_F(SweepTest, ARerunResumesWithoutRepeatingFinishedTrials) {
  FakeTrainer first;
  SweepOptions o = Options(first);
  o.max_trials = 2;
  const auto stopped = Run(o);
  ASSERT_TRUE(stopped) << EnglishText(stopped.error().what);
  EXPECT_EQ(first.launched, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(stopped->stopped_early, "--max-trials 2 reached");

  FakeTrainer second;
  o = Options(second);
  const auto resumed = Run(o);
  ASSERT_TRUE(resumed) << EnglishText(resumed.error().what);
  EXPECT_TRUE(resumed->resumed);
  EXPECT_EQ(resumed->run_id, stopped->run_id);
  EXPECT_EQ(resumed->reused, 2);
  EXPECT_EQ(second.launched, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(resumed->launched, 2);
  EXPECT_EQ(resumed->launched_total, 4);
  ASSERT_TRUE(resumed->best);
  EXPECT_EQ(resumed->best->Get("batch"), 8);
  EXPECT_TRUE(resumed->rows.front().from_journal);
  EXPECT_EQ(JournalTrials(resumed->run_id).size(), 5u);

  // --fresh starts over in a run of its own.
  FakeTrainer third;
  o = Options(third);
  o.fresh = true;
  const auto fresh = Run(o);
  ASSERT_TRUE(fresh);
  EXPECT_NE(fresh->run_id, stopped->run_id);
  EXPECT_EQ(third.launched, (std::vector<int64_t>{1, 2, 4, 8}));
}

TEST_F(SweepTest, AnInterruptedTrialIsNotRecordedAndRunsAgainOnResume) {
  FakeTrainer first;
  first.interrupt_at = 4;
  const auto stopped = Run(Options(first));
  ASSERT_TRUE(stopped) << EnglishText(stopped.error().what);
  EXPECT_EQ(stopped->exit_status, kExitSweepInterrupted);
  EXPECT_EQ(stopped->stopped_early, "interrupted by signal 2");
  EXPECT_EQ(JournalTrials(stopped->run_id).count(4), 0u);

  FakeTrainer second;
  const auto resumed = Run(Options(second));
  ASSERT_TRUE(resumed) << EnglishText(resumed.error().what);
  EXPECT_EQ(second.launched, (std::vector<int64_t>{4, 8}));
  ASSERT_FALSE(resumed->warnings.empty());
  EXPECT_NE(resumed->warnings.front().find("trial {\"batch\":4} was interrupted"),
            std::string::npos)
      << resumed->warnings.front();
  EXPECT_EQ(resumed->exit_status, 0);
}

TEST_F(SweepTest, BetweenTrialsItWaitsForThePoolToSettle) {
  FakeTrainer trainer;
  SweepOptions o = Options(trainer);
  // Each trial leaves 2 GiB held; it comes back on the 5th settle poll after the trial.
  int returned_at = 0;
  trainer.after_trial = [&] {
    WriteMeminfo(dir_.path(), kIdleAvailable - 2 * kGiB);
    returned_at = clock_.sleeps + 5;
  };
  clock_.on_sleep = [&](int sleeps) {
    if (sleeps == returned_at) WriteMeminfo(dir_.path(), kIdleAvailable);
  };
  const auto res = Run(o);
  ASSERT_TRUE(res) << EnglishText(res.error().what);
  EXPECT_EQ(trainer.launched, (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_TRUE(res->warnings.empty()) << res->warnings.front();
  // After each trial: 5 polls until it is back, then 500 ms (5 polls of 100 ms) still.
  EXPECT_EQ(clock_.sleeps, 4 * 10);
}

TEST_F(SweepTest, APoolThatDoesNotSettleIsAWarningAndTheSweepGoesOn) {
  FakeTrainer trainer;
  SweepOptions o = Options(trainer);
  trainer.after_trial = [&] { WriteMeminfo(dir_.path(), kIdleAvailable - 2 * kGiB); };
  const auto res = Run(o);
  ASSERT_TRUE(res) << EnglishText(res.error().what);
  // Every trial after the first starts 2 GiB higher than the sweep did; still within the
  // limit for 1, 2, 4 (5 + 2 + 4 = 11 GiB), and 8 as well (15 GiB).
  EXPECT_EQ(trainer.launched, (std::vector<int64_t>{1, 2, 4, 8}));
  ASSERT_EQ(res->warnings.size(), 4u);
  EXPECT_NE(res->warnings.front().find("did not settle"), std::string::npos)
      << res->warnings.front();
  // Each wait ran out its whole 2 s: 20 polls.
  EXPECT_EQ(clock_.sleeps, 4 * 20);
}

// Issue 31: "answer: batch=5" was printed with exit 0 while 6-23 were never tried, after a
// failure that had nothing to do with memory.
TEST_F(SweepTest, AnErrorWithValuesUntriedBelowItIsAnIncompleteAnswer) {
  FakeTrainer trainer;
  SweepOptions o = Options(trainer);
  auto knob = ParseKnob("batch", "--batch", "1..16");
  ASSERT_TRUE(knob);
  o.grid.knobs = {*knob};
  o.run_trial = [&](const SysRoot& root, const TrialSpec& spec) {
    auto run = trainer(root, spec);
    if (run && std::stoll(spec.command.at(1)) == 8) {
      run->outcome = TrialOutcome::kError;
      run->notes = Msg("exit status 1: ValueError: bad batch");
    }
    return run;
  };
  const auto res = Run(o);
  ASSERT_TRUE(res) << EnglishText(res.error().what);
  ASSERT_TRUE(res->best);
  EXPECT_EQ(res->best->Get("batch"), 4);
  EXPECT_EQ(res->exit_status, kExitSweepUntried);
  ASSERT_EQ(res->untried.size(), 1u);
  EXPECT_EQ(EnglishText(UntriedText(res->untried[0])),
            "batch 4 passed; 5..7 untried: batch 8 failed (exit status 1: ValueError: bad "
            "batch), not memory");
}

TEST_F(SweepTest, AStartFromThePlanRunsTwoTrialsAndTheJournalKeepsTheGap) {
  FakeTrainer trainer;
  SweepOptions o = Options(trainer);
  o.model = "llama-3.1-8b";
  // plan said 10, outside the list 1,2,4,8,16: the first trial is 8 (5 + 8 GiB of the 20 GiB
  // limit), the next, 4, its half, for the fit; the line through them puts 16 over the limit
  // unlaunched, and the answer is 8, two below the plan.
  SweepStart start;
  start.knob = "batch";
  start.value = 8;
  start.from_plan = true;
  start.plan_value = 10;
  start.plan_peak_bytes = 10 * kGiB;
  start.plan_room_bytes = 15 * kGiB;
  o.start = start;
  const auto res = Run(o);
  ASSERT_TRUE(res) << EnglishText(res.error().what);
  EXPECT_EQ(trainer.launched, (std::vector<int64_t>{8, 4}));
  ASSERT_TRUE(res->best);
  EXPECT_EQ(res->best->Get("batch"), 8);

  // The journal's summary: the start, and plan's value beside the measured one.
  auto runs = journal_->RecentRuns(5);
  ASSERT_TRUE(runs);
  ASSERT_FALSE(runs->empty());
  ASSERT_TRUE(runs->front().summary_json);
  const auto summary = nlohmann::json::parse(*runs->front().summary_json);
  EXPECT_EQ(summary["start"]["value"], 8) << summary;
  EXPECT_EQ(summary["start"]["from"], "plan") << summary;
  EXPECT_EQ(summary["plan"]["value"], 10) << summary;
  EXPECT_EQ(summary["plan"]["measured"], 8) << summary;
  EXPECT_EQ(summary["plan"]["gap"], -2) << summary;
  EXPECT_DOUBLE_EQ(summary["plan"]["gap_percent"].get<double>(), -20.0) << summary;
  EXPECT_EQ(summary["plan"]["room_bytes"], 15 * kGiB) << summary;
  // --json says the same.
  const auto j = SweepResultJson(o, *res);
  EXPECT_EQ(j["plan"], summary["plan"]);
  EXPECT_EQ(j["start"], summary["start"]);

  // A later plan reads it back as a measured anchor with plan's value.
  auto anchors = ReadMeasuredAnchors(*journal_);
  ASSERT_TRUE(anchors);
  ASSERT_EQ(anchors->size(), 1u);
  EXPECT_EQ(anchors->front().plan_knob, "batch");
  EXPECT_EQ(anchors->front().plan_value, 10);
  EXPECT_EQ(anchors->front().batch, 8);
}

TEST_F(SweepTest, AStartGivenAsAValueHasNoPlanGap) {
  FakeTrainer trainer;
  SweepOptions o = Options(trainer);
  SweepStart start;
  start.knob = "batch";
  start.value = 16;  // fails; 8 below it passes, and the answer is 8
  o.start = start;
  const auto res = Run(o);
  ASSERT_TRUE(res) << EnglishText(res.error().what);
  EXPECT_EQ(trainer.launched, (std::vector<int64_t>{16, 8}));
  const auto j = SweepResultJson(o, *res);
  EXPECT_EQ(j["start"]["from"], "flag");
  EXPECT_FALSE(j.contains("plan"));
  auto anchors = ReadMeasuredAnchors(*journal_);
  ASSERT_TRUE(anchors);
  ASSERT_EQ(anchors->size(), 1u);
  EXPECT_FALSE(anchors->front().plan_value);
}

}  // namespace
}  // namespace headroom
