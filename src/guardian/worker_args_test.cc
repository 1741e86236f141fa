#include "guardian/worker_args.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace headroom {
namespace {

GuardianRunSettings Full() {
  GuardianRunSettings s;
  s.options.min_available_bytes = 4ULL << 30;
  s.options.warn_available_bytes = 8ULL << 30;
  s.options.grace = std::chrono::milliseconds(2500);
  s.options.dry_run = true;
  s.options.release_driver_pools = true;
  s.options.choice.only = {*ParseScope("4242"), *ParseScope("/system.slice/x.service"),
                           *ParseScope("python*")};
  s.options.choice.protect = {"sshd", "a=b c\nd"};
  s.options.choice.prefer = {"vllm*"};
  s.events_path = "/var/log/ev ents.jsonl";
  s.journal = "/var/lib/headroom/journal.db";
  s.registry = "/var/lib/headroom/journal.db";
  s.run_id = 31337;
  s.nvml_library = "";
  s.on_event = "logger -t x \"$HEADROOM_EVENT_TYPE\"";
  s.psi_kill = true;
  s.locale_dir = "/usr/share/locale";
  s.reload_program = "/usr/bin/headroom";
  s.reload_args = {"guardian", "--min-available", "4GiB", "--protect", "a=b"};
  return s;
}

std::vector<std::string> Base() {
  return {"min-available=1000", "warn-available=2000", "grace-ms=300"};
}

std::string Refused(std::vector<std::string> words) {
  auto r = DecodeWorkerArgs(words);
  return r ? std::string("accepted") : EnglishText(r.error().what);
}

TEST(WorkerArgs, EverySettingComesBackAsItWent) {
  const GuardianRunSettings s = Full();
  auto back = DecodeWorkerArgs(EncodeWorkerArgs(s));
  ASSERT_TRUE(back) << EnglishText(back.error().what);
  EXPECT_EQ(back->options.min_available_bytes, s.options.min_available_bytes);
  EXPECT_EQ(back->options.warn_available_bytes, s.options.warn_available_bytes);
  EXPECT_EQ(back->options.grace, s.options.grace);
  EXPECT_TRUE(back->options.dry_run);
  EXPECT_TRUE(back->options.release_driver_pools);
  ASSERT_EQ(back->options.choice.only.size(), 3u);
  EXPECT_EQ(back->options.choice.only[0].kind, Scope::Kind::kTree);
  EXPECT_EQ(back->options.choice.only[0].pid, 4242);
  EXPECT_EQ(back->options.choice.only[1].kind, Scope::Kind::kCgroup);
  EXPECT_EQ(back->options.choice.only[2].text, "python*");
  EXPECT_EQ(back->options.choice.protect, s.options.choice.protect);
  EXPECT_EQ(back->options.choice.prefer, s.options.choice.prefer);
  EXPECT_EQ(back->events_path, s.events_path);
  EXPECT_EQ(back->journal, s.journal);
  EXPECT_EQ(back->registry, s.registry);
  EXPECT_EQ(back->run_id, 31337);
  EXPECT_EQ(back->nvml_library, std::optional<std::string>(""));
  EXPECT_EQ(back->on_event, s.on_event);
  EXPECT_TRUE(back->psi_kill);
  EXPECT_EQ(back->locale_dir, s.locale_dir);
  EXPECT_EQ(back->reload_program, s.reload_program);
  EXPECT_EQ(back->reload_args, s.reload_args);
}

TEST(WorkerArgs, WhatWasNotGivenStaysOff) {
  auto back = DecodeWorkerArgs(Base());
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->options.dry_run);
  EXPECT_FALSE(back->journal.has_value());
  EXPECT_FALSE(back->registry.has_value());
  EXPECT_FALSE(back->nvml_library.has_value());  // no nvml= word: --no-nvml
  EXPECT_TRUE(back->options.choice.only.empty());
  EXPECT_TRUE(back->reload_program.empty());
}

TEST(WorkerArgs, HostileWordsAreRefusedWithTheirName) {
  auto with = [](std::vector<std::string> extra) {
    auto w = Base();
    w.insert(w.end(), extra.begin(), extra.end());
    return Refused(w);
  };
  EXPECT_EQ(Refused({}), "min-available: missing");
  EXPECT_EQ(Refused({"min-available=1000", "grace-ms=1"}), "warn-available: missing");
  EXPECT_EQ(with({"--min-available"}), "'--min-available': not key=value");
  EXPECT_EQ(with({"colour=red"}), "'colour': unknown setting");
  EXPECT_EQ(with({"grace-ms=5"}), "grace-ms: given twice");
  EXPECT_EQ(with({"dry-run=yes"}), "dry-run=yes: not 1");
  EXPECT_EQ(with({"only="}), "only: empty");
  EXPECT_EQ(with({"only=1"}), "only: '1' is not a process id");
  EXPECT_EQ(with({"events="}), "events: empty");
  EXPECT_EQ(with({"run-id=0"}), "run-id=0: not a run");
  EXPECT_EQ(with({"run-id=-3"}), "run-id=-3: not a run");
  EXPECT_EQ(with({"reload-arg=guardian"}), "reload-arg without reload-program");
  for (const char* bad :
       {"", "-1", "+5", " 5", "5 ", "1e9", "0x10", "1125899906842625", "99999999999999999999999"}) {
    EXPECT_EQ(Refused({std::string("min-available=") + bad, "warn-available=0", "grace-ms=0"}),
              std::string("min-available=") + bad + ": not a level")
        << bad;
  }
  EXPECT_EQ(Refused({"min-available=0", "warn-available=0", "grace-ms=0"}),
            "min-available=0: not a level");
  EXPECT_EQ(Refused({"min-available=2000", "warn-available=2000", "grace-ms=0"}),
            "warn-available=2000: not a level above the kill level");
  EXPECT_EQ(Refused({"min-available=2000", "warn-available=0", "grace-ms=31536000001"}),
            "grace-ms=31536000001: not a duration");
  // No warning level (0) is a setting; a value may hold '=' and any byte but NUL.
  EXPECT_EQ(Refused({"min-available=2000", "warn-available=0", "grace-ms=0", "on-event=a=b"}),
            "accepted");
}

TEST(ReloadedLevels, TheLineComesBackAndAnythingElseIsRefused) {
  const ReloadedLevels l{4ULL << 30, 8ULL << 30, std::chrono::milliseconds(3000)};
  EXPECT_EQ(EncodeReloadedLevels(l), "levels 4294967296 8589934592 3000\n");
  auto back = DecodeReloadedLevels(EncodeReloadedLevels(l));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->min_available_bytes, l.min_available_bytes);
  EXPECT_EQ(back->warn_available_bytes, l.warn_available_bytes);
  EXPECT_EQ(back->grace, l.grace);
  auto refused = DecodeReloadedLevels("error: [guardian] kill_level: not a size");
  ASSERT_FALSE(refused);
  EXPECT_EQ(EnglishText(refused.error().what), "[guardian] kill_level: not a size");
  for (const char* bad :
       {"", "levels", "levels 1 2", "levels 1 2 3 4", "levels 0 2 3", "levels 2 2 3", "level 1 2 3",
        "levels 1 2 x", "levels  1 2 3", "levels 1 2 3\nlevels 1 2 3\n", "error: a\nb"}) {
    EXPECT_FALSE(DecodeReloadedLevels(bad)) << bad;
  }
}

}  // namespace
}  // namespace headroom
