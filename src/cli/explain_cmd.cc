// `headroom explain`: flags -> the log's step series (explain/step_log.h, step_times.h) ->
// slowdown windows (explain/slowdown.h) -> a verdict per window from the samples and events
// (explain/verdict.h) -> a table or JSON (schema_version 1, docs/explain.md).
//
// Implementation notes.
//  - Files are read whole, capped at 1 GiB each: a month of watch samples at 1 s is about
//    500 MB, a training log rarely a tenth of that; the cap keeps a wrong path (a disk image)
//    from exhausting memory.
//  - Exit statuses: 0 the analysis was printed, slowdowns or not; 1 the log holds no step
//    series (nothing to analyse: a negative answer, with a hint about --step-regex); 2 usage
//    or input errors (a file that cannot be read, a samples file with no header, a bad
//    --step-regex or --platform).
//  - `--run ID` is left out: the journal records guard and sweep runs, not the paths of a
//    watch run's samples or log (docs/explain.md).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/display_width.h"
#include "base/i18n.h"
#include "base/table.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/message_text.h"
#include "cli/run_files.h"
#include "explain/slowdown.h"
#include "explain/step_log.h"
#include "explain/step_times.h"
#include "explain/verdict.h"
#include "samples/samples_csv.h"
#include "store/journal.h"

namespace headroom {
namespace {

constexpr int kExplainSchemaVersion = 1;

std::optional<std::string> Iso(const std::optional<WallTime>& t) {
  if (!t) return std::nullopt;
  return FormatUtcIso8601(*t);
}

nlohmann::ordered_json JsonTime(const std::optional<WallTime>& t) {
  return t ? nlohmann::ordered_json(FormatUtcIso8601(*t)) : nlohmann::ordered_json(nullptr);
}

template <typename T>
nlohmann::ordered_json JsonOpt(const std::optional<T>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

// Everything the report shows, gathered once for both outputs.
struct Report {
  std::string log_path, samples_path, events_path;
  std::string format;        // of the primary stream's first record
  std::string timing;        // the most common timing source
  bool local_times = false;  // the log's own stamps had no zone
  size_t records = 0;
  const SampleSeries* samples = nullptr;
  const RecordedEvents* events = nullptr;
  PlatformProfile profile;
  PlatformSource platform_source = PlatformSource::kNone;
  SlowdownThresholds thresholds;
  SlowdownAnalysis analysis;
  std::vector<WindowVerdict> verdicts;
  std::vector<std::string> notes;
};

nlohmann::ordered_json ToJson(const Report& r) {
  using J = nlohmann::ordered_json;
  J log = {{"path", r.log_path},
           {"format", r.format},
           {"timing", r.timing},
           {"records", r.records},
           {"intervals", r.analysis.intervals},
           {"steps", r.analysis.steps},
           {"segments", r.analysis.segments}};
  J samples = nullptr;
  if (r.samples) {
    samples = {{"path", r.samples_path},
               {"rows", r.samples->samples.size()},
               {"skipped_rows", r.samples->skipped_rows},
               {"platform", PlatformKindName(r.profile.kind)},
               {"platform_source", PlatformSourceName(r.platform_source)}};
  }
  J events = nullptr;
  if (r.events) {
    events = {{"path", r.events_path},
              {"count", r.events->events.size()},
              {"skipped_lines", r.events->skipped_lines}};
  }
  J series = J::array();
  for (const auto& b : r.analysis.series) {
    series.push_back({{"first_step", b.first_step},
                      {"last_step", b.last_step},
                      {"start_time", JsonTime(b.start_time)},
                      {"end_time", JsonTime(b.end_time)},
                      {"seconds_per_step", b.seconds_per_step},
                      {"factor", b.factor}});
  }
  J windows = J::array();
  for (size_t i = 0; i < r.analysis.windows.size(); ++i) {
    const auto& w = r.analysis.windows[i];
    const auto& v = r.verdicts[i];
    J also = J::array(), evidence = J::array();
    for (auto c : v.also) also.push_back(SlowdownCauseName(c));
    for (const auto& e : v.evidence)
      evidence.push_back({{"time", JsonTime(e.time)}, {"text", EnglishText(e.text)}});
    const auto& rd = v.readings;
    windows.push_back({{"first_step", w.first_step},
                       {"last_step", w.last_step},
                       {"segment", w.segment},
                       {"start_time", JsonTime(w.start_time)},
                       {"end_time", JsonTime(w.end_time)},
                       {"seconds", w.seconds},
                       {"seconds_per_step", w.seconds_per_step},
                       {"factor", w.factor},
                       {"peak_factor", w.peak_factor},
                       {"verdict", SlowdownCauseName(v.cause)},
                       {"also", also},
                       {"evidence", evidence},
                       {"unavailable", EnglishTexts(v.unavailable)},
                       {"advice", EnglishText(v.advice)},
                       {"readings",
                        {{"samples", rd.samples},
                         {"power_w_mean", JsonOpt(rd.power_w_mean)},
                         {"temperature_c_min", JsonOpt(rd.temperature_c_min)},
                         {"temperature_c_max", JsonOpt(rd.temperature_c_max)},
                         {"sm_clock_mhz_median", JsonOpt(rd.sm_clock_mhz_median)},
                         {"gpu_utilization_pct_mean", JsonOpt(rd.gpu_utilization_pct_mean)},
                         {"cpu_util_pct_mean", JsonOpt(rd.cpu_util_pct_mean)},
                         {"psi_some_avg10_pct_max", JsonOpt(rd.psi_some_avg10_pct_max)},
                         {"mem_available_change_bytes", JsonOpt(rd.mem_available_change_bytes)},
                         {"clock_event_reasons", rd.reasons}}}});
  }
  const auto& t = r.thresholds;
  return {{"schema_version", kExplainSchemaVersion},
          {"log", log},
          {"samples", samples},
          {"events", events},
          {"baseline",
           {{"seconds_per_step", r.analysis.baseline_seconds_per_step},
            {"first_step", r.analysis.baseline_first_step},
            {"last_step", r.analysis.baseline_last_step}}},
          {"thresholds",
           {{"slow_factor", t.slow_factor},
            {"min_intervals", t.min_intervals},
            {"min_steps", t.min_steps},
            {"max_gap_intervals", t.max_gap_intervals},
            {"warmup_intervals", t.warmup_intervals},
            {"baseline_intervals", t.baseline_intervals}}},
          {"series", series},
          {"windows", windows},
          {"notes", r.notes}};
}

// "  log:       ": a label padded to the summary's value column (display width, so a
// translated label lines up too).
std::string Label(const char* label) { return "  " + PadToWidth(label, 11); }

std::string ToText(const Report& r) {
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
           TrFormat("{}, {} rows, platform {} (from {})", r.samples_path, r.samples->samples.size(),
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
  for (const auto& n : r.notes) out += Label(Tr("note:")) + n + "\n";

  out += "\n" + std::string(Tr("step rate:")) + "\n";
  TextTable series({TextTable::Align::kLeft, TextTable::Align::kLeft, TextTable::Align::kRight,
                    TextTable::Align::kRight});
  // TRANSLATORS: headings of the step-rate table: a range of steps, its start time, seconds
  // per step, and that as a multiple of the baseline.
  series.AddRow({Tr("steps"), Tr("from"), "s/step", Tr("x baseline")});
  for (const auto& b : a.series) {
    series.AddRow({fmt::format("{}-{}", b.first_step, b.last_step), Iso(b.start_time).value_or("-"),
                   fmt::format("{:.3f}", b.seconds_per_step), fmt::format("{:.2f}", b.factor)});
  }
  out += series.Render();

  const auto& t = r.thresholds;
  // TRANSLATORS: {3} is the number of slowdowns found, or the word "none".
  out += "\n" +
         TrFormat("slowdowns (>= {0:.1f}x baseline for >= {1} intervals and >= {2} steps): {3}",
                  t.slow_factor, t.min_intervals, t.min_steps,
                  a.windows.empty() ? std::string(Tr("none")) : std::to_string(a.windows.size())) +
         "\n";
  for (size_t i = 0; i < a.windows.size(); ++i) {
    const auto& w = a.windows[i];
    const auto& v = r.verdicts[i];
    // TRANSLATORS: one slowdown: its number, steps, start and end time, length, seconds per
    // step, and how many times the baseline (on average and at its worst).
    out +=
        "  " +
        TrFormat(
            "#{0} steps {1}-{2}, {3} to {4} ({5:.0f} s), {6:.3f} s/step, {7:.1f}x baseline (peak "
            "{8:.1f}x)",
            i + 1, w.first_step, w.last_step, Iso(w.start_time).value_or("?"),
            Iso(w.end_time).value_or("?"), w.seconds, w.seconds_per_step, w.factor, w.peak_factor) +
        "\n";
    std::string also;
    for (auto c : v.also) {
      also += (also.empty() ? "" : ", ") + TranslatedText(SlowdownCauseWord(c));
    }
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
    for (const auto& u : v.unavailable) {
      out += "     " + TrFormat("unavailable: {}", TranslatedText(u)) + "\n";
    }
    out += "     " + TrFormat("advice: {}", TranslatedText(v.advice)) + "\n";
  }
  return out;
}

// explain's flags: the app, then the variables its options write.
struct ExplainCommandFlags final : CommandFlags {
  CLI::App app{
      Tr("Find where a training run slowed down and say why, from its log and the samples of "
         "`headroom watch`.\n\n"
         "  headroom explain --log train.log --samples samples.csv [--events events.jsonl]\n"
         "  headroom explain --run ID     (a `headroom watch` run recorded in the journal)\n\n"
         "A slowdown is a sustained stretch at 1.5x or more of the run's baseline seconds per "
         "step; each gets a verdict (thermal, clock-collapse, contention, host-side, "
         "unexplained) with its evidence and advice (docs/explain.md).\n\n"
         "exit status: 0 analysis printed (with or without slowdowns); 1 no step series in the "
         "log; 2 usage or input error"),
      "headroom explain"};
  std::string log_path, samples_path, events_path, step_regex, platform_text, journal_flag;
  int64_t run_id = 0;
  bool json = false;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineExplainFlags() {
  auto defined = std::make_unique<ExplainCommandFlags>();
  auto& [app, log_path, samples_path, events_path, step_regex, platform_text, journal_flag, run_id,
         json] = *defined;
  app.add_option("--log", log_path,
                 Tr("the training log (ideally written by `headroom watch --log`)"));
  app.add_option("--run", run_id,
                 Tr("take the log, samples and events of this `headroom watch` run from the "
                    "journal (the flags above override)"))
      ->check(CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()));
  AddJournalFlag(app, journal_flag);
  app.add_option("--samples", samples_path, Tr("the samples CSV of `headroom watch --out`"));
  app.add_option("--events", events_path, Tr("the events file of `headroom watch --events`"));
  app.add_option(
      "--step-regex", step_regex,
      Tr("read steps with this pattern instead of the built-in formats (docs/explain-logs.md)"));
  app.add_option("--platform", platform_text,
                 Tr("gb10, discrete or none: judge the samples as this platform (default: "
                    "[platform] kind in config.toml, else from the samples)"));
  AddJsonFlag(app, json);
  return defined;
}

int RunExplainCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& [app, log_path, samples_path, events_path, step_regex, platform_text, journal_flag, run_id,
         json] = FlagsOf<ExplainCommandFlags>(given_flags);
  try {
    // --platform, else [platform] kind / HEADROOM_PLATFORM, else detected from the samples.
    bool platform_from_config = false;
    const std::optional<PlatformKind> forced =
        PlatformKindFor(env, platform_text, &platform_from_config);
    if (run_id > 0)
      FilesFromRun(env, run_id, journal_flag, log_path, samples_path, events_path,
                   /*need_log=*/true, "explain");
    if (log_path.empty())
      throw UsageError{Tr("--log: give the training log, or --run ID of a watch run")};
    std::optional<StepPattern> pattern;
    if (!step_regex.empty()) {
      auto compiled = StepPattern::Compile(step_regex);
      if (!compiled) throw UsageError{compiled.error().message};
      pattern.emplace(std::move(*compiled));
    }
    // Inputs first, all of them, so a bad path is reported before any analysis.
    const std::string log_text = ReadWhole("--log", log_path);
    std::optional<SampleSeries> samples;
    if (!samples_path.empty()) {
      auto read = ReadSamplesCsv(samples_path, kMaxFileBytes);
      if (!read) throw UsageError{"--samples: " + read.error().message};
      samples.emplace(std::move(*read));
    }
    std::optional<RecordedEvents> events;
    if (!events_path.empty()) events = ParseEventLines(ReadWhole("--events", events_path));

    StepLogOptions options;
    if (pattern) options.pattern = &*pattern;
    const std::vector<StepRecord> records = ParseStepLog(log_text, options);
    const std::vector<StepTiming> timings = StepTimes(records);
    if (timings.empty()) {
      PrintError(
          env, "explain: " +
                   TrFormat("no step series in {}: {} step records; the built-in formats are tqdm, "
                            "hf-dict, megatron, torchtune, jsonl (try --step-regex)",
                            log_path, records.size()));
      return kExitNegative;
    }

    Report r;
    r.log_path = log_path;
    r.samples_path = samples_path;
    r.events_path = events_path;
    r.records = records.size();
    r.format = std::string(StepLogFormatName(records[timings.front().record_index].format));
    std::map<StepTimingSource, size_t> sources;
    for (const auto& t : timings) ++sources[t.source];
    r.timing = std::string(StepTimingSourceName(
        std::max_element(sources.begin(), sources.end(), [](const auto& x, const auto& y) {
          return x.second < y.second;
        })->first));
    r.local_times = records[timings.front().record_index].time_source == StepTimeSource::kLineLocal;
    if (r.local_times) {
      r.notes.push_back(
          Tr("the log's timestamps have no zone and are read as UTC; if they are local "
             "time the samples are misaligned (watch --log stamps lines in UTC)"));
    }
    r.analysis = FindSlowdowns(timings, r.thresholds);

    VerdictInputs in;
    if (samples) {
      r.samples = &*samples;
      r.profile = ProfileFromSamples(*samples, forced, &r.platform_source);
      in.samples = &samples->samples;
      const auto interval = samples->header.find("interval_ms");
      if (interval != samples->header.end())
        in.sample_interval_s = std::atof(interval->second.c_str()) / 1000;
      if (samples->samples.empty()) r.notes.push_back(Tr("the samples file has no rows"));
    } else if (forced) {
      r.profile.kind = *forced;
      r.platform_source = PlatformSource::kFlag;
    }
    if (platform_from_config && r.platform_source == PlatformSource::kFlag)
      r.platform_source = PlatformSource::kConfig;
    r.profile = WithConfiguredPower(env, r.profile);
    in.profile = r.profile;
    if (events) {
      r.events = &*events;
      in.events = &events->events;
      if (events->skipped_lines) {
        r.notes.push_back(TrFormat("{} lines of {} were not events and were skipped",
                                   events->skipped_lines, events_path));
      }
    }
    for (const auto& w : r.analysis.windows) r.verdicts.push_back(ExplainWindow(w, in));

    const std::string text = json ? ToJson(r).dump(2) + "\n" : ToText(r);
    std::fputs(text.c_str(), env.out);
    return kExitOk;
  } catch (const UsageError& e) {
    PrintError(env, "explain: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
