// `headroom sweep`: flags (cli/sweep_flags.h) -> grid + template + limits -> preflight
// (leftovers, MemAvailable) -> RunSweep -> the answer, a Markdown table (or JSON) and
// optionally a CSV file.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/config_defaults.h"
#include "cli/i18n.h"
#include "cli/level_flag.h"
#include "cli/message_text.h"
#include "cli/sweep_flags.h"
#include "cli/sweep_start.h"
#include "cli/sweep_view.h"
#include "guard/guard.h"
#include "guard/guard_record.h"
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
          "start (MemAvailable below --require-available); {} an answer, but a failure that is "
          "not about memory left values above it untried; {} interrupted",
          kExitRefused, kExitSweepUntried, kExitSweepInterrupted),
      "headroom sweep"};
  SweepFlags fl;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineSweepFlags() {
  auto defined = std::make_unique<SweepCommandFlags>();
  AddSweepFlags(defined->app, defined->fl);
  return defined;
}

namespace {

// Preflight, as the owners do it: who holds the pool, and is there room to start? false:
// refused (the lines are printed).
bool RoomForTheSweep(const CliEnv& env, const SysRoot& root, const SweepFlags& f,
                     const SweepOptions& o, uint64_t total, uint64_t available) {
  const auto leftovers = FindLeftovers(root);
  PrintSweepLeftovers(env.err, leftovers, f.kill_leftovers,
                      f.kill_leftovers && !leftovers.empty()
                          ? SignalLeftovers(root, leftovers, o.grace)
                          : std::vector<Message>{});
  const uint64_t need =
      f.require_available.empty()
          // The device's limit is not the host's: the host needs only the kill level.
          ? DefaultRequireAvailableBytes(o.device_limit ? 0 : o.limit_bytes, o.min_available_bytes,
                                         total)
          : PoolAmountFlag(f.require_available, total, "--require-available");
  const auto now = ReadMemInfo(root);
  const uint64_t avail_now = now && now->available_bytes() ? *now->available_bytes() : available;
  if (avail_now >= need) return true;
  PrintSweepRefusal(env.err, o, avail_now, need, leftovers.empty());
  return false;
}

}  // namespace

int RunSweepCommand(const CliEnv& env, CommandFlags& given_flags) {
  SweepFlags& f = FlagsOf<SweepCommandFlags>(given_flags).fl;
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
    SweepOptions o = SweepOptionsFromFlags(env, f, std::move(*grid), total);
    const auto start_lines = ResolveSweepStart(env, f, SweepPoolUse(root, total, *available), &o);

    // The journal holds the sweep's state: without it there is no resuming, so it is
    // required (unlike guard, which only records).
    auto path = JournalPath(env, f.state);
    if (!path) throw UsageError{"--state: " + TranslatedText(path.error().what)};
    const std::vector<std::string> journal_file{path->string()};
    if (!f.csv.empty()) CheckOutputFlag(f.csv, "--csv", journal_file);  // before any trial
    auto journal = Journal::Open(*path);
    if (!journal) throw UsageError{TranslatedText(journal.error().what)};
    o.log_dir = SweepLogDir(f.logs, *path);
    if (!RoomForTheSweep(env, root, f, o, total, *available)) return kExitRefused;
    PrintSweepStart(env.err, o, total, *path);
    PrintSweepStartLines(env.err, start_lines);

    const SweepProgress progress{env.err, ::isatty(::fileno(env.err)) == 1, TranslatedText};
    // Who guards the trials, at which level, for `headroom top`: this process, whose identity
    // is read from the real /proc, not --root's. The trials have no warning level.
    o.guard_start = ThisGuardStart(SysRoot(env.default_root), o.min_available_bytes, 0);
    // RunSweep records every trial in the journal, which a resumed sweep and --json read
    // back: the trials' notes, the stop reasons and the warnings it keeps are English by
    // construction; its progress and warning lines on stderr are in the user's language.
    auto result = RunSweep(root, o, *journal, progress);
    if (!result) throw UsageError{TranslatedText(result.error().what)};
    // A --csv that cannot be written is on stderr and makes a successful sweep's status
    // kExitUsage.
    int status = result->exit_status;
    if (auto csv = f.csv.empty() ? Result<bool>(true) : WriteSweepResultCsv(f.csv, o, *result);
        !csv) {
      PrintError(env, "sweep: " + TranslatedText(csv.error().what));
      if (status == kExitOk) status = kExitUsage;
    }
    if (f.json) {
      std::fprintf(env.out, "%s\n", SweepResultJson(o, *result).dump(2).c_str());
    } else {
      PrintSweepResult(env.out, o, *result, *path);
      PrintPlanGap(env.out, o, *result);
    }
    return status;
  } catch (const UsageError& e) {
    PrintError(env, "sweep: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
