#include "top/top_model.h"

#include <gtest/gtest.h>

#include "top/ui_state.h"
#include "top_testing.h"

namespace headroom {
namespace {

using testing::Holder;

std::vector<pid_t> Pids(const std::vector<HolderRow>& rows) {
  std::vector<pid_t> pids;
  for (const auto& r : rows) pids.push_back(r.pid);
  return pids;
}

TEST(TopModel, SortByMemoryPidAndName) {
  std::vector<HolderRow> rows = {
      Holder(30, "vllm", "vllm serve", 1ULL << 30, 40ULL << 30),  // NVML's figure counts
      Holder(10, "python (torch loaded)", "python a.py", 6ULL << 30),
      Holder(20, "llama.cpp", "llama-server", 5ULL << 30),
      Holder(5, "gpu process", "", std::nullopt),           // nothing known: 0
      Holder(40, "llama.cpp", "llama-server", 5ULL << 30),  // a tie with 20: pid order
  };
  rows[1].pss_bytes = 7ULL << 30;  // PSS before RSS
  SortHolders(rows, SortOrder::kMemory);
  EXPECT_EQ(Pids(rows), (std::vector<pid_t>{30, 10, 20, 40, 5}));
  SortHolders(rows, SortOrder::kPid);
  EXPECT_EQ(Pids(rows), (std::vector<pid_t>{5, 10, 20, 30, 40}));
  SortHolders(rows, SortOrder::kName);
  EXPECT_EQ(Pids(rows), (std::vector<pid_t>{5, 20, 40, 10, 30}));
  EXPECT_EQ(HolderMemoryBytes(rows[3]), 7ULL << 30);
}

TEST(TopModel, SortNamesCycleAndParse) {
  EXPECT_EQ(NextSortOrder(SortOrder::kMemory), SortOrder::kPid);
  EXPECT_EQ(NextSortOrder(SortOrder::kPid), SortOrder::kName);
  EXPECT_EQ(NextSortOrder(SortOrder::kName), SortOrder::kMemory);
  for (SortOrder o : {SortOrder::kMemory, SortOrder::kPid, SortOrder::kName}) {
    EXPECT_EQ(ParseSortOrder(SortOrderName(o)), o);
  }
  EXPECT_FALSE(ParseSortOrder("rss"));
  EXPECT_FALSE(ParseSortOrder(""));
}

TEST(TopModel, HolderRowTakesTheCapUnlessPartOfAnother) {
  PoolHolder h;
  h.facts.pid = 1112;
  h.facts.argv = {"VLLM::EngineCore"};
  h.kind = HolderKind::kVllm;
  h.user = "alice";
  h.gpu_bytes = 3ULL << 30;
  HolderCap cap;
  cap.pool_fraction = 0.5;
  cap.source = "--gpu-memory-utilization";
  HolderRow row = MakeHolderRow(h, cap);
  EXPECT_EQ(row.kind, "vllm");
  EXPECT_EQ(row.command, "VLLM::EngineCore");
  EXPECT_EQ(row.cap_fraction, 0.5);
  h.part_of = 1111;
  row = MakeHolderRow(h, cap);
  EXPECT_FALSE(row.cap_fraction);  // its server's cap counts
  EXPECT_EQ(row.part_of, 1111);
  h.in_proc = false;
  EXPECT_EQ(MakeHolderRow(h, cap).command, "");
}

TEST(TopModel, EventLogIsBounded) {
  EventLog log(3);
  for (int i = 0; i < 5; ++i) log.Add(TopEvent{{}, "e" + std::to_string(i), Message(), "{}"});
  ASSERT_EQ(log.events().size(), 3u);
  EXPECT_EQ(log.events().front().type, "e2");
  EXPECT_EQ(log.events().back().type, "e4");
  EXPECT_EQ(log.total(), 5u);
}

TEST(TopUiState, KeysPauseSortHelpQuit) {
  EXPECT_EQ(KeyFromChar('q'), TopKey::kQuit);
  EXPECT_EQ(KeyFromChar('Q'), TopKey::kQuit);
  EXPECT_EQ(KeyFromChar('p'), TopKey::kPause);
  EXPECT_EQ(KeyFromChar('s'), TopKey::kSort);
  EXPECT_EQ(KeyFromChar('h'), TopKey::kHelp);
  EXPECT_EQ(KeyFromChar('?'), TopKey::kHelp);
  EXPECT_EQ(KeyFromChar('x'), TopKey::kOther);
  UiState ui;
  EXPECT_EQ(ApplyKey(ui, TopKey::kPause), KeyAction::kFreeze);
  EXPECT_TRUE(ui.paused);
  EXPECT_EQ(ApplyKey(ui, TopKey::kPause), KeyAction::kRedraw);
  EXPECT_FALSE(ui.paused);
  EXPECT_EQ(ApplyKey(ui, TopKey::kSort), KeyAction::kRedraw);
  EXPECT_EQ(ui.sort, SortOrder::kPid);
  EXPECT_EQ(ApplyKey(ui, TopKey::kOther), KeyAction::kNone);
  EXPECT_EQ(ApplyKey(ui, TopKey::kQuit), KeyAction::kQuit);
}

TEST(TopUiState, AnyKeyClosesHelpAndDoesNothingElse) {
  UiState ui;
  EXPECT_EQ(ApplyKey(ui, TopKey::kHelp), KeyAction::kRedraw);
  EXPECT_TRUE(ui.help);
  EXPECT_EQ(ApplyKey(ui, TopKey::kResize), KeyAction::kRedraw);
  EXPECT_TRUE(ui.help);                                        // a resize redraws the help
  EXPECT_EQ(ApplyKey(ui, TopKey::kQuit), KeyAction::kRedraw);  // q closes help, does not quit
  EXPECT_FALSE(ui.help);
  ApplyKey(ui, TopKey::kHelp);
  ApplyKey(ui, TopKey::kSort);
  EXPECT_EQ(ui.sort, SortOrder::kMemory);  // the sort key only closed the help
  EXPECT_FALSE(ui.help);
}

}  // namespace
}  // namespace headroom
