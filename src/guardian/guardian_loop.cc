// Implementation notes.
//  - The policy is the guard's (guard/kill_policy.h): the loop keeps a GuardState for the
//    machine as the guard keeps one for its job; "the job" is the victim once one is
//    signalled, and the state starts again once the victim's processes are all gone.
//  - Before each signal MemAvailable is read again: choosing reads every process's status,
//    smaps_rollup and fd links (tens of ms on a busy machine), and a fill that stopped or a
//    job that exited by itself in that time needs no victim. A memory trigger is called off
//    when the new reading is at or above the level and not below the trigger's reading.
//  - A guard is trusted to end its own job (its level is higher by design, docs/guard.md)
//    unless it is stopped (state T, t) or MemAvailable has been below its level for twice
//    the grace plus a second: it should have acted by then, so it is silent.
//  - When the victim is gone, MemAvailable should come back by about what it held. Drivers
//    that keep freed pages in their own pools give them back late or only when asked
//    (docs/guardian.md "Driver pools"): after two seconds still below the level, the loop
//    says so, and with release_driver_pools drops the page cache once.
#include "guardian/guardian_loop.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include "guard/pidfd.h"
#include "guardian/process_memory.h"
#include "sys/processes.h"

namespace headroom {
namespace {

using std::chrono::milliseconds;
using Json = nlohmann::ordered_json;

constexpr double kRecoveryWatchSeconds = 2.0;
// After a choice that ended nothing (a dry run, no victim, memory came back), the next one
// waits this long: a scan of every process every 10 ms would be the guardian's own load.
constexpr double kChoiceHoldSeconds = 1.0;
// A "projected" trigger comes while MemAvailable is still above the level, so the re-read
// calls it off only when MemAvailable rose at least this much since the trigger's reading:
// the kernel folds its per-CPU counters into MemAvailable in batches, so a reading a
// millisecond later is often the same one, or a few pages higher, while a fill goes on
// (docs/guardian.md "Benchmark against earlyoom": a call-off on an unchanged reading held the
// next choice for a second, and a 1 GB/s fill ended 899 MiB below the level).
constexpr uint64_t kCameBackBytes = 16ULL << 20;
// After a victim is gone its memory comes back late (a large memfd or a driver's pages are
// freed after the process is reaped) and MemAvailable goes on falling for 100-300 ms (the
// kernel's late fall after a fill), which the level and the fall rate both read as a new
// fill (docs/guardian.md "Benchmark against earlyoom": the bystander was ended after the
// right holder in 3 of 6 runs). While the recovery is watched (kRecoveryWatchSeconds), a
// second job is ended only when MemAvailable falls this far below its reading when the
// victim was gone: another fill, not the first one's wake.
constexpr uint64_t kSecondFillBytes = 256ULL << 20;

double SecondsOf(milliseconds d) { return std::chrono::duration<double>(d).count(); }

Json JobJson(const Job& j) {
  Json pids = Json::array();
  for (const pid_t p : j.pids) pids.push_back(p);
  return Json{{"pid", j.root},
              {"name", j.name},
              {"cgroup", j.cgroup},
              {"pids", pids},
              {"held_bytes", j.HeldBytes()},
              {"rss_bytes", j.rss_bytes},
              {"swap_bytes", j.swap_bytes},
              {"gpu_bytes", j.gpu_bytes},
              {"memfd_bytes", j.memfd_bytes},
              {"shmem_bytes", j.shmem_bytes}};
}

}  // namespace

GuardianLoop::GuardianLoop(SysRoot root, GuardianOptions options, GuardianIo io)
    : root_(std::move(root)), options_(std::move(options)), io_(std::move(io)) {
  policy_.min_available_bytes = options_.min_available_bytes;
  policy_.grace = options_.grace;
  const double now = io_.now_s();
  state_.start_s = now;
  state_.last_reading_s = now;
  state_.last_available_bytes = io_.read_available().value_or(0);
}

GuardianLoop::~GuardianLoop() { CloseVictim(); }

void GuardianLoop::Reconfigure(uint64_t min_available_bytes, uint64_t warn_available_bytes,
                               std::chrono::milliseconds grace) {
  options_.min_available_bytes = policy_.min_available_bytes = min_available_bytes;
  options_.warn_available_bytes = warn_available_bytes;
  options_.grace = policy_.grace = grace;
  Emit(
      "reload",
      Msg("configuration read again: kill level {}, warning level {}, grace {} ms",
          GiB(min_available_bytes), GiB(warn_available_bytes), static_cast<int64_t>(grace.count())),
      Json{{"min_available_bytes", min_available_bytes},
           {"warn_available_bytes", warn_available_bytes},
           {"grace_ms", static_cast<int64_t>(grace.count())}});
}

void GuardianLoop::CloseVictim() {
  if (!victim_) return;
  for (const auto& [pid, fd] : victim_->pidfds) {
    if (fd >= 0) ::close(fd);
  }
  victim_.reset();
}

void GuardianLoop::Emit(std::string type, Message line, nlohmann::ordered_json fields) {
  if (io_.emit) io_.emit(GuardianEvent{std::move(type), std::move(line), std::move(fields)});
}

std::set<pid_t> GuardianLoop::TrustedGuards(uint64_t available, double now_s) {
  std::set<pid_t> trusted;
  if (!io_.live_guards) return trusted;
  const double silent_after = 2 * SecondsOf(options_.grace) + 1.0;
  for (const LiveGuard& g : io_.live_guards()) {
    const auto stat = ReadProcStat(root_, g.pid);
    if (!stat || stat->state == 'T' || stat->state == 't' || stat->state == 'Z') continue;
    if (available >= g.kill_below_bytes) {
      guard_below_since_s_.erase(g.pid);
    } else {
      const double since = guard_below_since_s_.try_emplace(g.pid, now_s).first->second;
      if (now_s - since > silent_after) continue;
    }
    trusted.insert(g.pid);
  }
  return trusted;
}

VictimChoice GuardianLoop::ChooseNow() {
  const double now = io_.now_s();
  options_.choice.guard_pids = TrustedGuards(state_.last_available_bytes, now);
  std::vector<ProcessMemory> table = ReadProcessTable(root_);
  const std::set<pid_t> cands = CandidatePids(table, options_.choice);
  const std::map<pid_t, uint64_t> gpu = io_.read_gpu ? io_.read_gpu() : std::map<pid_t, uint64_t>{};
  for (auto& p : table) {
    if (cands.count(p.pid) != 0) ReadProcessTerms(root_, gpu, p);
  }
  return ChooseVictim(GroupJobs(table, cands, options_.choice));
}

bool GuardianLoop::MemberAlive(pid_t pid) const {
  const auto stat = ReadProcStat(root_, pid);
  if (!stat || stat->state == 'Z' || stat->state == 'X') return false;
  return stat->starttime_ticks == victim_->job.start_ticks.at(pid);
}

void GuardianLoop::Signal(int signal) {
  for (auto& [pid, fd] : victim_->pidfds) {
    if (!MemberAlive(pid)) continue;
    if (fd >= 0) {
      PidfdSendSignal(fd, signal);
      if (signal == SIGKILL) ProcessMrelease(fd);  // ENOSYS before 5.15: the kernel reaps
    } else {
      ::kill(pid, signal);
    }
  }
}

void GuardianLoop::OnTrigger(const KillDecision& d, const GuardReading& r) {
  VictimChoice choice = ChooseNow();
  const double now = io_.now_s();
  Json fields{{"reason", std::string(d.reason)},
              {"available_bytes", r.available_bytes},
              {"min_available_bytes", options_.min_available_bytes}};
  if (!choice.victim) {
    ++counts_.no_victim;
    hold_until_s_ = now + kChoiceHoldSeconds;
    fields["message"] = EnglishText(choice.line);
    Emit("no-victim", choice.line, std::move(fields));
    return;
  }
  fields["victim"] = JobJson(*choice.victim);
  fields["choice"] = EnglishText(choice.line);
  // The re-read: memory that came back while choosing ends nothing.
  const uint64_t again = io_.read_available().value_or(r.available_bytes);
  fields["available_bytes_before_signal"] = again;
  // Pressure (psi) is no level to come back above: only a memory reason is called off.
  const bool came_back = r.available_bytes < options_.min_available_bytes
                             ? again >= r.available_bytes
                             : again >= r.available_bytes + kCameBackBytes;
  if (d.reason != "psi" && again >= options_.min_available_bytes && came_back) {
    ++counts_.recovered;
    hold_until_s_ = now + kChoiceHoldSeconds;
    Emit("recovered",
         Msg("memory came back while choosing ({} available): nothing ended; {}", GiB(again),
             choice.line),
         std::move(fields));
    return;
  }
  if (options_.dry_run) {
    hold_until_s_ = now + std::max(kChoiceHoldSeconds, SecondsOf(options_.grace));
    Emit("choice", Msg("dry run, nothing signalled: {}", choice.line), std::move(fields));
    return;
  }
  // Built whole: clang cannot default-construct a nested struct with member initializers
  // through optional::emplace() (its enclosing class was incomplete where the trait was first
  // asked).
  victim_ = Victim{*choice.victim, {}, 0, 0};
  for (const pid_t pid : victim_->job.pids) {
    const auto fd = OpenVerifiedPidfd(root_, pid, victim_->job.start_ticks.at(pid));
    victim_->pidfds[pid] = fd.value_or(-1);
  }
  victim_->signalled_s = now;
  victim_->available_at_signal = again;
  Signal(d.signal);
  KillPolicy::Apply(state_, d, r, policy_);
  ++counts_.kills;
  fields["signal"] = d.signal == SIGKILL ? "SIGKILL" : "SIGTERM";
  Emit("kill",
       Msg("{} sent ({}, {} available): {}", d.signal == SIGKILL ? "SIGKILL" : "SIGTERM",
           std::string(d.reason), GiB(again), choice.line),
       std::move(fields));
}

void GuardianLoop::OnVictimGone(const GuardReading& r) {
  const double now = io_.now_s();
  Emit("ended",
       Msg("victim {} (pid {}) is gone after {:.2f} s; {} available", victim_->job.name,
           static_cast<int64_t>(victim_->job.root), now - victim_->signalled_s,
           GiB(r.available_bytes)),
       Json{{"pid", victim_->job.root},
            {"seconds", now - victim_->signalled_s},
            {"available_bytes", r.available_bytes}});
  recovery_until_s_ = now + kRecoveryWatchSeconds;
  settle_until_s_ = now + kRecoveryWatchSeconds;
  settle_from_bytes_ = r.available_bytes;
  recovery_freed_bytes_ = victim_->job.HeldBytes();
  CloseVictim();
  state_ = GuardState{};
  state_.start_s = now;
  state_.last_reading_s = r.now_s;
  state_.last_available_bytes = r.available_bytes;
}

void GuardianLoop::CheckRecovery(const GuardReading& r) {
  if (recovery_until_s_ == 0) return;
  if (r.available_bytes >= options_.min_available_bytes) {
    recovery_until_s_ = 0;
    return;
  }
  if (r.now_s < recovery_until_s_) return;
  recovery_until_s_ = 0;
  ++counts_.driver_pools;
  Json fields{{"available_bytes", r.available_bytes},
              {"victim_held_bytes", recovery_freed_bytes_},
              {"released", false}};
  if (options_.release_driver_pools && io_.drop_caches) fields["released"] = io_.drop_caches();
  Emit("driver-pools",
       Msg("the victim is gone but MemAvailable did not come back ({} available, it held {}): a "
           "driver may keep the freed pages in its own pools{}",
           GiB(r.available_bytes), GiB(recovery_freed_bytes_),
           fields["released"].get<bool>()  ? Msg("; the page cache was dropped")
           : options_.release_driver_pools ? Msg("; dropping the page cache failed")
                                           : Msg("; --release-driver-pools drops the page cache")),
       std::move(fields));
}

std::chrono::milliseconds GuardianLoop::Step() {
  GuardReading r;
  r.now_s = io_.now_s();
  r.available_bytes = io_.read_available().value_or(state_.last_available_bytes);
  r.psi_full = io_.psi_full && io_.psi_full();
  if (victim_) {
    r.job_running = MemberAlive(victim_->job.root);
    r.tree_empty = std::none_of(victim_->job.pids.begin(), victim_->job.pids.end(),
                                [&](pid_t pid) { return MemberAlive(pid); });
  }
  KillPolicy::Observe(state_, r);
  if (options_.warn_available_bytes > 0) {
    if (!warned_ && r.available_bytes < options_.warn_available_bytes) {
      warned_ = true;
      ++counts_.warnings;
      // The rehearsal: the choice made once now, nothing signalled, so the code and data of
      // the path that ends a job (the process table, NVML, the registry) are faulted in and
      // locked before the kill level, not read from disk under the pressure it acts on; the
      // event says who it would be.
      const VictimChoice rehearsal = ChooseNow();
      Json fields{{"available_bytes", r.available_bytes},
                  {"warn_available_bytes", options_.warn_available_bytes}};
      if (rehearsal.victim) fields["would_end"] = JobJson(*rehearsal.victim);
      Emit("warn",
           Msg("MemAvailable {} is below the warning level {}", GiB(r.available_bytes),
               GiB(options_.warn_available_bytes)),
           std::move(fields));
    } else if (warned_ && r.available_bytes >= options_.warn_available_bytes) {
      warned_ = false;
    }
  }
  CheckRecovery(r);
  for (int round = 0; round < 3; ++round) {
    const KillDecision d = KillPolicy::Decide(state_, r, policy_);
    switch (d.action) {
      case GuardAction::kTrigger:
        if (victim_ || r.now_s < hold_until_s_) return d.next_period;
        if (r.now_s < settle_until_s_ && r.available_bytes + kSecondFillBytes > settle_from_bytes_)
          return d.next_period;
        OnTrigger(d, r);
        if (!victim_) return std::max(d.next_period, milliseconds(100));
        continue;
      case GuardAction::kEscalate:
      case GuardAction::kTermRest: {
        const uint64_t again = io_.read_available().value_or(r.available_bytes);
        Signal(SIGKILL);
        KillPolicy::Apply(state_, d, r, policy_);
        ++counts_.escalations;
        Emit("escalate",
             Msg("SIGKILL sent to {} (pid {}) after SIGTERM ({}, {} available)", victim_->job.name,
                 static_cast<int64_t>(victim_->job.root), std::string(d.reason), GiB(again)),
             Json{{"pid", victim_->job.root},
                  {"reason", std::string(d.reason)},
                  {"available_bytes", again}});
        continue;
      }
      case GuardAction::kDone:
        if (victim_) OnVictimGone(r);
        return milliseconds(10);
      case GuardAction::kNone:
      case GuardAction::kTimeout:
      case GuardAction::kCleanup:
        KillPolicy::Apply(state_, KillDecision{GuardAction::kNone, 0, {}, false, d.next_period}, r,
                          policy_);
        return d.next_period;
    }
  }
  return milliseconds(10);
}

}  // namespace headroom
