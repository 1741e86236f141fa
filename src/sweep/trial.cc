// Implementation notes.
//  - The peak: the guard already reads MemAvailable for its kill level; a trial asks it for
//    a 10 ms period everywhere (GuardOptions::max_period), so the lowest reading is the
//    peak to 10 ms (bench/sweep_trials compares it with a 1 ms sampler).
//  - The trial is judged by the job's own peak (sweep/trial_peak.h: the cgroup's memory.peak,
//    the tree's peak RSS, the companion's step records), immune to another process freeing
//    memory mid-trial, with the fall in MemAvailable as a second reading that can only raise
//    it. No checkpoint is asked for in a trial.
//  - OOM evidence is only looked for when the job failed: a successful run may well print
//    "out of memory" in a warning it recovered from.
//  - The kernel's OOM killer shows as SIGKILL with no message; /proc/vmstat's oom_kill
//    (Linux 4.13+) counting up during the trial is the evidence. Another process's OOM kill
//    at the same moment would be misread; the note says what the call rests on.
#include "sweep/trial.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <csignal>
#include <cstring>

#include "base/bytes.h"
#include "base/json_reader.h"
#include "base/message.h"
#include "base/text.h"
#include "samples/companion_records.h"
#include "sweep/trial_peak.h"
#include "sys/meminfo.h"

namespace headroom {
namespace {

// What frameworks print when memory runs out (as written in their sources and reports):
// PyTorch "CUDA out of memory" / torch.OutOfMemoryError, CUDA "out of memory" and
// cudaErrorMemoryAllocation, cuBLAS CUBLAS_STATUS_ALLOC_FAILED, Python MemoryError, C++
// std::bad_alloc, glibc/errno "Cannot allocate memory", PyTorch's CPU allocator "can't
// allocate memory", JAX/XLA RESOURCE_EXHAUSTED. Matched without regard to case.
constexpr std::array<std::string_view, 9> kOomMarkers = {"out of memory",
                                                         "outofmemoryerror",
                                                         "memoryerror",
                                                         "bad_alloc",
                                                         "cannot allocate memory",
                                                         "can't allocate memory",
                                                         "cublas_status_alloc_failed",
                                                         "cudaerrormemoryallocation",
                                                         "resource_exhausted"};

constexpr size_t kOutputTailBytes = 64 * 1024;

// The last `n` bytes of a file (the end of a trial's output is where the failure is).
std::string Tail(const std::filesystem::path& path, size_t n) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  const off_t size = ::lseek(fd, 0, SEEK_END);
  const off_t from = size > static_cast<off_t>(n) ? size - static_cast<off_t>(n) : 0;
  std::string out(static_cast<size_t>(size - from), '\0');
  const ssize_t got = out.empty() ? 0 : ::pread(fd, out.data(), out.size(), from);
  ::close(fd);
  out.resize(got > 0 ? static_cast<size_t>(got) : 0);
  return out;
}

// The last non-empty line, trimmed, for an error's note.
std::string LastLine(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  const auto nl = text.find_last_of("\r\n");
  std::string_view line = nl == std::string_view::npos ? text : text.substr(nl + 1);
  std::string out(line.substr(0, 200));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return out;
}

std::optional<uint64_t> ReadOomKills(const SysRoot& root) {
  auto text = root.ReadFile("proc/vmstat", 1 << 20);
  if (!text) return std::nullopt;
  return ParseVmstatValue(*text, "oom_kill");
}

}  // namespace

TrialOutcome ClassifyTrial(const TrialFacts& f) {
  if (f.killed_by_guard) return TrialOutcome::kKilledByGuard;
  if (f.timed_out) return TrialOutcome::kTimeout;
  if (f.exit_code && *f.exit_code == 0) {
    return f.peak_pool_bytes > f.limit_bytes ? TrialOutcome::kOverLimit : TrialOutcome::kOk;
  }
  if (f.oom_message) return TrialOutcome::kOom;
  if (f.signal && *f.signal == SIGKILL && f.kernel_oom_kills > 0) return TrialOutcome::kOom;
  return TrialOutcome::kError;
}

std::optional<std::string> FindOomMessage(std::string_view output) {
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find_first_of("\r\n", start);
    if (end == std::string_view::npos) end = output.size();
    const std::string_view line = output.substr(start, end - start);
    const std::string lower = AsciiLower(line.substr(0, 4096));
    for (std::string_view marker : kOomMarkers) {
      if (lower.find(marker) != std::string::npos) return LastLine(line);
    }
    start = end + 1;
  }
  return std::nullopt;
}

std::optional<uint64_t> ParseVmstatValue(std::string_view text, std::string_view key) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ' ') {
      uint64_t v = 0;
      std::string_view digits = line.substr(key.size() + 1);
      if (digits.empty() || digits.size() > 19) return std::nullopt;
      for (char c : digits) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<uint64_t>(c - '0');
      }
      return v;
    }
    start = end + 1;
  }
  return std::nullopt;
}

namespace {

// The trial's peak (sweep/trial_peak.h), or under a device limit the records' allocator peak:
// on a discrete GPU the pool that runs out is the device's, which only the allocator sees
// ("none" when no record carries it).
JudgedPeak JudgeTrialPeak(const PeakReadings& readings,
                          const std::optional<CompanionPeak>& companion, bool device_limit) {
  JudgedPeak judged = JudgePeak(readings);
  if (!device_limit) return judged;
  const bool has = companion && companion->has_allocator;
  judged.bytes = has ? companion->allocator_peak_bytes : 0;
  judged.measure = has ? "device-allocator" : "none";
  return judged;
}

}  // namespace

Result<TrialRun> RunTrial(const SysRoot& root, const TrialSpec& spec) {
  // O_NOFOLLOW: a link planted at a trial log's name is never written through.
  const int log_fd =
      ::open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (log_fd < 0) return ErrnoError(Msg("cannot open the trial log {}", spec.log_path.string()));
  GuardOptions g;
  g.command = spec.command;
  g.min_available_bytes = spec.min_available_bytes;
  g.warn_available_bytes = 0;
  g.grace = spec.grace;
  g.max_period = std::chrono::milliseconds(10);
  g.timeout = spec.timeout;
  g.stdout_fd = log_fd;
  g.stderr_fd = log_fd;
  g.kill_with_guard = true;
  g.on_tick = spec.on_tick;
  g.count_per_cpu_free = true;
  const std::string records = spec.step_records_path.empty()
                                  ? spec.log_path.string() + ".steps.jsonl"
                                  : spec.step_records_path.string();
  ::unlink(records.c_str());  // this trial's records only
  g.extra_env = {"HEADROOM_STEP_RECORDS=" + records, "HEADROOM_CHECKPOINT_SIGNAL=none"};
  const auto oom_before = ReadOomKills(root);
  GuardEvents no_events(nullptr);
  auto guard = RunGuard(root, g, no_events, nullptr);
  ::close(log_fd);
  if (!guard) return guard.error();
  const auto oom_after = ReadOomKills(root);

  TrialRun run;
  run.guard = *guard;
  // MemAvailable plus the per-CPU free lists where the kernel shows them (sys/zoneinfo.h).
  const uint64_t start =
      guard->start_effective_available_bytes.value_or(guard->start_available_bytes);
  const uint64_t lowest =
      guard->lowest_effective_available_bytes.value_or(guard->lowest_available_bytes);
  run.baseline_available_bytes = start;
  PeakReadings readings;
  readings.cgroup_bytes = guard->cgroup_peak_bytes;
  readings.tree_rss_bytes = guard->peak_tree_rss_bytes;
  readings.pool_fall_bytes = start > lowest ? start - lowest : 0;
  std::optional<CompanionPeak> companion;
  if (auto text = ReadJsonFileText(records, 256ULL << 20)) {
    companion = PeakFromRecords(ParseCompanionRecords(text->text()));
    if (companion) readings.step_records_bytes = companion->total_bytes();
  }
  const JudgedPeak judged = JudgeTrialPeak(readings, companion, spec.device_limit);
  const bool no_device_peak = spec.device_limit && judged.measure == "none";
  run.peak_bytes = judged.bytes;
  run.peak_measure = judged.measure;
  run.own_peak_bytes = judged.own_bytes;
  run.own_peak_measure = judged.own_measure;
  run.pool_fall_bytes = readings.pool_fall_bytes;
  // The pool's peak: what was in use at the start plus the job's peak, or the pool's own
  // lowest reading when that is higher (the same rule: it can only raise it).
  const uint64_t used_before = guard->mem_total_bytes > start ? guard->mem_total_bytes - start : 0;
  const uint64_t pool_low = guard->mem_total_bytes > lowest ? guard->mem_total_bytes - lowest : 0;
  run.peak_pool_bytes =
      spec.device_limit ? run.peak_bytes : std::max(used_before + run.peak_bytes, pool_low);
  TrialFacts facts;
  facts.killed_by_guard = guard->killed;
  facts.timed_out = guard->timed_out;
  facts.exit_code = guard->job_exit_code;
  facts.signal = guard->job_signal;
  facts.peak_pool_bytes = run.peak_pool_bytes;
  facts.limit_bytes = spec.limit_bytes;
  const bool failed = !(guard->job_exit_code && *guard->job_exit_code == 0);
  const std::string tail = failed ? Tail(spec.log_path, kOutputTailBytes) : "";
  if (failed) facts.oom_message = FindOomMessage(tail);
  if (oom_before && oom_after && *oom_after > *oom_before)
    facts.kernel_oom_kills = *oom_after - *oom_before;
  run.outcome = ClassifyTrial(facts);
  if (no_device_peak &&
      (run.outcome == TrialOutcome::kOk || run.outcome == TrialOutcome::kOverLimit)) {
    run.outcome = TrialOutcome::kError;
    run.notes =
        Msg("no device peak: the job wrote no step records with a torch allocator peak; "
            "--device-limit needs the companion (docs/companion.md)");
    return run;
  }

  const Message status = guard->job_exit_code ? Msg("exit status {}", *guard->job_exit_code)
                         : guard->job_signal  ? Msg("signal {}", *guard->job_signal)
                                              : Msg("ended");
  switch (run.outcome) {
    case TrialOutcome::kOk:
      break;
    case TrialOutcome::kOverLimit:
      run.notes = spec.device_limit ? Msg("device peak {} is over the device limit {}",
                                          GB(run.peak_pool_bytes), GB(spec.limit_bytes))
                                    : Msg("pool peak {} is over the limit {}",
                                          GB(run.peak_pool_bytes), GB(spec.limit_bytes));
      break;
    case TrialOutcome::kKilledByGuard:
      run.notes = Msg("killed by the guard ({}): MemAvailable {} below the kill level {}",
                      guard->kill_reason, GB(guard->trigger_available_bytes.value_or(0)),
                      GB(spec.min_available_bytes));
      break;
    case TrialOutcome::kTimeout:
      run.notes = Msg("still running after the trial timeout ({:.0f} s); ended", guard->duration_s);
      break;
    case TrialOutcome::kOom:
      // The kernel's and the job's own words (an OOM line, the log's last line) stay as written.
      run.notes = facts.oom_message
                      ? JoinMessages({status, Message::Literal(*facts.oom_message)}, ": ")
                      : Msg("{} while the kernel's OOM killer fired ({} kill(s) in /proc/vmstat)",
                            status, facts.kernel_oom_kills);
      break;
    case TrialOutcome::kError:
    case TrialOutcome::kSkipped: {
      const std::string last = LastLine(tail);
      run.notes = last.empty() ? status : JoinMessages({status, Message::Literal(last)}, ": ");
      break;
    }
  }
  return run;
}

}  // namespace headroom
