// `headroom sweep`: flags -> grid + template + limits -> preflight (leftovers, MemAvailable)
// -> RunSweep -> the answer, a Markdown table (or JSON) and optionally a CSV file.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/duration.h"
#include "base/safe_file.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "cli/sweep_view.h"
#include "run/guard.h"
#include "run/guard_record.h"
#include "sweep/policy.h"
#include "sweep/results.h"
#include "sweep/sweep.h"
#include "sys/meminfo.h"

namespace headroom {
namespace {

// sweep's flags: the app, then the variables its options write.
struct SweepCommandFlags final : CommandFlags {
  CLI::App app{
      TrFormat(
          "Find the largest batch or packing that fits, one guarded trial at a time.\n\n"
          "  headroom sweep --batch 1..64 --seq 1024 -- python train.py --bs {{batch}} --max-len "
          "{{seq}}\n\n"
          "Each trial fills the placeholders ({{batch}}, {{seq}}, {{grad_accum}}, and any {{name}} "
          "given "
          "with --param), runs under the guard, and is measured by its peak pool use (MemAvailable "
          "read every 10 ms). Knobs grow one at a time (--order); after two ok trials a fitted "
          "peak(knob) skips any trial predicted over --limit, then the search narrows between the "
          "last good and the first bad value. Every finished trial is in the journal: rerunning "
          "the same sweep resumes it.\n\n"
          "VALUES: LO..HI (doubling from LO, any value in between when narrowing), LO..HI:STEP "
          "(on the step), or V1,V2,... (only those).\n\n"
          "exit status: 0 an answer was found; 1 no config ran ok; 2 usage error; {} refused to "
          "start (MemAvailable below --require-available); {} interrupted",
          kExitRefused, kExitSweepInterrupted),
      "headroom sweep"};
  std::string batch, seq, grad_accum, order, limit, margin, min_available, require_available;
  std::string trial_timeout, grace = "3s", settle_timeout = "60s", settle_tolerance, state, logs,
                             csv, root_dir;
  std::string model, method;
  std::vector<std::string> params, command;
  int max_trials = 30;
  bool no_bisect = false, fresh = false, kill_leftovers = false, json = false;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineSweepFlags() {
  auto defined = std::make_unique<SweepCommandFlags>();
  auto& [app, batch, seq, grad_accum, order, limit, margin, min_available, require_available,
         trial_timeout, grace, settle_timeout, settle_tolerance, state, logs, csv, root_dir, model,
         method, params, command, max_trials, no_bisect, fresh, kill_leftovers, json] = *defined;
  app.add_option("--batch", batch, Tr("values for {batch}"));
  app.add_option("--seq", seq, Tr("values for {seq}"));
  app.add_option("--grad-accum", grad_accum, Tr("values for {grad_accum}"));
  app.add_option("--param", params, Tr("NAME=VALUES for {NAME} (repeatable)"));
  app.add_option("--order", order,
                 Tr("which knob grows first, e.g. batch,seq (default: batch, seq, grad_accum, then "
                    "--param order)"));
  app.add_option("--limit", limit,
                 Tr("the peak pool use (MemTotal - MemAvailable) a trial may reach (default: "
                    "MemTotal minus 28 GB, scaled for smaller machines)"));
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
  return defined;
}

namespace {

// The flags, else the defaults (sweep/policy.h, the configured kill level): the options
// RunSweep takes, less the log folder and the guard's record, which need the journal.
SweepOptions OptionsFromFlags(const CliEnv& env, const SweepCommandFlags& f, Grid grid,
                              uint64_t total) {
  SweepOptions o;
  o.grid = std::move(grid);
  o.command = f.command;
  o.limit_bytes = f.limit.empty() ? DefaultSweepLimitBytes(total)
                                  : SizeOrPercentFlag(f.limit, total, "--limit");
  if (o.limit_bytes > total) {
    throw UsageError{
        TrFormat("--limit: {} is more than MemTotal {}", FormatGB(o.limit_bytes), FormatGB(total))};
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

// Preflight, as the owners do it: who holds the pool, and is there room to start? false:
// refused (the lines are printed).
bool RoomToStart(const CliEnv& env, const SysRoot& root, const SweepCommandFlags& f,
                 const SweepOptions& o, uint64_t total, uint64_t available) {
  const auto leftovers = FindLeftovers(root);
  PrintSweepLeftovers(env.err, leftovers, f.kill_leftovers,
                      f.kill_leftovers && !leftovers.empty()
                          ? SignalLeftovers(root, leftovers, o.grace)
                          : std::vector<Message>{});
  const uint64_t need =
      f.require_available.empty()
          ? DefaultRequireAvailableBytes(o.limit_bytes, o.min_available_bytes, total)
          : SizeOrPercentFlag(f.require_available, total, "--require-available");
  const auto now = ReadMemInfo(root);
  const uint64_t avail_now = now && now->available_bytes() ? *now->available_bytes() : available;
  if (avail_now >= need) return true;
  PrintSweepRefusal(env.err, o, avail_now, need, leftovers.empty());
  return false;
}

// --csv, replacing only a regular file or nothing (checked before the first trial as well); a
// failure is on stderr and makes a successful sweep's status kExitUsage.
int WriteCsv(const CliEnv& env, const std::string& csv, const SweepOptions& o,
             const SweepResult& r) {
  if (auto e = ReplaceFile(csv, SweepResultCsv(o, r))) {
    PrintError(env, "sweep: --csv: " + TranslatedText(e->what));
    return r.exit_status == kExitOk ? kExitUsage : r.exit_status;
  }
  return r.exit_status;
}

}  // namespace

int RunSweepCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& f = FlagsOf<SweepCommandFlags>(given_flags);
  const SysRoot root(f.root_dir.empty() ? env.default_root : std::filesystem::path(f.root_dir));
  try {
    if (f.command.empty())
      throw UsageError{
          Tr("give the command template after --, e.g. -- python train.py --bs {batch}")};
    auto grid = BuildSweepGrid({f.batch, f.seq, f.grad_accum, f.params, f.order}, f.command);
    if (!grid) throw UsageError{TranslatedText(grid.error().what)};
    auto info = ReadMemInfo(root);
    if (!info) throw UsageError{TranslatedText(info.error().what)};
    const uint64_t total = info->total_bytes().value_or(0);
    const auto available = info->available_bytes();
    if (!available || total == 0)
      throw UsageError{Tr("proc/meminfo has no MemTotal or MemAvailable; the sweep needs both")};
    SweepOptions o = OptionsFromFlags(env, f, std::move(*grid), total);

    // The journal holds the sweep's state: without it there is no resuming, so it is
    // required (unlike guard, which only records).
    auto path = JournalPath(env, f.state);
    if (!path) throw UsageError{"--state: " + TranslatedText(path.error().what)};
    const std::vector<std::string> journal_file{path->string()};
    if (!f.csv.empty()) CheckOutputFlag(f.csv, "--csv", journal_file);  // before any trial
    auto journal = Journal::Open(*path);
    if (!journal) throw UsageError{TranslatedText(journal.error().what)};
    o.log_dir = f.logs.empty() ? path->parent_path() / "sweeps" : std::filesystem::path(f.logs);
    if (!RoomToStart(env, root, f, o, total, *available)) return kExitRefused;
    PrintSweepStart(env.err, o, total, *path);

    const SweepProgress progress{env.err, ::isatty(::fileno(env.err)) == 1, TranslatedText};
    // Who guards the trials, at which level, for `headroom top`: this process, whose identity
    // is read from the real /proc, not --root's. The trials have no warning level.
    o.guard_start = ThisGuardStart(SysRoot(env.default_root), o.min_available_bytes, 0);
    // RunSweep records every trial in the journal, which a resumed sweep and --json read
    // back: the trials' notes, the stop reasons and the warnings it keeps are English by
    // construction; its progress and warning lines on stderr are in the user's language.
    auto result = RunSweep(root, o, *journal, progress);
    if (!result) throw UsageError{TranslatedText(result.error().what)};
    const int status = f.csv.empty() ? result->exit_status : WriteCsv(env, f.csv, o, *result);
    if (f.json) {
      std::fprintf(env.out, "%s\n", SweepResultJson(o, *result).dump(2).c_str());
    } else {
      PrintSweepResult(env.out, o, *result, *path);
    }
    return status;
  } catch (const UsageError& e) {
    PrintError(env, "sweep: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
