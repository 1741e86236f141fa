#include "ladder/ladder_steps.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <variant>

#include "testing_files.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

const fs::path kPageCacheRoot = fs::path(HEADROOM_SOURCE_DIR) / "tests/fixtures/gb10-pagecache";

// A journal and a root with gb10-pagecache's meminfo and a drop_caches file holding 0.
class LadderSteps : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_ / "root/proc/sys/vm");
    fs::copy_file(kPageCacheRoot / "proc/meminfo", dir_ / "root/proc/meminfo");
    std::ofstream(dir_ / "root/proc/sys/vm/drop_caches") << "0\n";
    auto j = Journal::Open(dir_ / "journal.db");
    ASSERT_TRUE(j) << EnglishText(j.error().what);
    journal_.emplace(std::move(*j));
    ladders_.emplace(*journal_);
  }
  SysRoot Root() const { return SysRoot(dir_ / "root"); }
  LadderInputs Inputs(std::string plan_error = "the budget: gone") {
    return {[this] { return ReadMemInfo(Root()); },
            [this, plan_error](const LadderRow&, Message* error) {
              ++plan_calls_;
              *error = Message::Literal(plan_error);
              return std::optional<LadderPlanInput>{};
            }};
  }
  LadderRow Row(const std::string& job, const std::string& plan_request = "") {
    LadderRow row;
    row.job = job;
    row.symptom = "step";
    row.match_text = job;
    row.plan_request = plan_request;
    return row;
  }
  std::string DropCaches() const {
    std::ifstream in(dir_ / "root/proc/sys/vm/drop_caches");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  template <typename T>
  static std::string RefusalText(const LadderOutcome<T>& outcome) {
    const auto* r = std::get_if<LadderRefusal>(&outcome);
    return r ? EnglishText(r->message) : "";
  }

  TempDir dir_;
  std::optional<Journal> journal_;
  std::optional<LadderJournal> ladders_;
  int plan_calls_ = 0;
  const WallTime now_ = std::chrono::system_clock::now();
};

TEST_F(LadderSteps, StartEntersStepOneWithTheFlushAdviceAsEvidence) {
  auto started = StartLadder(*ladders_, Row("job"), Inputs(), now_);
  ASSERT_TRUE(std::holds_alternative<LadderStarted>(started)) << RefusalText(started);
  const auto& s = std::get<LadderStarted>(started);
  EXPECT_GT(s.id, 0);
  EXPECT_EQ(s.entry.step, 1);
  EXPECT_EQ(s.entry.kind, "entered");
  EXPECT_NE(EnglishText(s.entry.text).find("Cached"), std::string::npos);
  const auto evidence = nlohmann::json::parse(s.entry.evidence_json);
  ASSERT_TRUE(evidence["lines"].is_array());
  std::string joined;  // the entry's text is its lines joined
  for (const auto& line : evidence["lines"])
    joined += (joined.empty() ? "" : "; ") + line.get<std::string>();
  EXPECT_EQ(joined, EnglishText(s.entry.text));
  EXPECT_EQ(plan_calls_, 0);
  // One open ladder per job.
  EXPECT_NE(RefusalText(StartLadder(*ladders_, Row("job"), Inputs(), now_)), "");
}

TEST_F(LadderSteps, RecordMovesOnAndAPlanThatCannotBeHadIsEvidence) {
  ASSERT_TRUE(std::holds_alternative<LadderStarted>(
      StartLadder(*ladders_, Row("job", R"({"schema_version": 1})"), Inputs(), now_)));
  auto moved = RecordResult(*ladders_, "job", LadderResult::kOom, "n", Inputs(), now_);
  ASSERT_TRUE(std::holds_alternative<LadderMoved>(moved)) << RefusalText(moved);
  const auto& m = std::get<LadderMoved>(moved);
  EXPECT_EQ(m.ladder.state.step, 1);
  EXPECT_EQ(m.next, (LadderState{2, LadderStatus::kOpen}));
  ASSERT_EQ(m.entries.size(), 2u);
  EXPECT_EQ(EnglishText(m.entries[0].text), "step 1 (flush-page-cache): oom");
  EXPECT_EQ(m.entries[0].note, "n");
  EXPECT_EQ(m.entries[1].kind, "entered");
  EXPECT_EQ(nlohmann::json::parse(m.entries[1].evidence_json)["error"], "the budget: gone");
  EXPECT_EQ(plan_calls_, 1);
  auto stored = ladders_->FindOpen("job");
  ASSERT_TRUE(stored && *stored);
  EXPECT_EQ((*stored)->state.step, 2);
  // Solved: no step entered after it.
  moved = RecordResult(*ladders_, "job", LadderResult::kOk, "", Inputs(), now_);
  ASSERT_TRUE(std::holds_alternative<LadderMoved>(moved));
  EXPECT_EQ(std::get<LadderMoved>(moved).next.status, LadderStatus::kSolved);
  EXPECT_EQ(std::get<LadderMoved>(moved).entries.size(), 1u);
  EXPECT_EQ(RefusalText(RecordResult(*ladders_, "job", LadderResult::kOk, "", Inputs(), now_)),
            "job 'job' has no open ladder (start one: headroom ladder start job --symptom "
            "load|step)");
}

TEST_F(LadderSteps, WithoutAPlanTheStepIsUnplannedAndThePlanIsNotAsked) {
  ASSERT_TRUE(
      std::holds_alternative<LadderStarted>(StartLadder(*ladders_, Row("job"), Inputs(), now_)));
  EXPECT_NE(RefusalText(SkipStep(*ladders_, "job", false, "", Inputs(), now_)), "");
  auto moved = SkipStep(*ladders_, "job", true, "by hand", Inputs(), now_);
  ASSERT_TRUE(std::holds_alternative<LadderMoved>(moved)) << RefusalText(moved);
  const auto& m = std::get<LadderMoved>(moved);
  EXPECT_EQ(EnglishText(m.entries[0].text),
            "step 1 (flush-page-cache) skipped with --force, without a result");
  EXPECT_FALSE(nlohmann::json::parse(m.entries[1].evidence_json).contains("error"));
  EXPECT_EQ(plan_calls_, 0);
}

TEST_F(LadderSteps, ApplyChecksInOrderThenFlushesWithoutMovingTheState) {
  ASSERT_TRUE(
      std::holds_alternative<LadderStarted>(StartLadder(*ladders_, Row("job"), Inputs(), now_)));
  FlushRequest request{Root(), 1, false, nullptr};
  EXPECT_EQ(
      RefusalText(ApplyFlush(*ladders_, "job", "", request, now_)).rfind("apply needs root", 0),
      0u);
  request.is_root = true;
  request.confirm = [] { return std::optional<Message>(Msg("not confirmed; nothing done")); };
  EXPECT_EQ(RefusalText(ApplyFlush(*ladders_, "job", "", request, now_)),
            "not confirmed; nothing done");
  EXPECT_EQ(DropCaches(), "0\n");
  request.confirm = [] { return std::optional<Message>(); };
  auto done = ApplyFlush(*ladders_, "job", "note", request, now_);
  ASSERT_TRUE(std::holds_alternative<LadderFlushed>(done)) << RefusalText(done);
  EXPECT_EQ(DropCaches(), "3");
  EXPECT_EQ(EnglishText(std::get<LadderFlushed>(done).flushed).rfind("flushed the page cache", 0),
            0u);
  auto stored = ladders_->FindOpen("job");
  ASSERT_TRUE(stored && *stored);
  EXPECT_EQ((*stored)->state.step, 1);
  // Past step 1, apply is refused before anything else is looked at.
  ASSERT_TRUE(std::holds_alternative<LadderMoved>(
      RecordResult(*ladders_, "job", LadderResult::kOom, "", Inputs(), now_)));
  request.is_root = false;
  EXPECT_EQ(
      RefusalText(ApplyFlush(*ladders_, "job", "", request, now_)).rfind("apply runs step 1", 0),
      0u);
}

}  // namespace
}  // namespace headroom
