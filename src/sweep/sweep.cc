// Implementation notes.
//  - Order of writes: a "trial-start" event before each launch and the trial row after it,
//    each its own committed transaction, so a sweep killed with SIGKILL mid-trial loses
//    that trial only, and the rerun can say which one it was (a start with no row).
//  - Replay: every finished trial of the run with the same key is reported to the search
//    before the first Next(); the search then never asks for those configs again.
//    Skipped rows are not replayed: the search recomputes them (the baseline may differ).
//  - Baseline: the pool use a trial starts from is read right before the search decides,
//    because the decision (prediction + margin against the limit) depends on it.
//  - A SIGINT/SIGTERM/HUP during a trial goes to the job (the guard forwards it); that
//    trial is not recorded (it did not fail on its own) and the sweep stops, resumable.
#include "sweep/sweep.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/bytes.h"
#include "base/message.h"
#include "base/safe_file.h"
#include "guard/pidfd.h"
#include "store/recorded_run.h"
#include "sweep/start.h"
#include "sweep/trial.h"
#include "sys/meminfo.h"
#include "sys/processes.h"
#include "sys/zoneinfo.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Non-terminal progress: one line per this much of a running trial.
constexpr double kPlainProgressSeconds = 10.0;
constexpr auto kSettlePoll = std::chrono::milliseconds(100);
// Settled: MemAvailable rose by less than this over the last kSettleStill.
constexpr uint64_t kSettleStillBytes = 32ULL << 20;
constexpr auto kSettleStill = std::chrono::milliseconds(500);
// The noise of a peak reading is never taken as less than this (a few pages of a trainer's
// RSS differ from run to run).
constexpr uint64_t kNoiseFloorBytes = 16ULL << 20;

std::optional<TrialOutcome> ParseOutcome(std::string_view name) {
  for (auto o :
       {TrialOutcome::kOk, TrialOutcome::kOverLimit, TrialOutcome::kKilledByGuard,
        TrialOutcome::kOom, TrialOutcome::kError, TrialOutcome::kTimeout, TrialOutcome::kSkipped}) {
    if (TrialOutcomeName(o) == name) return o;
  }
  return std::nullopt;
}

// A config from the journal, in the grid's knob order; nullopt when it does not belong to
// this grid (a key collision would be a bug, but a hand-edited journal is outside data).
std::optional<Config> ConfigFromJson(const Grid& grid, const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || j.size() != grid.knobs.size()) return std::nullopt;
  Config c;
  for (const auto& k : grid.knobs) {
    const auto it = j.find(k.name);
    if (it == j.end() || !it->is_number_integer()) return std::nullopt;
    c.values.emplace_back(k.name, it->get<int64_t>());
  }
  return c;
}

struct Memory {
  uint64_t total = 0;
  uint64_t available = 0;
};

// MemAvailable plus the free pages on per-CPU lists (sys/zoneinfo.h), as the trials
// measure it, so baselines and peaks are on one scale.
std::optional<Memory> ReadMemory(const SysRoot& root, PerCpuFreeReader& per_cpu) {
  auto info = ReadMemInfo(root);
  if (!info || !info->total_bytes() || !info->available_bytes()) return std::nullopt;
  const uint64_t available = *info->available_bytes() + per_cpu.ReadBytes().value_or(0);
  return Memory{*info->total_bytes(), std::min(available, *info->total_bytes())};
}

// Which reading the trial was judged by, for its notes (sweep/trial_peak.h).
Message PeakMeasureNote(const TrialRun& run) {
  const std::string& m = run.peak_measure;
  if (m == "cgroup") return Msg("peak: the job cgroup's memory.peak");
  if (m == "tree-rss") return Msg("peak: the job's process tree peak RSS");
  if (m == "step-records")
    return Msg("peak: the job's step records (torch allocator peak + host peak RSS)");
  if (m == "device-allocator")
    return Msg("peak: the device's torch allocator peak from the job's step records");
  if (m == "none") return Msg("peak: none (no device peak in the step records)");
  if (run.own_peak_bytes) {
    // TRANSLATORS: {1} is the job's own reading's source: cgroup, tree-rss or step-records.
    return Msg("peak: the fall in MemAvailable, above the job's own {0} ({1})",
               GB(*run.own_peak_bytes), run.own_peak_measure);
  }
  return Msg("peak: the fall in MemAvailable (no reading of the job's own)");
}

SweepRow Row(const Config& config, TrialOutcome outcome, std::optional<uint64_t> peak,
             std::optional<int64_t> headroom, const std::string& notes, bool from_journal) {
  SweepRow row;
  row.config = config;
  row.outcome = outcome;
  row.peak_bytes = peak;
  row.headroom_bytes = headroom;
  row.notes = notes;
  row.from_journal = from_journal;
  return row;
}

std::string SafeName(const Config& c) {
  std::string out;
  for (const auto& [k, v] : c.values) out += fmt::format("-{}{}", k, v);
  return out;
}

class SteadySweepClock final : public SweepClock {
 public:
  Clock::time_point Now() override { return Clock::now(); }
  void SleepFor(std::chrono::milliseconds duration) override {
    std::this_thread::sleep_for(duration);
  }
};

class Progress {
 public:
  explicit Progress(const SweepProgress& p) : p_(p) {}
  // A line that stays.
  void Line(const Message& line) {
    if (!p_.file) return;
    const std::string text = p_.render ? p_.render(line) : EnglishText(line);
    if (p_.terminal && live_) std::fputs("\r\033[K", p_.file);
    live_ = false;
    std::fprintf(p_.file, "%s\n", text.c_str());
    std::fflush(p_.file);
  }
  // A line rewritten in place on a terminal; elsewhere printed every 10 s.
  void Live(const Message& line, double elapsed_s) {
    if (!p_.file) return;
    if (p_.terminal) {
      const std::string text = p_.render ? p_.render(line) : EnglishText(line);
      std::fprintf(p_.file, "\r\033[K%s", text.c_str());
      live_ = true;
      std::fflush(p_.file);
    } else if (elapsed_s - last_plain_s_ >= kPlainProgressSeconds) {
      last_plain_s_ = elapsed_s;
      Line(line);
    }
  }
  void ResetTrial() { last_plain_s_ = 0; }
  // A warning: English in the result (sweep --json), rendered for the screen.
  void Warn(const Message& warning, std::vector<std::string>& warnings) {
    warnings.push_back(EnglishText(warning));
    Line(Msg("sweep: warning: {}", warning));
  }

 private:
  SweepProgress p_;
  bool live_ = false;
  double last_plain_s_ = 0;
};

SearchOptions SearchOptionsOf(const SweepOptions& o) {
  SearchOptions s{o.limit_bytes, o.margin_bytes, o.bisect};
  if (o.start) s.start = o.start->value;
  return s;
}

}  // namespace

std::string SweepKey(const SweepOptions& o) {
  nlohmann::json knobs = nlohmann::json::array();
  for (const auto& k : o.grid.knobs) {
    knobs.push_back({{"name", k.name},
                     {"values", k.values},
                     {"range", k.is_range},
                     {"lo", k.lo},
                     {"hi", k.hi},
                     {"step", k.step}});
  }
  nlohmann::json key = {{"command", o.command},
                        {"knobs", knobs},
                        {"limit_bytes", o.limit_bytes},
                        {"margin_bytes", o.margin_bytes},
                        {"bisect", o.bisect}};
  if (o.device_limit) key["device_limit"] = true;  // older keys unchanged
  return key.dump();
}

Message UntriedText(const UntriedGap& g) {
  const std::string untried = g.first_untried == g.last_untried
                                  ? std::to_string(g.first_untried)
                                  : fmt::format("{}..{}", g.first_untried, g.last_untried);
  // TRANSLATORS: {0} is a knob (batch, seq, ...); {4} the failed trial's own words.
  return Msg("{0} {1} passed; {2} untried: {0} {3} failed ({4}), not memory", g.knob, g.good,
             untried, g.failed, g.failure);
}

std::vector<Message> SignalLeftovers(const SysRoot& root, const std::vector<Leftover>& leftovers,
                                     std::chrono::milliseconds grace) {
  std::vector<Message> done;
  std::vector<std::pair<pid_t, int>> fds;
  for (const auto& l : leftovers) {
    const auto stat = ReadProcStat(root, l.pid);
    auto fd = stat ? OpenVerifiedPidfd(root, l.pid, stat->starttime_ticks) : std::nullopt;
    if (!fd) {
      done.push_back(Msg("pid {} ({}): already gone", l.pid, l.what));
      continue;
    }
    if (PidfdSendSignal(*fd, SIGTERM) != 0) {
      done.push_back(Msg("pid {} ({}): SIGTERM: {}", l.pid, l.what, ErrnoArg{errno}));
      ::close(*fd);
      continue;
    }
    fds.emplace_back(l.pid, *fd);
  }
  const auto deadline = Clock::now() + grace;
  for (auto& [pid, fd] : fds) {
    pollfd p{fd, POLLIN, 0};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count()))) == 1) {
      done.push_back(Msg("pid {}: ended after SIGTERM", pid));
    } else {
      PidfdSendSignal(fd, SIGKILL);
      done.push_back(Msg("pid {}: SIGKILL after {} ms", pid, grace.count()));
    }
    ::close(fd);
  }
  return done;
}

namespace {

// One invocation of RunSweep: what every step reads and writes, by reference.
class SweepRun {
 public:
  SweepRun(const SysRoot& root_in, const SweepOptions& options, Journal& journal_in,
           const SweepProgress& progress_out)
      : root(root_in),
        opt(options),
        journal(journal_in),
        progress(progress_out),
        clock(options.clock ? *options.clock : steady),
        run_trial(options.run_trial ? options.run_trial : TrialRunner(RunTrial)),
        per_cpu(root_in),
        search(options.grid, SearchOptionsOf(options)) {}

  // The run: resumed from the journal (its finished trials replayed to the search), or new.
  Result<bool> Begin(uint64_t baseline) {
    baseline_available = baseline;
    // The run: resumed, or new.
    const std::string key = SweepKey(opt);
    std::optional<int64_t> previous;
    if (!opt.fresh) {
      auto found = journal.FindSweep(key);
      if (!found) return found.error();
      previous = *found;
    }
    std::vector<Message> resume_warnings;  // printed after the resume line
    if (previous) {
      res.run_id = *previous;
      res.resumed = true;
      auto reopened = RecordedRun::Reopen(journal, *previous);
      if (!reopened) return reopened.error();
      recording.emplace(std::move(*reopened));
      auto trials = journal.Trials(*previous);
      if (!trials) return trials.error();
      std::vector<std::string> finished;
      for (const auto& t : *trials) {
        const auto config = ConfigFromJson(opt.grid, t.config_json);
        const auto outcome = ParseOutcome(t.outcome);
        if (!config || !outcome) {
          resume_warnings.push_back(Msg("journal trial {} does not fit this sweep; ignored", t.id));
          continue;
        }
        finished.push_back(config->ToJson());
        if (*outcome == TrialOutcome::kSkipped) {
          written_skips.push_back(config->ToJson());
          continue;
        }
        TrialReport r;
        r.outcome = *outcome;
        if (t.peak_bytes) r.peak_bytes = static_cast<uint64_t>(std::max<int64_t>(0, *t.peak_bytes));
        r.summary = t.notes.empty() ? std::string(TrialOutcomeName(*outcome)) : t.notes;
        search.Report(*config, r);
        ++res.reused;
        res.rows.push_back(Row(*config, *outcome, r.peak_bytes, t.headroom_bytes, t.notes, true));
      }
      // Trials that started and never finished: the previous sweep died during them.
      if (auto events = journal.Events(*previous)) {
        for (const auto& e : *events) {
          if (e.type != "trial-start") continue;
          const auto j = nlohmann::json::parse(e.data_json, nullptr, false);
          if (!j.is_object() || !j.contains("config")) continue;
          const std::string c = j["config"].dump();
          if (std::find(finished.begin(), finished.end(), c) == finished.end()) {
            resume_warnings.push_back(
                Msg("trial {} was interrupted when the previous sweep ended; it runs again", c));
            finished.push_back(c);
          }
        }
      }
      progress.Line(
          Msg("sweep: resuming run {}: {} finished trial(s) from the journal, not repeated",
              res.run_id, res.reused));
    } else {
      auto begun = RecordedRun::Begin(journal, RunKind::kSweep, opt.command, key);
      if (!begun) return begun.error();
      recording.emplace(std::move(*begun));
      res.run_id = recording->id();
    }
    if (opt.guard_start) {
      if (auto added = RecordGuardStart(*recording, *opt.guard_start); !added) return added.error();
    }
    for (const auto& w : resume_warnings) progress.Warn(w, res.warnings);
    res.trial_log_dir = opt.log_dir / std::to_string(res.run_id);
    // 0700 whatever the umask: trial logs can hold a job's secrets (base/safe_file.h).
    if (auto made = CreatePrivateDirectories(res.trial_log_dir.string()))
      return InContext("sweep", *made);
    res.launched_total = res.reused;  // skipped rows are not replayed, so these all ran

    sweep_start = clock.Now();
    return true;
  }

  // The noise of a peak reading (sweep/search.h SearchOptions::noise_bytes): the largest
  // wobble of idle MemAvailable over a settle's still half second so far, at least the floor.
  void NoteNoise(uint64_t wobble) {
    res.noise_bytes = std::max({res.noise_bytes, kNoiseFloorBytes, wobble});
    search.set_noise_bytes(res.noise_bytes);
  }

  // Lets the pool come back to where the sweep started before the next decision, and hold
  // still: freed memory can return over a second or more (driver pools on GB10, the
  // hypervisor on a VM), and a baseline read while it climbs hides the next trial's peak.
  void Settle() {
    const auto settle_start = clock.Now();
    const auto settle_end = settle_start + opt.settle_timeout;
    std::optional<Memory> m = ReadMemory(root, per_cpu);
    uint64_t window_low = m ? m->available : 0;
    uint64_t still_low = window_low, still_high = window_low;  // readings in the window
    auto window_start = clock.Now();
    bool settled = false;
    while (m && clock.Now() < settle_end) {
      clock.SleepFor(kSettlePoll);
      m = ReadMemory(root, per_cpu);
      if (!m) break;
      const bool recovered = m->available + opt.settle_tolerance_bytes >= baseline_available;
      if (m->available > window_low + kSettleStillBytes) {
        window_low = m->available;  // still climbing: start a new window
        window_start = clock.Now();
        still_low = still_high = m->available;
      }
      still_low = std::min(still_low, m->available);
      still_high = std::max(still_high, m->available);
      if (recovered && clock.Now() - window_start >= kSettleStill) {
        settled = true;
        NoteNoise(still_high - still_low);
        break;
      }
    }
    if (!settled && m) {
      progress.Warn(Msg("MemAvailable {} did not settle within {} of the pre-sweep {} in "
                        "{} s; going on",
                        GB(m->available), GB(opt.settle_tolerance_bytes), GB(baseline_available),
                        opt.settle_timeout.count() / 1000),
                    res.warnings);
    }
  }

  // A config the search skipped: a row, and a journal row unless one was written before.
  Result<bool> Skip(const SearchStep& step, const std::string& config_json) {
    SweepRow row =
        Row(step.config, TrialOutcome::kSkipped, std::nullopt, std::nullopt, step.reason, false);
    row.start_pool_bytes = step.baseline_bytes;
    if (step.predicted_peak_bytes)
      row.predicted_peak_bytes = static_cast<uint64_t>(std::max(0.0, *step.predicted_peak_bytes));
    if (std::find(written_skips.begin(), written_skips.end(), config_json) == written_skips.end()) {
      Trial t;
      t.config_json = config_json;
      t.outcome = TrialOutcome::kSkipped;
      t.notes = step.reason;  // the search's words, English (sweep/search.h)
      t.started_at = t.ended_at = std::chrono::system_clock::now();
      if (auto added = recording->AddTrial(t); !added) return added.error();
      written_skips.push_back(config_json);
    }
    res.rows.push_back(row);
    // TRANSLATORS: {1} is the search's reason, kept in English (the journal stores it).
    progress.Line(Msg("sweep: skip {0}: {1}", step.config.ToText(), step.reason));
    return true;
  }

  // Runs the step's trial and records it; false when a signal interrupted it (the sweep
  // stops, resumable).
  Result<bool> Launch(const SearchStep& step, const std::string& config_json, const Memory& mem,
                      uint64_t pool_use) {
    // Launch.
    const int number = ++res.launched_total;
    ++res.launched;
    const fs::path log =
        res.trial_log_dir / fmt::format("trial-{:02}{}.log", number, SafeName(step.config));
    nlohmann::json start_data = {{"config", nlohmann::json::parse(config_json)},
                                 {"log", log.string()}};
    if (step.predicted_peak_bytes) start_data["predicted_peak_bytes"] = *step.predicted_peak_bytes;
    const auto started_at = std::chrono::system_clock::now();
    (void)recording->AddEvent("trial-start", start_data.dump(),
                              std::chrono::duration<double>(clock.Now().time_since_epoch()).count(),
                              started_at);
    progress.ResetTrial();
    const Message head =
        Msg("sweep: trial {} of at most {}: {}", number, opt.max_trials, step.config.ToText());
    progress.Line(
        step.predicted_peak_bytes
            ? JoinMessages({head, Msg(" (predicted peak {})",
                                      GB(static_cast<uint64_t>(*step.predicted_peak_bytes)))},
                           "")
        : !step.reason.empty()
            // TRANSLATORS: {1} is the search's reason to run a config again, in English.
            ? Msg("{0} ({1})", head, step.reason)
            : head);
    TrialSpec spec;
    spec.command = FillTemplate(opt.command, step.config);
    spec.min_available_bytes = opt.min_available_bytes;
    spec.limit_bytes = opt.limit_bytes;
    spec.device_limit = opt.device_limit;
    spec.grace = opt.grace;
    spec.timeout = opt.trial_timeout;
    spec.log_path = log;
    const uint64_t trial_start_available = mem.available;
    uint64_t lowest = trial_start_available;
    spec.on_tick = [&](uint64_t available, double elapsed_s) {
      lowest = std::min(lowest, available);
      progress.Live(
          Msg("{} | {:.1f} s | pool {} | trial peak {} | sweep {:.0f} s", head, elapsed_s,
              GB(mem.total - std::min(mem.total, available)), GB(trial_start_available - lowest),
              std::chrono::duration<double>(clock.Now() - sweep_start).count()),
          elapsed_s);
    };
    auto run = run_trial(root, spec);
    if (!run)
      return Error{Msg("sweep: trial {}: {}", step.config.ToText(), run.error().what),
                   run.error().errno_value};
    if (run->guard.forwarded_signal) {
      res.stopped_early = fmt::format("interrupted by signal {}", *run->guard.forwarded_signal);
      progress.Line(
          Msg("sweep: interrupted by signal {} during trial {}; it is not recorded and reruns "
              "on resume",
              *run->guard.forwarded_signal, number));
      res.exit_status = kExitSweepInterrupted;
      return false;
    }
    TrialReport report;
    report.outcome = run->outcome;
    report.peak_bytes = run->peak_bytes;
    const std::string notes = EnglishText(run->notes);
    report.summary = notes.empty() ? std::string(TrialOutcomeName(run->outcome)) : notes;
    Trial t;
    t.config_json = config_json;
    t.outcome = run->outcome;
    t.peak_bytes = run->peak_bytes;
    t.headroom_bytes =
        static_cast<int64_t>(opt.limit_bytes) - static_cast<int64_t>(run->peak_pool_bytes);
    // The notes, in English for the results and as a message for the journal's readers.
    std::vector<Message> parts;
    if (!run->notes.empty()) parts.push_back(run->notes);
    if (run->outcome != TrialOutcome::kOk) parts.push_back(Msg("log: {}", log.string()));
    parts.push_back(PeakMeasureNote(*run));
    t.notes = EnglishText(JoinMessages(parts, "; "));
    // The journal keeps the other two measures in the notes (no column of their own).
    parts.push_back(Msg("tree RSS peak {}; cgroup peak {}", GB(run->guard.peak_tree_rss_bytes),
                        run->guard.cgroup_peak_bytes ? MessageArg(GB(*run->guard.cgroup_peak_bytes))
                                                     : MessageArg(std::string("n/a"))));
    t.started_at = started_at;
    t.ended_at = std::chrono::system_clock::now();
    Trial recorded = t;
    recorded.notes_message = JoinMessages(parts, "; ");
    recorded.notes = EnglishText(recorded.notes_message);
    if (auto added = recording->AddTrial(recorded); !added) return added.error();
    search.Report(step.config, report);
    SweepRow row =
        Row(step.config, run->outcome, run->peak_bytes, t.headroom_bytes, t.notes, false);
    row.start_pool_bytes = pool_use;
    row.peak_measure = run->peak_measure;
    row.peak_rss_bytes = run->guard.peak_tree_rss_bytes;
    row.cgroup_peak_bytes = run->guard.cgroup_peak_bytes;
    if (step.predicted_peak_bytes)
      row.predicted_peak_bytes = static_cast<uint64_t>(std::max(0.0, *step.predicted_peak_bytes));
    res.rows.push_back(row);
    // TRANSLATORS: {2} is the trial's outcome as recorded: ok, oom, ...
    const int64_t headroom = t.headroom_bytes.value_or(0);
    progress.Line(Msg(
        "sweep: trial {0}: {1}: {2}, peak {3} above the baseline (pool {4}, headroom {5}), {6:.1f} "
        "s",
        number, step.config.ToText(), TrialOutcomeName(run->outcome), GB(run->peak_bytes),
        GB(run->peak_pool_bytes),
        // A negative headroom: the sign, then the size (ByteCount has no sign).
        MsgFrom(headroom < 0 ? "-{}" : "{}",
                GB(static_cast<uint64_t>(headroom < 0 ? -headroom : headroom))),
        run->guard.duration_s));
    return true;
  }

  // The answer, and the run's end in the journal.
  void Finish() {
    res.best = search.best();
    res.best_peak_bytes = search.best_peak_bytes();
    for (const auto& row : res.rows) {
      if (res.best && row.config == *res.best && row.outcome == TrialOutcome::kOk)
        res.best_headroom_bytes = row.headroom_bytes;
    }
    res.stop_reasons = search.stop_reasons();
    res.untried = search.untried();
    if (res.exit_status == 0) {
      res.exit_status = !res.best             ? kExitNegative
                        : res.untried.empty() ? kExitOk
                                              : kExitSweepUntried;
    }

    nlohmann::json summary = {{"schema_version", 1},
                              {"template", opt.command},
                              {"limit_bytes", opt.limit_bytes},
                              {"limit_of", opt.device_limit ? "device" : "pool"},
                              {"margin_bytes", opt.margin_bytes},
                              {"launched", res.launched_total},
                              {"stop_reasons", res.stop_reasons},
                              {"stopped_early", res.stopped_early}};
    if (!res.untried.empty()) {
      std::vector<std::string> lines;
      for (const auto& gap : res.untried) lines.push_back(EnglishText(UntriedText(gap)));
      summary["untried"] = lines;
    }
    if (!opt.model.empty()) summary["model"] = opt.model;
    if (!opt.method.empty()) summary["method"] = opt.method;
    if (opt.start) {
      // What the first trial was, and with --start plan how far the plan was from the answer.
      AddStartJson(*opt.start,
                   res.best ? std::optional(res.best->Get(opt.start->knob)) : std::nullopt,
                   &summary);
    }
    if (res.best) {
      summary["best"] = nlohmann::json::parse(res.best->ToJson());
      summary["best_peak_bytes"] =
          res.best_peak_bytes ? nlohmann::json(*res.best_peak_bytes) : nlohmann::json(nullptr);
      summary["best_headroom_bytes"] = res.best_headroom_bytes
                                           ? nlohmann::json(*res.best_headroom_bytes)
                                           : nlohmann::json(nullptr);
    }
    const std::string status = res.exit_status == kExitSweepInterrupted             ? "interrupted"
                               : !res.stopped_early.empty() || !res.untried.empty() ? "incomplete"
                               : res.best                                           ? "done"
                                                                                    : "no-fit";
    if (auto done = recording->Finish(status, res.exit_status, summary.dump()); !done) {
      res.warnings.push_back("the journal did not take the sweep's end: " +
                             EnglishText(done.error().what));
    }
  }

  const SysRoot& root;
  const SweepOptions& opt;
  Journal& journal;
  std::optional<RecordedRun> recording;  // set by Begin
  Progress progress;
  SteadySweepClock steady;
  SweepClock& clock;
  const TrialRunner run_trial;
  PerCpuFreeReader per_cpu;
  SweepSearch search;
  SweepResult res;
  std::vector<std::string> written_skips;
  uint64_t baseline_available = 0;
  Clock::time_point sweep_start;
};

}  // namespace

Result<SweepResult> RunSweep(const SysRoot& root, const SweepOptions& opt, Journal& journal,
                             const SweepProgress& progress_out) {
  SweepRun run(root, opt, journal, progress_out);
  const auto start_mem = ReadMemory(root, run.per_cpu);
  if (!start_mem)
    return Error{Msg("sweep: cannot read MemTotal and MemAvailable from proc/meminfo")};
  if (auto begun = run.Begin(start_mem->available); !begun) return begun.error();
  run.NoteNoise(0);
  bool need_settle = false;
  for (;;) {
    if (need_settle) run.Settle();
    need_settle = false;
    const auto mem = ReadMemory(root, run.per_cpu);
    if (!mem) return Error{Msg("sweep: proc/meminfo became unreadable")};
    // The device's pool is taken to start empty: the host's use is not in it.
    const uint64_t pool_use =
        opt.device_limit || mem->total <= mem->available ? 0 : mem->total - mem->available;
    const SearchStep step = run.search.Next(pool_use);
    if (step.kind == SearchStep::kDone) break;
    const std::string config_json = step.config.ToJson();
    if (step.kind == SearchStep::kSkip) {
      if (auto skipped = run.Skip(step, config_json); !skipped) return skipped.error();
      continue;
    }
    if (run.res.launched_total >= opt.max_trials) {
      run.res.stopped_early = fmt::format("--max-trials {} reached", opt.max_trials);
      break;
    }
    auto launched = run.Launch(step, config_json, *mem, pool_use);
    if (!launched) return launched.error();
    need_settle = true;
    if (!*launched) break;
  }
  run.Finish();
  return std::move(run.res);
}

}  // namespace headroom
