// Implementation notes.
//  - The projection is (MemAvailable - kill level) / the fall over the last second of readings,
//    infinite while memory is not falling. Not the kill policy's EWMA (guard/kill_policy.h): it
//    weighs each 10 ms reading by half, so a loop that leaks 24 MiB every 100 ms reads as
//    GiB/s just after each step and as nothing between them (measured in
//    GuardCheckpoint.ASlowLeakSavesAtTheWarningLevelThenIsKilled). The save is asked for only
//    when that leaves at least the time a save needs: --checkpoint-grace, else the last save
//    the records measured (save_end's duration, the trainer's scheduled saves included), else
//    kDefaultCheckpointNeedSeconds. A fall that speeds up after the ask changes nothing here:
//    the kill policy kills on time and the summary says the save was cut short.
//  - "Once per crossing": armed again only when MemAvailable climbs back above the warning
//    level, as the warning line is (guard/guard.cc RecordWarning).
//  - The records are read through CompanionTail (bounded per call) every 250 ms, and at every
//    reading while an asked-for save has not ended: the save_end's arrival is what the summary
//    times. The guard does not wait in any other sense: its loop runs as before.
//  - Signals go to announced processes only, each checked to be in the job's tree
//    (Child::Members), to have announced itself after it started (AnnouncedAfterStart: a
//    start record older than the process is another's that had its PID) and opened as a
//    pidfd verified by its start time (guard/pidfd.h).
//  - Records older than the guard (`guard --pid`: the job's own past, which the guard needs,
//    its start records being at the file's head): read from the file's start, 1 MiB at every
//    reading until the file's size at the start has been, then as above. Save records count
//    as the asked-for save only when written after the ask (their "mono" against the
//    guard's CLOCK_MONOTONIC at the ask), so an earlier guard's save in the file is not it;
//    every save_end sets the measured duration, so the newest one is the measured one.
#include "guard/checkpoint_request.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "base/json_null.h"
#include "base/safe_file.h"
#include "guard/child.h"
#include "guard/guard_events.h"
#include "guard/pidfd.h"
#include "sys/processes.h"

namespace headroom {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kReadPeriodSeconds = 0.25;
constexpr size_t kPollBytes = 1 << 20;  // CompanionTail::Poll's bound per read
// The fall rate's window and the spacing of the readings kept for it.
constexpr double kRateWindowSeconds = 1.0;
constexpr double kRateSpacingSeconds = 0.1;

std::string SignalName(int sig) {
  if (sig == SIGUSR1) return "SIGUSR1";
  if (sig == SIGUSR2) return "SIGUSR2";
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

}  // namespace

bool AnnouncedAfterStart(double record_mono_s, double boot_minus_mono_s, uint64_t start_ticks,
                         long ticks_per_s) {
  if (ticks_per_s <= 0) return false;
  // Field 22 is rounded down to a tick, the record's time is exact: one tick of slack.
  const double tick = 1.0 / static_cast<double>(ticks_per_s);
  return record_mono_s + std::max(boot_minus_mono_s, 0.0) + tick >=
         static_cast<double>(start_ticks) * tick;
}

CheckpointDecision DecideCheckpoint(const CheckpointInputs& in) {
  CheckpointDecision d;
  d.projected_s = std::numeric_limits<double>::infinity();
  if (in.warn_bytes == 0 || in.available_bytes >= in.warn_bytes || in.triggered || !in.armed) {
    return d;
  }
  if (in.fall_rate_bytes_per_s > 0) {
    const double room = in.available_bytes > in.kill_bytes
                            ? static_cast<double>(in.available_bytes - in.kill_bytes)
                            : 0.0;
    d.projected_s = room / in.fall_rate_bytes_per_s;
  }
  if (!in.have_target) {
    d.verdict = CheckpointVerdict::kNoCompanion;
  } else if (d.projected_s < in.need_s) {
    d.verdict = CheckpointVerdict::kTooLate;
  } else {
    d.verdict = CheckpointVerdict::kAsk;
  }
  return d;
}

CheckpointAsker::CheckpointAsker(const SysRoot& root, CheckpointOptions options, double start_s)
    : root_(root), options_(std::move(options)), tail_(options_.records_path), start_s_(start_s) {
  sum_.not_asked = options_.unavailable;
  sum_.can_ask = options_.unavailable.empty();
  struct stat st {};
  if (options_.unavailable.empty() && !options_.records_path.empty() &&
      ::stat(options_.records_path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    backlog_bytes_ = static_cast<uint64_t>(st.st_size);
  }
}

double CheckpointAsker::NeedSeconds() const {
  if (options_.grace) return std::chrono::duration<double>(*options_.grace).count();
  if (sum_.last_measured_s) return *sum_.last_measured_s;
  return kDefaultCheckpointNeedSeconds;
}

double CheckpointAsker::FallRate(double now_s, uint64_t available, double fallback) {
  if (readings_.empty() || now_s - readings_.back().first >= kRateSpacingSeconds) {
    readings_.emplace_back(now_s, available);
  }
  // Keep one reading at least a window old, as the far end of the slope.
  while (readings_.size() > 2 && now_s - readings_[1].first >= kRateWindowSeconds) {
    readings_.pop_front();
  }
  const auto& [then_s, then_available] = readings_.front();
  const double span = now_s - then_s;
  if (span < kRateWindowSeconds / 2) return fallback;
  return (static_cast<double>(then_available) - static_cast<double>(available)) / span;
}

void CheckpointAsker::Read(GuardEvents& events) {
  // Each poll reads kPollBytes or up to the end: after n polls, at least the smaller of
  // n * kPollBytes and the file's size then, which is never less than at the start.
  if (backlog_read_bytes_ < backlog_bytes_) backlog_read_bytes_ += kPollBytes;
  for (const CompanionRecord& r : tail_.Poll(kPollBytes)) {
    switch (r.kind) {
      case CompanionKind::kStart: {
        sum_.companion_seen = true;
        auto it = std::find_if(targets_.begin(), targets_.end(),
                               [&](const Target& t) { return t.pid == r.pid; });
        if (it == targets_.end())
          it = targets_.insert(targets_.end(), Target{r.pid, std::nullopt, false});
        it->signal = r.signal;
        it->request_file = r.request_file;
        it->announced_mono_s = r.mono_s;
        events.Emit("companion", {{"pid", r.pid},
                                  {"framework", r.framework},
                                  {"signal", OrNull<Json>(r.signal)},
                                  {"request_file", r.request_file}});
        break;
      }
      case CompanionKind::kSaveStart:
        // Every save the guard asked for (one per crossing of the warning level) updates the
        // summary: it describes the newest checkpoint, the one on disk.
        if (sum_.asked && r.reason == "guard" && r.mono_s >= asked_mono_s_) {
          sum_.started = true;
          sum_.step = r.step;
          events.Emit("checkpoint_start", {{"pid", r.pid}, {"step", OrNull<Json>(r.step)}});
        }
        break;
      case CompanionKind::kSaveEnd:
        if (r.ok && r.duration_s) sum_.last_measured_s = *r.duration_s;
        if (sum_.asked && r.reason == "guard" && r.mono_s >= asked_mono_s_) {
          sum_.finished = true;
          sum_.ok = r.ok;
          sum_.step = r.step;
          sum_.duration_s = r.duration_s;
          sum_.path = r.path;
          sum_.error = r.error;
          sum_.source = r.source;
          events.Emit("checkpoint_end", {{"pid", r.pid},
                                         {"step", OrNull<Json>(r.step)},
                                         {"ok", r.ok},
                                         {"duration_s", r.duration_s.value_or(0.0)},
                                         {"path", r.path},
                                         {"error", r.error},
                                         {"late", sum_.late}});
        }
        break;
      case CompanionKind::kStep:
        break;
    }
  }
}

void CheckpointAsker::Ask(double now_s, uint64_t available, const CheckpointDecision& d,
                          double need_s, Child& child, GuardEvents& events) {
  // The announced processes that are in the job's tree now.
  const std::vector<ProcStat> members = child.Members();
  const double ask_mono_s = ClockSeconds(CLOCK_MONOTONIC);
  const double boot_minus_mono_s = ClockSeconds(CLOCK_BOOTTIME) - ask_mono_s;
  const long ticks_per_s = ::sysconf(_SC_CLK_TCK);
  int asked = 0;
  bool by_signal = false, by_file = false;
  for (const Target& t : targets_) {
    auto m = std::find_if(members.begin(), members.end(),
                          [&](const ProcStat& p) { return p.pid == t.pid; });
    if (m == members.end()) continue;
    if (!AnnouncedAfterStart(t.announced_mono_s, boot_minus_mono_s, m->starttime_ticks,
                             ticks_per_s)) {
      continue;  // an earlier process's record: this one may not handle the signal
    }
    // One way per process: the signal where it handles it, else the request file (both
    // would be two saves).
    const int sig = options_.signal;
    if (sig == 0 || !t.signal || *t.signal != sig) {
      if (t.request_file && !options_.request_path.empty()) {
        by_file = true;
        ++asked;
      }
      continue;
    }
    FileFd fd(PidfdOpen(m->pid));
    if (fd.get() < 0) continue;
    // The pidfd names the process that had this PID when it was opened: check it is the
    // member just listed (same start time), not a reuse.
    const auto now_stat = ReadProcStat(root_, m->pid);
    if (!now_stat || now_stat->starttime_ticks != m->starttime_ticks) continue;
    if (PidfdSendSignal(fd.get(), sig) == 0) {
      by_signal = true;
      ++asked;
    }
  }
  if (by_file) {
    FileFd req(::open(options_.request_path.c_str(),
                      O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (req.get() >= 0) {
      wrote_request_ = true;
      (void)!::write(req.get(), "save\n", 5);
    }
  }
  if (asked == 0) {
    // The announced processes have gone (or are not the job's): stay armed, so one that
    // announces itself later in this crossing is asked; say so once.
    if (!said_not_asked_) {
      said_not_asked_ = true;
      sum_.not_asked = Msg("no companion process of the job could be asked");
      events.Emit("checkpoint_not_asked", {{"why", EnglishText(sum_.not_asked)}});
    }
    return;
  }
  armed_ = false;
  sum_.asked = true;
  asked_mono_s_ = ask_mono_s;
  // A new crossing's request: the save it brings is awaited afresh (the summary keeps the
  // newest checkpoint's path until that save ends).
  sum_.started = false;
  sum_.finished = false;
  sum_.asked_after_s = now_s - start_s_;
  sum_.asked_available_bytes = available;
  sum_.projected_s =
      std::isfinite(d.projected_s) ? std::optional<double>(d.projected_s) : std::nullopt;
  sum_.need_s = need_s;
  sum_.processes_asked = asked;
  sum_.how = by_signal && by_file ? SignalName(options_.signal) + " and request file"
             : by_signal          ? SignalName(options_.signal)
                                  : "request file";
  deadline_s_ = now_s + need_s;
  events.Emit("checkpoint_ask", {{"how", sum_.how},
                                 {"processes", asked},
                                 {"available_bytes", available},
                                 {"projected_s", OrNull<Json>(sum_.projected_s)},
                                 {"need_s", need_s}});
}

void CheckpointAsker::Tick(const CheckpointReading& reading, Child& child, GuardEvents& events) {
  const double now_s = reading.now_s;
  const uint64_t available = reading.available_bytes;
  const uint64_t warn = reading.warn_bytes;
  const bool triggered = reading.triggered;
  if (!options_.unavailable.empty()) {
    // Nothing can be asked: say so once per crossing, in the events (the summary says it).
    if (available >= warn) {
      said_not_asked_ = false;
    } else if (!said_not_asked_ && !triggered) {
      said_not_asked_ = true;
      events.Emit("checkpoint_not_asked", {{"why", EnglishText(options_.unavailable)}});
    }
    return;
  }
  const double fall_rate = FallRate(now_s, available, reading.fall_rate_bytes_per_s);
  const bool awaiting = sum_.asked && !sum_.finished;
  // Every reading while a save is awaited or one could be asked for (the start records and
  // the last save's duration must be current when deciding), else every 250 ms.
  const bool deciding = available < warn && armed_ && !triggered;
  const bool catching_up = backlog_read_bytes_ < backlog_bytes_;
  if (awaiting || deciding || catching_up || now_s - last_read_s_ >= kReadPeriodSeconds) {
    last_read_s_ = now_s;
    Read(events);
  }
  if (triggered && !triggered_) {
    triggered_ = true;
    if (sum_.asked && !sum_.finished) {
      sum_.killed_while_saving = true;
      events.Emit("checkpoint_cut_short", {{"started", sum_.started}});
    }
  }
  if (sum_.asked && !sum_.finished && !sum_.late && now_s > deadline_s_) {
    sum_.late = true;
    events.Emit("checkpoint_late", {{"need_s", sum_.need_s}, {"started", sum_.started}});
  }
  // Armed again above the warning level: the next crossing may ask again.
  if (available >= warn) {
    if (below_warn_) {
      armed_ = true;
      said_not_asked_ = false;
    }
    below_warn_ = false;
    return;
  }
  below_warn_ = true;
  CheckpointInputs in;
  in.available_bytes = available;
  in.warn_bytes = warn;
  in.kill_bytes = reading.kill_bytes;
  in.fall_rate_bytes_per_s = fall_rate;
  in.triggered = triggered;
  in.armed = armed_ && !(sum_.asked && !sum_.finished);
  in.have_target = !targets_.empty();
  in.need_s = NeedSeconds();
  const CheckpointDecision d = DecideCheckpoint(in);
  switch (d.verdict) {
    case CheckpointVerdict::kAsk:
      Ask(now_s, available, d, in.need_s, child, events);
      break;
    case CheckpointVerdict::kTooLate:
    case CheckpointVerdict::kNoCompanion:
      if (!said_not_asked_) {
        said_not_asked_ = true;
        sum_.not_asked = d.verdict == CheckpointVerdict::kNoCompanion
                             ? Msg("no companion in the job (no start record in the step records)")
                             : Msg("projected {:.1f} s to the kill level, a save needs {:.1f} s",
                                   d.projected_s, in.need_s);
        events.Emit("checkpoint_not_asked", {{"why", EnglishText(sum_.not_asked)}});
      }
      break;
    case CheckpointVerdict::kNothing:
      break;
  }
}

CheckpointSummary CheckpointAsker::Finish(GuardEvents& events) {
  if (!options_.unavailable.empty()) return sum_;
  Read(events);
  // A request not taken: removed, so that it asks nothing of a later run. Only the guard's
  // own (--pid: a path the user named, where a file may have been before).
  if (wrote_request_) ::unlink(options_.request_path.c_str());
  return sum_;
}

nlohmann::json CheckpointSummaryJson(const CheckpointSummary& s) {
  return {
      {"companion_seen", s.companion_seen},
      {"asked", s.asked},
      {"asked_after_s", OrNull<nlohmann::json>(s.asked_after_s)},
      {"asked_available_bytes", OrNull<nlohmann::json>(s.asked_available_bytes)},
      {"projected_s", OrNull<nlohmann::json>(s.projected_s)},
      {"need_s", s.asked ? nlohmann::json(s.need_s) : nlohmann::json(nullptr)},
      {"how", s.asked ? nlohmann::json(s.how) : nlohmann::json(nullptr)},
      {"processes_asked", s.processes_asked},
      {"started", s.started},
      {"finished", s.finished},
      {"ok", s.ok},
      {"late", s.late},
      {"killed_while_saving", s.killed_while_saving},
      {"step", OrNull<nlohmann::json>(s.step)},
      {"duration_s", OrNull<nlohmann::json>(s.duration_s)},
      {"path", s.path.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.path)},
      {"error", s.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.error)},
      {"source", s.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.source)},
      {"not_asked",
       s.not_asked.empty() ? nlohmann::json(nullptr) : nlohmann::json(EnglishText(s.not_asked))},
      {"last_measured_s", OrNull<nlohmann::json>(s.last_measured_s)},
  };
}

}  // namespace headroom
