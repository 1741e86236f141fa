#include "cli/sweep_flags.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <optional>

#include "base/bytes.h"
#include "base/duration.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/i18n.h"
#include "cli/level_flag.h"
#include "cli/message_text.h"
#include "cli/sweep_device_flag.h"
#include "cli/sweep_start.h"
#include "config/pool_levels_config.h"
#include "sweep/policy.h"

namespace headroom {

void AddSweepFlags(CLI::App& app, SweepFlags& flags) {
  auto& [batch, seq, grad_accum, order, limit, margin, min_available, require_available,
         trial_timeout, grace, settle_timeout, settle_tolerance, state, logs, csv, root_dir, model,
         method, device_limit, platform, start, plan_args, params, command, max_trials, no_bisect,
         fresh, kill_leftovers, json] = flags;
  app.add_option("--batch", batch, Tr("values for {batch}"));
  app.add_option("--seq", seq, Tr("values for {seq}"));
  app.add_option("--grad-accum", grad_accum, Tr("values for {grad_accum}"));
  app.add_option("--param", params, Tr("NAME=VALUES for {NAME} (repeatable)"));
  app.add_option("--order", order,
                 Tr("which knob grows first, e.g. batch,seq (default: batch, seq, grad_accum, then "
                    "--param order)"));
  AddSweepStartFlags(app, start, plan_args);
  app.add_option("--limit", limit,
                 Tr("the peak pool use (MemTotal - MemAvailable) a trial may reach (default: "
                    "MemTotal minus 28 GB, scaled for smaller machines, or minus the reserve and "
                    "the warning level where that is more)"));
  app.add_option("--device-limit", device_limit,
                 Tr("on a discrete GPU: the device memory a trial may reach (SIZE), judged by the "
                    "torch allocator peak in the job's step records (needs the companion)"));
  app.add_option("--platform", platform,
                 Tr("unified (default: --limit is the shared pool) or discrete (--limit is the "
                    "device's, as --device-limit)"))
      ->check(CLI::IsMember({"unified", "discrete"}));
  app.add_option("--margin", margin,
                 Tr("skip a trial when its predicted peak plus this passes the limit (default: 3% "
                    "of the limit, at least 256MiB)"));
  app.add_option("--min-available", min_available,
                 Tr("the guard's kill level in every trial: SIZE or PCT (default: [guard] "
                    "kill_level in config.toml, else the larger of 4GiB and 8%)"));
  app.add_option("--require-available", require_available,
                 Tr("refuse to start below this MemAvailable (default: the limit plus the kill "
                    "level, at most MemTotal)"));
  app.add_flag("--kill-leftovers", kill_leftovers,
               Tr("signal the listed holders of the pool (SIGTERM, then SIGKILL) before starting"));
  app.add_option("--max-trials", max_trials, Tr("launch at most N trials in all (default 30)"))
      ->check(CLI::Range(1, 10000));
  app.add_option("--trial-timeout", trial_timeout,
                 Tr("end a trial that runs longer than this (e.g. 20m; default: none)"));
  app.add_option("--grace", grace, Tr("SIGTERM first, SIGKILL after this (default 3s)"));
  app.add_option("--settle-timeout", settle_timeout,
                 Tr("wait at most this for MemAvailable to recover between trials (default 60s)"));
  app.add_option("--settle-tolerance", settle_tolerance,
                 Tr("recovered means within this of the pre-sweep MemAvailable (default: 2% of "
                    "MemTotal, at least 512MiB)"));
  app.add_flag("--no-bisect", no_bisect,
               Tr("do not narrow between the last good and the first bad value"));
  app.add_flag("--fresh", fresh, Tr("start over instead of resuming an earlier run of this sweep"));
  AddJournalFlag(app, state, "--state,--journal");
  app.add_option("--logs", logs,
                 Tr("trial logs go to DIR/<run id>/ (default: sweeps/ beside the journal)"));
  app.add_option("--csv", csv, Tr("also write the results table to FILE"));
  AddJsonFlag(app, json);
  app.add_option("--model", model,
                 Tr("label the sweep with a model name, for plan's measured anchors"));
  app.add_option(
      "--method", method,
      Tr("label the sweep with a method (full, lora, qlora), for plan's measured anchors"));
  AddRootFlag(app, root_dir);
  app.add_option("command", command, Tr("the command template, after --"));
}

SweepOptions SweepOptionsFromFlags(const CliEnv& env, const SweepFlags& f, Grid grid,
                                   uint64_t total) {
  SweepOptions o;
  o.grid = std::move(grid);
  o.command = f.command;
  if (const auto device = SweepDeviceLimit(f.device_limit, f.limit, f.platform)) {
    o.limit_bytes = *device;
    o.device_limit = true;
  } else {
    // The default limit is one of the pool's levels (docs/config.md "The levels"), with the
    // reserve and warning level config.toml sets: a trial at it leaves what a plan that fits
    // does.
    const PoolLevels levels = ResolvePoolLevels(total, LevelInputsOf(env.config.settings));
    auto limit = SweepLimitBytes(
        f.limit.empty() ? std::nullopt : std::optional(PoolAmountFlag(f.limit, total, "--limit")),
        total, levels.sweep_limit.bytes);
    if (!limit) throw UsageError{TranslatedText(limit.error().what)};
    o.limit_bytes = *limit;
  }
  o.margin_bytes = f.margin.empty() ? DefaultSweepMarginBytes(o.limit_bytes)
                                    : SizeOrPercentFlag(f.margin, o.limit_bytes, "--margin");
  o.min_available_bytes = KillLevelBytes(env, f.min_available, "--min-available", total);
  o.bisect = !f.no_bisect;
  o.max_trials = f.max_trials;
  o.fresh = f.fresh;
  o.model = f.model;
  o.method = f.method;
  auto duration = [](const std::string& text, const char* flag) {
    auto d = ParseDuration(text);
    if (!d) throw UsageError{fmt::format("{}: {}", flag, TranslatedText(d.error().what))};
    return std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  };
  if (!f.trial_timeout.empty()) o.trial_timeout = duration(f.trial_timeout, "--trial-timeout");
  o.grace = duration(f.grace, "--grace");
  o.settle_timeout = duration(f.settle_timeout, "--settle-timeout");
  o.settle_tolerance_bytes =
      f.settle_tolerance.empty()
          ? DefaultSettleToleranceBytes(total)
          : SizeOrPercentFlag(f.settle_tolerance, total, "--settle-tolerance");
  return o;
}

}  // namespace headroom
