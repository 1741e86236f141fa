// sweep's flags parsed by their own definitions into RunSweep's options: the defaults of
// sweep/policy.h and the guard where a flag is not given, the flags' values where they
// are, and errors naming the flag.
#include "cli/sweep_flags.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>

#include "base/bytes.h"
#include "guard/guard.h"
#include "sweep/policy.h"
#include "testing_memory.h"

namespace headroom {
namespace {

using testing::kTotalPool;

// The options `words` give, on a machine with kTotalPool bytes of MemTotal.
SweepOptions Options(const std::string& words) {
  SweepFlags f;
  CLI::App app;
  AddSweepFlags(app, f);
  app.parse(words, false);
  auto grid = BuildSweepGrid({f.batch, f.seq, f.grad_accum, f.params, f.order}, f.command);
  EXPECT_TRUE(grid) << EnglishText(grid.error().what);
  return SweepOptionsFromFlags(CliEnv{}, f, grid ? *grid : Grid{}, kTotalPool);
}

// The usage error `words` give, "" when none.
std::string UsageErrorOf(const std::string& words) {
  try {
    Options(words);
  } catch (const UsageError& e) {
    return e.message;
  }
  return "";
}

TEST(SweepFlags, FlagsNotGivenTakeThePolicysDefaults) {
  const SweepOptions o = Options("--batch 1..8 -- python t.py --bs {batch}");
  EXPECT_EQ(o.command, (std::vector<std::string>{"python", "t.py", "--bs", "{batch}"}));
  EXPECT_EQ(o.limit_bytes, DefaultSweepLimitBytes(kTotalPool));
  EXPECT_EQ(o.margin_bytes, DefaultSweepMarginBytes(o.limit_bytes));
  EXPECT_EQ(o.min_available_bytes, DefaultKillLevelBytes(kTotalPool));
  EXPECT_EQ(o.settle_tolerance_bytes, DefaultSettleToleranceBytes(kTotalPool));
  EXPECT_EQ(o.grace, std::chrono::milliseconds(3000));
  EXPECT_EQ(o.settle_timeout, std::chrono::milliseconds(60000));
  EXPECT_FALSE(o.trial_timeout);
  EXPECT_EQ(o.max_trials, 30);
  EXPECT_TRUE(o.bisect);
  EXPECT_FALSE(o.fresh);
}

TEST(SweepFlags, GivenFlagsAreTaken) {
  const SweepOptions o = Options(
      "--batch 1..8 --limit 50% --margin 1GiB --min-available 6GiB --trial-timeout 20m "
      "--grace 500ms --settle-timeout 5s --settle-tolerance 2GiB --no-bisect --fresh "
      "--max-trials 5 --model llama-3.1-8b --method qlora -- t {batch}");
  EXPECT_EQ(o.limit_bytes, kTotalPool / 2);
  EXPECT_EQ(o.margin_bytes, 1 * kGiB);
  EXPECT_EQ(o.min_available_bytes, 6 * kGiB);
  EXPECT_EQ(o.trial_timeout, std::chrono::milliseconds(20 * 60 * 1000));
  EXPECT_EQ(o.grace, std::chrono::milliseconds(500));
  EXPECT_EQ(o.settle_timeout, std::chrono::milliseconds(5000));
  EXPECT_EQ(o.settle_tolerance_bytes, 2 * kGiB);
  EXPECT_FALSE(o.bisect);
  EXPECT_TRUE(o.fresh);
  EXPECT_EQ(o.max_trials, 5);
  EXPECT_EQ(o.model, "llama-3.1-8b");
  EXPECT_EQ(o.method, "qlora");
}

TEST(SweepFlags, BadValuesAreUsageErrorsNamingTheFlag) {
  EXPECT_EQ(UsageErrorOf("--batch 1..8 --limit 200GiB -- t {batch}"),
            "--limit: " + FormatGB(200 * kGiB) + " is more than MemTotal " + FormatGB(kTotalPool));
  EXPECT_EQ(UsageErrorOf("--batch 1..8 --grace soon -- t {batch}").rfind("--grace: ", 0), 0u);
  EXPECT_EQ(
      UsageErrorOf("--batch 1..8 --trial-timeout 0 -- t {batch}").rfind("--trial-timeout: ", 0),
      0u);
  EXPECT_EQ(UsageErrorOf("--batch 1..8 --margin lots -- t {batch}").rfind("--margin: ", 0), 0u);
  EXPECT_EQ(UsageErrorOf("--batch 1..8 -- t {batch}"), "");
}

}  // namespace
}  // namespace headroom
