// `headroom sweep`: flags -> grid + template + limits -> preflight (leftovers, MemAvailable)
// -> RunSweep -> the answer, a Markdown table (or JSON) and optionally a CSV file.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/duration.h"
#include "base/i18n.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/guard_view.h"
#include "cli/message_text.h"
#include "run/guard.h"
#include "run/guard_record.h"
#include "store/journal.h"
#include "sweep/policy.h"
#include "sweep/results.h"
#include "sweep/sweep.h"
#include "sys/meminfo.h"

namespace headroom {
namespace {

constexpr size_t kNoteChars = 100;

std::string SignedGB(std::optional<int64_t> v) {
  if (!v) return "-";
  return *v < 0 ? "-" + FormatGB(static_cast<uint64_t>(-*v)) : FormatGB(static_cast<uint64_t>(*v));
}

std::string Cell(std::string text) {
  for (char& c : text) {
    if (c == '|' || static_cast<unsigned char>(c) < 0x20) c = c == '|' ? '/' : ' ';
  }
  if (text.size() > kNoteChars) text = text.substr(0, kNoteChars - 3) + "...";
  return text;
}

std::string Value(const Config& c, const std::string& name) {
  const int64_t v = c.Get(name);
  return v < 0 ? "-" : std::to_string(v);
}

void PrintMarkdown(std::FILE* out, const SweepOptions& o, const SweepResult& r) {
  const auto cols = SweepColumns(o.grid);
  std::string head = "|", rule = "|";
  for (const auto& [name, title] : cols) {
    head += " " + title + " |";
    rule += "---|";
  }
  std::fprintf(out, "%s peak_mem | headroom | status | notes |\n%s---|---|---|---|\n", head.c_str(),
               rule.c_str());
  for (const auto& row : r.rows) {
    std::string line = "|";
    for (const auto& [name, title] : cols) line += " " + Value(row.config, name) + " |";
    std::string notes = row.notes;
    // TRANSLATORS: in the notes cell of a trial reused from the journal (resumed sweep).
    if (row.from_journal)
      notes = notes.empty() ? std::string(Tr("from the journal"))
                            : TrFormat("from the journal; {}", notes);
    std::fprintf(out, "%s %s | %s | %s | %s |\n", line.c_str(),
                 row.peak_bytes ? FormatGB(*row.peak_bytes).c_str() : "-",
                 SignedGB(row.headroom_bytes).c_str(),
                 std::string(TrialOutcomeName(row.outcome)).c_str(), Cell(notes).c_str());
  }
  // TRANSLATORS: the legend under the results table; peak_mem and headroom are its column
  // names and stay as they are.
  std::fprintf(
      out, "\n%s\n",
      TrFormat("peak_mem: the trial's peak pool use above the MemAvailable it started from; "
               "headroom: the limit {} minus the trial's pool peak (GB = 1e9 bytes)",
               FormatGB(o.limit_bytes))
          .c_str());
}

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

int RunSweepCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& [app, batch, seq, grad_accum, order, limit, margin, min_available, require_available,
         trial_timeout, grace, settle_timeout, settle_tolerance, state, logs, csv, root_dir, model,
         method, params, command, max_trials, no_bisect, fresh, kill_leftovers, json] =
      FlagsOf<SweepCommandFlags>(given_flags);
  const SysRoot root(root_dir.empty() ? env.default_root : std::filesystem::path(root_dir));
  try {
    if (command.empty())
      throw UsageError{
          Tr("give the command template after --, e.g. -- python train.py --bs {batch}")};
    std::vector<Knob> knobs;
    auto add = [&](const std::string& text, const char* name, const char* flag) {
      if (text.empty()) return;
      auto k = ParseKnob(name, flag, text);
      if (!k) throw UsageError{k.error().message};
      knobs.push_back(std::move(*k));
    };
    add(batch, "batch", "--batch");
    add(seq, "seq", "--seq");
    add(grad_accum, "grad_accum", "--grad-accum");
    for (const auto& p : params) {
      auto k = ParseParamKnob(p);
      if (!k) throw UsageError{k.error().message};
      if (std::any_of(knobs.begin(), knobs.end(),
                      [&](const Knob& o) { return o.name == k->name; })) {
        throw UsageError{TrFormat("--param {}: given twice", k->name)};
      }
      knobs.push_back(std::move(*k));
    }
    if (knobs.empty())
      throw UsageError{Tr("nothing to sweep: give --batch, --seq, --grad-accum or --param")};
    auto grid = OrderGrid(std::move(knobs), order);
    if (!grid) throw UsageError{grid.error().message};
    if (auto ok = CheckTemplate(*grid, command); !ok) throw UsageError{ok.error().message};

    auto info = ReadMemInfo(root);
    if (!info) throw UsageError{info.error().message};
    const uint64_t total = info->total_bytes().value_or(0);
    const auto available = info->available_bytes();
    if (!available || total == 0)
      throw UsageError{Tr("proc/meminfo has no MemTotal or MemAvailable; the sweep needs both")};

    SweepOptions o;
    o.grid = std::move(*grid);
    o.command = command;
    o.limit_bytes =
        limit.empty() ? DefaultSweepLimitBytes(total) : SizeOrPercentFlag(limit, total, "--limit");
    if (o.limit_bytes > total) {
      throw UsageError{TrFormat("--limit: {} is more than MemTotal {}", FormatGB(o.limit_bytes),
                                FormatGB(total))};
    }
    o.margin_bytes = margin.empty() ? DefaultSweepMarginBytes(o.limit_bytes)
                                    : SizeOrPercentFlag(margin, o.limit_bytes, "--margin");
    o.min_available_bytes = KillLevelBytes(env, min_available, "--min-available", total);
    o.bisect = !no_bisect;
    o.max_trials = max_trials;
    o.fresh = fresh;
    o.model = model;
    o.method = method;
    auto duration = [](const std::string& text, const char* flag) {
      auto d = ParseDuration(text);
      if (!d) throw UsageError{fmt::format("{}: {}", flag, d.error().message)};
      return std::chrono::duration_cast<std::chrono::milliseconds>(*d);
    };
    if (!trial_timeout.empty()) o.trial_timeout = duration(trial_timeout, "--trial-timeout");
    o.grace = duration(grace, "--grace");
    o.settle_timeout = duration(settle_timeout, "--settle-timeout");
    o.settle_tolerance_bytes =
        settle_tolerance.empty() ? DefaultSettleToleranceBytes(total)
                                 : SizeOrPercentFlag(settle_tolerance, total, "--settle-tolerance");

    // The journal holds the sweep's state: without it there is no resuming, so it is
    // required (unlike guard, which only records).
    auto path = JournalPath(env, state);
    if (!path) throw UsageError{"--state: " + path.error().message};
    auto journal = Journal::Open(*path);
    if (!journal) throw UsageError{journal.error().message};
    o.log_dir = logs.empty() ? path->parent_path() / "sweeps" : std::filesystem::path(logs);

    // Preflight, as the owners do it: who holds the pool, and is there room to start?
    const auto leftovers = FindLeftovers(root);
    if (!leftovers.empty()) {
      std::fprintf(
          env.err, "headroom: sweep: %s\n",
          TrFormat("{} process(es) that usually hold the pool are running:", leftovers.size())
              .c_str());
      PrintLeftovers(env.err, leftovers);
      if (kill_leftovers) {
        for (const auto& line : SignalLeftovers(root, leftovers, o.grace)) {
          std::fprintf(env.err, "  --kill-leftovers: %s\n", TranslatedText(line).c_str());
        }
      } else {
        std::fprintf(
            env.err, "  %s\n",
            Tr("(nothing was signalled; --kill-leftovers stops them, or stop them yourself)"));
      }
    }
    const uint64_t need =
        require_available.empty()
            ? DefaultRequireAvailableBytes(o.limit_bytes, o.min_available_bytes, total)
            : SizeOrPercentFlag(require_available, total, "--require-available");
    const auto now_available = ReadMemInfo(root);
    const uint64_t avail_now = now_available && now_available->available_bytes()
                                   ? *now_available->available_bytes()
                                   : *available;
    if (avail_now < need) {
      std::fprintf(env.err, "headroom: sweep: %s\n",
                   TrFormat("refusing to start: MemAvailable {} is below --require-available {} "
                            "(default: the limit {} plus the kill level {})",
                            FormatGB(avail_now), FormatGB(need), FormatGB(o.limit_bytes),
                            FormatGB(o.min_available_bytes))
                       .c_str());
      if (leftovers.empty()) {
        std::fprintf(
            env.err, "  %s\n",
            Tr("no known holders of the pool found (vllm, ollama, ray::, python with torch)"));
      }
      return kExitRefused;
    }
    std::fprintf(env.err, "headroom: sweep: %s\n",
                 TrFormat("limit {} pool use (MemTotal {}), margin {}, guard kill level {} "
                          "MemAvailable, journal {}",
                          FormatGB(o.limit_bytes), FormatGB(total), FormatGB(o.margin_bytes),
                          FormatGB(o.min_available_bytes), path->string())
                     .c_str());

    const SweepProgress progress{env.err, ::isatty(::fileno(env.err)) == 1, TranslatedText};
    // Who guards the trials, at which level, for `headroom top`: this process, whose identity
    // is read from the real /proc, not --root's. The trials have no warning level.
    o.guard_start = ThisGuardStart(SysRoot(env.default_root), o.min_available_bytes, 0);
    // RunSweep records every trial in the journal, which a resumed sweep and --json read
    // back: the trials' notes, the stop reasons and the warnings it keeps are English by
    // construction; its progress and warning lines on stderr are in the user's language.
    auto result = RunSweep(root, o, *journal, progress);
    if (!result) throw UsageError{result.error().message};
    const SweepResult& r = *result;
    if (!csv.empty()) {
      std::ofstream f(csv, std::ios::trunc);
      if (!f) {
        PrintError(env,
                   "sweep: " + TrFormat("--csv: cannot write {}: {}", csv, std::strerror(errno)));
      } else if (!(f << SweepResultCsv(o, r) << std::flush)) {
        PrintError(env, "sweep: " + TrFormat("--csv: writing {} failed", csv));
      }
    }
    if (json) {
      std::fprintf(env.out, "%s\n", SweepResultJson(o, r).dump(2).c_str());
      return r.exit_status;
    }
    PrintMarkdown(env.out, o, r);
    std::fprintf(env.out, "\n");
    if (r.best) {
      // TRANSLATORS: {0} is the configuration found, e.g. "batch=16 seq=1024".
      std::fprintf(
          env.out, "%s\n",
          TrFormat("answer: {0}: peak {1} above the baseline, headroom {2} to the limit {3}",
                   r.best->ToText(), r.best_peak_bytes ? FormatGB(*r.best_peak_bytes) : Tr("n/a"),
                   SignedGB(r.best_headroom_bytes), FormatGB(o.limit_bytes))
              .c_str());
    } else {
      std::fprintf(
          env.out, "%s\n",
          TrFormat("answer: none: no config ran ok under the limit {}", FormatGB(o.limit_bytes))
              .c_str());
    }
    for (const auto& why : r.stop_reasons)
      std::fprintf(env.out, "%s\n", TrFormat("stopped by: {}", why).c_str());
    if (!r.stopped_early.empty()) {
      std::fprintf(
          env.out, "%s\n",
          TrFormat("stopped early: {}; rerun the same command to resume", r.stopped_early).c_str());
    }
    std::fprintf(
        env.out, "%s\n",
        TrFormat(
            "run {} in {} ({} trial(s) launched now, {} reused from the journal); trial logs in {}",
            r.run_id, path->string(), r.launched, r.reused, r.trial_log_dir.string())
            .c_str());
    return r.exit_status;
  } catch (const UsageError& e) {
    PrintError(env, "sweep: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
