#include "cli/explain_view.h"

#include <fmt/format.h>

#include <optional>
#include <string>

#include "base/display_width.h"
#include "base/table.h"
#include "base/wall_time.h"
#include "cli/cli.h"
#include "cli/i18n.h"
#include "cli/message_text.h"

namespace headroom {
namespace {

std::optional<std::string> Iso(const std::optional<WallTime>& t) {
  if (!t) return std::nullopt;
  return FormatUtcIso8601(*t);
}

// "  log:       ": a label padded to the summary's value column (display width, so a
// translated label lines up too).
std::string Label(const char* label) { return "  " + PadToWidth(label, 11); }

std::string SummaryText(const ExplainReport& r) {
  const auto& a = r.analysis;
  std::string out = fmt::format("headroom explain: {}\n", r.log_path);
  // TRANSLATORS: the summary's labels; the values start in the 14th column.
  out += Label(Tr("log:")) +
         TrPluralFormat("{0}, {1} steps in {2} intervals (timed by {3}), {4} segment",
                        "{0}, {1} steps in {2} intervals (timed by {3}), {4} segments", a.segments,
                        r.format, a.steps, a.intervals, r.timing, a.segments) +
         "\n";
  if (r.samples) {
    out += Label(Tr("samples:")) +
           TrFormat("{}, {} rows, platform {} (from {})", r.samples_path, r.samples->rows,
                    PlatformKindName(r.profile.kind), PlatformSourceName(r.platform_source)) +
           "\n";
  } else {
    out += Label(Tr("samples:")) +
           Tr("none (--samples not given): no GPU, memory or host evidence") + "\n";
  }
  if (r.events) {
    out += Label(Tr("events:")) +
           TrPluralFormat("{}, {} event", "{}, {} events", r.events->events.size(), r.events_path,
                          r.events->events.size()) +
           "\n";
  }
  out += Label(Tr("baseline:")) +
         TrFormat("{:.3f} s/step (fastest stretch, steps {}-{})", a.baseline_seconds_per_step,
                  a.baseline_first_step, a.baseline_last_step) +
         "\n";
  for (const auto& n : r.notes) out += Label(Tr("note:")) + TranslatedText(n) + "\n";
  return out;
}

std::string SeriesText(const SlowdownAnalysis& a) {
  std::string out = "\n" + std::string(Tr("step rate:")) + "\n";
  TextTable series({TextTable::Align::kLeft, TextTable::Align::kLeft, TextTable::Align::kRight,
                    TextTable::Align::kRight});
  // TRANSLATORS: headings of the step-rate table: a range of steps, its start time, seconds
  // per step, and that as a multiple of the baseline.
  series.AddRow({Tr("steps"), Tr("from"), "s/step", Tr("x baseline")});
  for (const auto& b : a.series) {
    series.AddRow({fmt::format("{}-{}", b.first_step, b.last_step), Iso(b.start_time).value_or("-"),
                   fmt::format("{:.3f}", b.seconds_per_step), fmt::format("{:.2f}", b.factor)});
  }
  return out + series.Render();
}

// One slowdown: its line, then its verdict, evidence, what was unavailable and the advice.
std::string WindowText(size_t i, const SlowdownWindow& w, const WindowVerdict& v) {
  // TRANSLATORS: one slowdown: its number, steps, start and end time, length, seconds per
  // step, and how many times the baseline (on average and at its worst).
  std::string out =
      "  " +
      TrFormat(
          "#{0} steps {1}-{2}, {3} to {4} ({5:.0f} s), {6:.3f} s/step, {7:.1f}x baseline (peak "
          "{8:.1f}x)",
          i + 1, w.first_step, w.last_step, Iso(w.start_time).value_or("?"),
          Iso(w.end_time).value_or("?"), w.seconds, w.seconds_per_step, w.factor, w.peak_factor) +
      "\n";
  std::string also;
  for (auto c : v.also) also += (also.empty() ? "" : ", ") + TranslatedText(SlowdownCauseWord(c));
  const std::string cause = TranslatedText(SlowdownCauseWord(v.cause));
  out += "     " +
         (also.empty() ? TrFormat("verdict: {}", cause)
                       // TRANSLATORS: {1} lists other causes that were seen in the same stretch.
                       : TrFormat("verdict: {0} (also: {1})", cause, also)) +
         "\n";
  for (const auto& e : v.evidence) {
    out += "     " +
           TrFormat("evidence: {}",
                    (e.time ? FormatUtcIso8601(*e.time) + " " : "") + TranslatedText(e.text)) +
           "\n";
  }
  for (const auto& r : v.ruled_out)
    out += "     " + TrFormat("ruled out: {}", TranslatedText(r)) + "\n";
  for (const auto& u : v.unavailable)
    out += "     " + TrFormat("unavailable: {}", TranslatedText(u)) + "\n";
  out += "     " + TrFormat("advice: {}", TranslatedText(v.advice)) + "\n";
  return out;
}

}  // namespace

std::string ExplainReportText(const ExplainReport& r) {
  const auto& a = r.analysis;
  const auto& t = r.thresholds;
  std::string out = SummaryText(r) + SeriesText(a);
  // TRANSLATORS: {3} is the number of slowdowns found, or the word "none".
  out += "\n" +
         TrFormat("slowdowns (>= {0:.1f}x baseline for >= {1} intervals and >= {2} steps): {3}",
                  t.slow_factor, t.min_intervals, t.min_steps,
                  a.windows.empty() ? std::string(Tr("none")) : std::to_string(a.windows.size())) +
         "\n";
  for (size_t i = 0; i < a.windows.size(); ++i) out += WindowText(i, a.windows[i], r.verdicts[i]);
  return out;
}

}  // namespace headroom
