// WatchRecord against a real journal in a temporary directory: the "files" event with
// absolute paths (null for a file not written), the guard's record, the rows at the end,
// and a journal that cannot be had handed to the note, never thrown.
#include "watch/watch_record.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/message.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::TempDir;

TEST(WatchRecord, FilesThenTheGuardThenTheRows) {
  TempDir dir("watch-record");
  const auto path = dir / "journal.db";
  std::vector<std::string> notes;
  WatchRecord record(Result<std::filesystem::path>(path), {},
                     {{"samples", (dir / "s.csv").string()}, {"log", ""}},
                     [&](const Error& e) { notes.push_back(EnglishText(e.what)); });
  ASSERT_TRUE(record.id());
  record.Guarding(SysRoot("/"), 100, 200);
  record.Finish("stopped", 0, 7);
  EXPECT_TRUE(notes.empty()) << notes.front();

  auto journal = Journal::Open(path, JournalOptions{.read_only = true});
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  auto run = journal->FindRun(*record.id());
  ASSERT_TRUE(run && *run);
  EXPECT_EQ((*run)->kind, "watch");
  EXPECT_EQ((*run)->command, (std::vector<std::string>{"headroom", "watch"}));
  EXPECT_EQ((*run)->status, "stopped");
  const std::string samples = (dir / "s.csv").string();
  EXPECT_EQ((*run)->summary_json,
            nlohmann::json({{"log", nullptr}, {"rows", 7}, {"samples", samples}}).dump());
  auto events = journal->Events(*record.id());
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].type, "files");
  EXPECT_EQ((*events)[0].data_json,
            nlohmann::json({{"log", nullptr}, {"samples", samples}}).dump());
  EXPECT_EQ((*events)[1].type, "start");
  EXPECT_NE((*events)[1].data_json.find("\"kill_below_bytes\":100"), std::string::npos);
}

TEST(WatchRecord, AJournalThatCannotBeHadIsANote) {
  std::vector<std::string> notes;
  WatchRecord record(Result<std::filesystem::path>(Error{Msg("no journal here")}), {"sleep", "1"},
                     {}, [&](const Error& e) { notes.push_back(EnglishText(e.what)); });
  EXPECT_FALSE(record.id());
  record.Finish("exited", 0, 1);  // nothing to finish, nothing thrown
  EXPECT_EQ(notes, (std::vector<std::string>{"no journal here"}));
  WatchRecord off;
  EXPECT_FALSE(off.id());
  off.Finish("stopped", 0, 0);
}

}  // namespace
}  // namespace headroom
