#include "cli/guard_view.h"

#include "base/bytes.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "guard/kill_line.h"

namespace headroom {

// The summary line, for people (GuardSummaryJson is the record). The kill reason and the signal
// path are identifiers (the events file and summary_json have the same words): English.
void PrintGuardSummary(std::FILE* out, const GuardSummary& s) {
  std::string head;
  if (s.killed) {
    // TRANSLATORS: optional clauses inside "killed the job (...)", after the signal path.
    const std::string signal_after =
        s.crossing_to_signal_ms
            ? TrFormat("; signal {:.1f} ms after the reading", *s.crossing_to_signal_ms)
            : "";
    const std::string empty_after =
        s.crossing_to_empty_ms ? TrFormat(", empty tree after {:.0f} ms", *s.crossing_to_empty_ms)
                               : "";
    // TRANSLATORS: {0} is the reading against the level ("MemAvailable 21.38 GiB fell below
    // the kill level 21.40 GiB"), {1} the kill reason (e.g. memavailable), {2} how the job was
    // signalled; {3} and {4} are the optional clauses above, or empty.
    head = TrFormat("killed the job: {0} ({1}; {2}{3}{4})", TranslatedText(KillReadingLine(s)),
                    s.kill_reason, s.signal_path, signal_after, empty_after);
  } else if (s.job_exit_code) {
    head = TrFormat("job exited with status {}", *s.job_exit_code);
  } else if (s.job_signal) {
    head = TrFormat("job died of signal {}", *s.job_signal);
  } else {
    head = Tr("job ended");
  }
  // TRANSLATORS: guard's closing line; {0} is one of "killed the job (...)", "job exited with
  // status N", "job died of signal N", "job ended".
  std::fprintf(
      out, "%s\n",
      TrFormat("headroom guard: {0} after {1:.1f} s; lowest MemAvailable {2}; the machine's peak "
               "pool use {3} (MemTotal - lowest MemAvailable); peak job RSS {4} (GPU memory on "
               "unified memory "
               "is not in RSS); cgroup peak {5}; MemAvailable after {6}",
               head, s.duration_s, FormatGiB(s.lowest_available_bytes),
               FormatGiB(s.peak_pool_use_bytes), FormatGiB(s.peak_tree_rss_bytes),
               s.cgroup_peak_bytes ? FormatGiB(*s.cgroup_peak_bytes) : Tr("n/a"),
               s.available_after_bytes ? FormatGiB(*s.available_after_bytes) : Tr("n/a"))
          .c_str());
  PrintKillFollowUp(out, "headroom guard: ", s);
  // Checkpoint before the kill (docs/guard.md): one line when it was asked for or when a
  // crossing could not ask. A guard that can never ask (--pid without the job's step records)
  // says so only when memory came near the levels; --json always has the reason.
  const bool came_near = s.warnings > 0 || !s.kill_reason.empty();
  if (const auto& c = s.checkpoint;
      c && (c->asked || (!c->not_asked.empty() && (came_near || c->can_ask)))) {
    std::string line;
    if (!c->asked) {
      line = TrFormat("checkpoint not asked for: {}", TranslatedText(c->not_asked));
    } else if (c->finished && c->ok) {
      line = TrFormat(
          "checkpoint asked for ({0}, MemAvailable {1}); saved step {2} in {3:.1f} s "
          "to {4}{5}",
          c->how, FormatGiB(c->asked_available_bytes.value_or(0)),
          c->step ? std::to_string(*c->step) : std::string("?"), c->duration_s.value_or(0.0),
          c->path.empty() ? Tr("(path unknown)") : c->path,
          c->late ? Tr(", after its deadline") : std::string());
    } else if (c->finished) {
      line = TrFormat("checkpoint asked for ({0}); the save failed: {1}", c->how, c->error);
    } else {
      line = TrFormat("checkpoint asked for ({0}); not finished{1}", c->how,
                      c->killed_while_saving ? Tr(" when the kill came") : std::string());
    }
    std::fprintf(out, "headroom guard: %s\n", line.c_str());
  }
  for (const auto& n : s.notes) {
    std::fprintf(out, "headroom guard: %s\n", TrFormat("note: {}", TranslatedText(n)).c_str());
  }
}

void PrintKillFollowUp(std::FILE* out, std::string_view prefix, const GuardSummary& s) {
  if (!s.killed) return;
  if (const auto peak = JobPeakLine(s)) {
    std::fprintf(out, "%.*s%s\n", static_cast<int>(prefix.size()), prefix.data(),
                 TranslatedText(*peak).c_str());
  }
  if (!s.next_step.empty()) {
    // TRANSLATORS: {} is a command line to run, "headroom ladder start JOB ...".
    std::fprintf(out, "%.*s%s\n", static_cast<int>(prefix.size()), prefix.data(),
                 TrFormat("next: {} (the OOM ladder: the cheapest remedy first, docs/ladder.md)",
                          s.next_step)
                     .c_str());
  }
}

void PrintLeftovers(std::FILE* out, const std::vector<Leftover>& leftovers) {
  for (const auto& l : leftovers) {
    // TRANSLATORS: one process per line: {0} pid, {1} its kind padded to 22 columns
    // ("vllm", "python+torch"), {2} its RSS, {3} its command line.
    std::fprintf(out, "%s\n",
                 TrFormat("  pid {0}  {1:<22} RSS {2}  {3}", l.pid, l.what, FormatGiB(l.rss_bytes),
                          l.cmdline)
                     .c_str());
  }
}

void PrintGuardRefusal(std::FILE* out, uint64_t available_bytes, uint64_t need_bytes,
                       const std::vector<Leftover>& leftovers) {
  std::fprintf(out, "headroom: guard: %s\n",
               TrFormat("refusing to start: MemAvailable {} is below --require-available {}",
                        FormatGiB(available_bytes), FormatGiB(need_bytes))
                   .c_str());
  if (leftovers.empty()) {
    std::fprintf(out, "  %s\n",
                 Tr("no known holders of the pool found (vllm, ollama, ray::, python with torch)"));
  }
  PrintLeftovers(out, leftovers);
  std::fprintf(out, "  %s\n", Tr("(nothing was signalled; stop them yourself, e.g. kill PID)"));
}

}  // namespace headroom
