// guard's flags parsed by their own definitions into the guard's request: the configured
// levels where none is given, the flags' own otherwise, the journal unless --no-journal.
#include "cli/guard_flags.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>

#include "base/bytes.h"
#include "guard/guard.h"
#include "testing_memory.h"

namespace headroom {
namespace {

using testing::kTotalPool;

GuardRequest RequestOf(const std::string& words) {
  GuardFlags f;
  CLI::App app;
  AddGuardFlags(app, f);
  app.parse(words, false);
  return GuardRequestFromFlags(CliEnv{}, f, kTotalPool);
}

TEST(GuardFlags, TheRequestHasTheDefaultLevelsAndTheJournal) {
  const GuardRequest r = RequestOf("-- python train.py");
  EXPECT_EQ(r.command, (std::vector<std::string>{"python", "train.py"}));
  EXPECT_EQ(r.pid, "");
  EXPECT_EQ(r.min_available_bytes, DefaultKillLevelBytes(kTotalPool));
  EXPECT_EQ(r.warn_available_bytes, 2 * DefaultKillLevelBytes(kTotalPool));
  EXPECT_EQ(r.grace, "3s");
  EXPECT_TRUE(r.use_cgroup);
  EXPECT_FALSE(r.psi_kill || r.torch_cap);
  EXPECT_TRUE(r.journal);  // recorded unless --no-journal
}

TEST(GuardFlags, GivenFlagsAreTaken) {
  const GuardRequest r = RequestOf(
      "--min-available 6GiB --warn-available 10% --grace 1s --events e.jsonl --psi-kill "
      "--no-cgroup --torch-cap --no-journal --pid 42");
  EXPECT_EQ(r.pid, "42");
  EXPECT_EQ(r.min_available_bytes, 6 * kGiB);
  EXPECT_EQ(r.warn_available_bytes, static_cast<uint64_t>(0.1 * static_cast<double>(kTotalPool)));
  EXPECT_EQ(r.grace, "1s");
  EXPECT_EQ(r.events_path, "e.jsonl");
  EXPECT_TRUE(r.psi_kill && r.torch_cap);
  EXPECT_FALSE(r.use_cgroup);
  EXPECT_FALSE(r.journal);
  try {
    RequestOf("--min-available lots -- t");
    ADD_FAILURE() << "a bad level must throw";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.message.rfind("--min-available: ", 0), 0u) << e.message;
  }
}

TEST(GuardFlags, TheGroupFlagsWithAnAddressOrAlone) {
  EXPECT_FALSE(RequestOf("-- t").group.given);
  GuardRequest r = RequestOf(
      "--group 10.0.0.1:29400 --node-rank 1 --nodes 2 --group-secret-file s --heartbeat 250ms "
      "--heartbeat-timeout 2s --group-wait 30s -- t");
  EXPECT_TRUE(r.group.given);
  EXPECT_EQ(r.group.address, "10.0.0.1:29400");
  EXPECT_EQ(r.group.node_rank, "1");
  EXPECT_EQ(r.group.nodes, "2");
  EXPECT_EQ(r.group.secret_file, "s");
  EXPECT_EQ(r.group.heartbeat, "250ms");
  EXPECT_EQ(r.group.heartbeat_timeout, "2s");
  EXPECT_EQ(r.group.group_wait, "30s");
  EXPECT_EQ(r.command, (std::vector<std::string>{"t"}));
  r = RequestOf("--group -- t");  // alone: from the launcher's variables
  EXPECT_TRUE(r.group.given);
  EXPECT_EQ(r.group.address, "");
  EXPECT_EQ(r.command, (std::vector<std::string>{"t"}));
}

}  // namespace
}  // namespace headroom
