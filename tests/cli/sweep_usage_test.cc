// `headroom sweep`'s usage errors: each a one-line message naming the flag, exit status 2,
// and no trial launched (the journal is never created).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "run_cli.h"

namespace headroom {
namespace {

using testing::RunCli;

struct UsageRow {
  std::vector<std::string> args;
  std::string message;
};

TEST(SweepUsage, BadInputIsAOneLineErrorWithStatusTwo) {
  const std::string journal = (std::filesystem::temp_directory_path() /
                               ("headroom-sweep-usage-" + std::to_string(getpid()) + ".db"))
                                  .string();
  const UsageRow rows[] = {
      {{"--batch", "1..4"}, "give the command template after --"},
      {{"--", "train", "{batch}"}, "nothing to sweep: give --batch"},
      {{"--batch", "0..4", "--", "train", "{batch}"},
       "--batch: '0..4': '0' is not a whole number from 1"},
      {{"--batch", "1..4", "--", "train"},
       "--batch is given but the command has no {batch} to fill"},
      {{"--batch", "1..4", "--", "train", "{batch}", "{lr}"},
       "the command has {lr} but no values for it: give --param lr=V1,V2"},
      {{"--batch", "1..4", "--order", "seq", "--", "train", "{batch}"},
       "--order: 'seq' is not a knob of this sweep"},
      {{"--batch", "1..4", "--limit", "100%", "--", "train", "{batch}"},
       "--limit: '100%' is not a percentage in (0, 100)"},
      {{"--batch", "1..4", "--limit", "999TB", "--", "train", "{batch}"}, "--limit: "},
      {{"--batch", "1..4", "--trial-timeout", "soon", "--", "train", "{batch}"},
       "--trial-timeout: "},
      {{"--batch", "1..4", "--param", "lr", "--", "train", "{batch}"},
       "--param: 'lr' is not NAME=VALUES"},
      {{"--batch", "1..4", "--max-trials", "0", "--", "train", "{batch}"}, "--max-trials"},
  };
  for (const auto& row : rows) {
    std::vector<std::string> args = {"sweep", "--state", journal};
    args.insert(args.end(), row.args.begin(), row.args.end());
    const auto r = RunCli(args, 10000);
    EXPECT_EQ(r.status, 2) << row.message << "\n" << r.err;
    EXPECT_NE(r.err.find(row.message), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind("headroom: sweep: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(journal));
}

TEST(SweepUsage, HelpNamesThePlaceholdersAndExitStatuses) {
  const auto r = RunCli({"sweep", "--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* s : {"{batch}", "{seq}", "{grad_accum}", "--kill-leftovers", "--no-bisect",
                        "exit status", "LO..HI"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  }
}

}  // namespace
}  // namespace headroom
