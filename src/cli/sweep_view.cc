// `headroom sweep` on the terminal: the preflight lines and the results table, in the
// user's language. A trial's notes and the search's stop reasons are English records (the
// journal stores them) shown as they are.
#include "cli/sweep_view.h"

#include <optional>
#include <string>

#include "base/bytes.h"
#include "base/exit_status.h"
#include "cli/guard_view.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "sweep/results.h"

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
      o.device_limit
          ? TrFormat("peak_mem: the trial's device peak, the torch allocator peak in its step "
                     "records (not the host's MemAvailable); headroom: the device limit {} minus "
                     "it (GB = 1e9 bytes)",
                     FormatGB(o.limit_bytes))
                .c_str()
          : TrFormat("peak_mem: the trial's peak pool use above the MemAvailable it started from; "
                     "headroom: the limit {} minus the trial's pool peak (GB = 1e9 bytes)",
                     FormatGB(o.limit_bytes))
                .c_str());
}

void PrintNoHolders(std::FILE* err) {
  std::fprintf(err, "  %s\n",
               Tr("no known holders of the pool found (vllm, ollama, ray::, python with torch)"));
}

}  // namespace

void PrintSweepLeftovers(std::FILE* err, const std::vector<Leftover>& leftovers,
                         bool kill_leftovers, const std::vector<Message>& signalled) {
  if (leftovers.empty()) return;
  std::fprintf(
      err, "headroom: sweep: %s\n",
      TrFormat("{} process(es) that usually hold the pool are running:", leftovers.size()).c_str());
  PrintLeftovers(err, leftovers);
  if (kill_leftovers) {
    for (const auto& line : signalled) {
      std::fprintf(err, "  --kill-leftovers: %s\n", TranslatedText(line).c_str());
    }
  } else {
    std::fprintf(err, "  %s\n",
                 Tr("(nothing was signalled; --kill-leftovers stops them, or stop them yourself)"));
  }
}

void PrintSweepRefusal(std::FILE* err, const SweepOptions& o, uint64_t available_bytes,
                       uint64_t need_bytes, bool no_leftovers) {
  std::fprintf(err, "headroom: sweep: %s\n",
               TrFormat("refusing to start: MemAvailable {} is below --require-available {} "
                        "(default: the limit {} plus the kill level {})",
                        FormatGB(available_bytes), FormatGB(need_bytes), FormatGB(o.limit_bytes),
                        FormatGB(o.min_available_bytes))
                   .c_str());
  if (no_leftovers) PrintNoHolders(err);
}

void PrintSweepStart(std::FILE* err, const SweepOptions& o, uint64_t mem_total_bytes,
                     const std::filesystem::path& journal) {
  if (o.device_limit) {
    std::fprintf(err, "headroom: sweep: %s\n",
                 TrFormat("device limit {} (each trial judged by the torch allocator peak in its "
                          "step records, not by MemAvailable), margin {}, guard kill level {} "
                          "MemAvailable, journal {}",
                          FormatGB(o.limit_bytes), FormatGB(o.margin_bytes),
                          FormatGB(o.min_available_bytes), journal.string())
                     .c_str());
    return;
  }
  std::fprintf(err, "headroom: sweep: %s\n",
               TrFormat("limit {} pool use (MemTotal {}), margin {}, guard kill level {} "
                        "MemAvailable, journal {}",
                        FormatGB(o.limit_bytes), FormatGB(mem_total_bytes),
                        FormatGB(o.margin_bytes), FormatGB(o.min_available_bytes), journal.string())
                   .c_str());
}

void PrintSweepResult(std::FILE* out, const SweepOptions& o, const SweepResult& r,
                      const std::filesystem::path& journal) {
  PrintMarkdown(out, o, r);
  std::fprintf(out, "\n");
  if (r.best) {
    // TRANSLATORS: {0} is the configuration found, e.g. "batch=16 seq=1024".
    std::fprintf(
        out, "%s\n",
        TrFormat("answer: {0}: peak {1} above the baseline, headroom {2} to the limit {3}",
                 r.best->ToText(), r.best_peak_bytes ? FormatGB(*r.best_peak_bytes) : Tr("n/a"),
                 SignedGB(r.best_headroom_bytes), FormatGB(o.limit_bytes))
            .c_str());
  } else {
    std::fprintf(
        out, "%s\n",
        TrFormat("answer: none: no config ran ok under the limit {}", FormatGB(o.limit_bytes))
            .c_str());
  }
  for (const auto& why : r.stop_reasons)
    std::fprintf(out, "%s\n", TrFormat("stopped by: {}", why).c_str());
  for (const auto& gap : r.untried) {
    // TRANSLATORS: {} says which values were never tried and what failed instead.
    std::fprintf(out, "%s\n",
                 TrFormat("incomplete: {}; exit status {}", TranslatedText(UntriedText(gap)),
                          kExitSweepUntried)
                     .c_str());
  }
  if (!r.stopped_early.empty()) {
    std::fprintf(
        out, "%s\n",
        TrFormat("stopped early: {}; rerun the same command to resume", r.stopped_early).c_str());
  }
  std::fprintf(
      out, "%s\n",
      TrFormat(
          "run {} in {} ({} trial(s) launched now, {} reused from the journal); trial logs in {}",
          r.run_id, journal.string(), r.launched, r.reused, r.trial_log_dir.string())
          .c_str());
}

}  // namespace headroom
