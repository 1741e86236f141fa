// `headroom report`: samples (+ log, + events) -> the report data (report/report_data.h) ->
// the page template with the data in it -> one self-contained HTML file, written through a
// temporary file and a rename. --json prints the data instead.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "cli/plan_args.h"
#include "cli/report_view.h"
#include "cli/run_files.h"
#include "explain/explain_report.h"
#include "explain/run_inputs.h"
#include "plan/run_config.h"
#include "report/report_data.h"
#include "report/report_inputs.h"

namespace headroom {
namespace {

// report's flags: the app, then the variables its options write.
struct ReportCommandFlags final : CommandFlags {
  CLI::App app{Tr("Draw a run as one self-contained HTML page that opens offline: memory (used, "
                  "available, page cache, the guard's kill level, the plan's estimate), power "
                  "against the platform's sustained and rated figures, temperature, SM clock and "
                  "step rate on one zoomable time axis, with throttle, clock-collapse, contention "
                  "and guard events, explain's slowdown windows and their verdicts, and a summary "
                  "table. Long runs are drawn from at most 2000 buckets per series, each keeping "
                  "its min and max, so spikes survive.\n\n"
                  "exit status: 0 written; 2 usage or input error"),
               "headroom report"};
  std::string samples_path, log_path, events_path, out_path = "report.html", journal_flag,
                                                   plan_args, title, platform_text, step_regex;
  int64_t run_id = 0;
  bool json = false;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineReportFlags() {
  auto defined = std::make_unique<ReportCommandFlags>();
  auto& [app, samples_path, log_path, events_path, out_path, journal_flag, plan_args, title,
         platform_text, step_regex, run_id, json] = *defined;
  app.add_option("--run", run_id,
                 Tr("a `headroom watch` run in the journal: its samples, log and events"));
  app.add_option("--samples", samples_path, Tr("watch's samples CSV"));
  app.add_option("--log", log_path, Tr("the job's log (step rate and slowdown windows)"));
  app.add_option("--events", events_path, Tr("watch's or guard's events (JSON lines)"));
  app.add_option("-o,--output", out_path, Tr("the page to write (default report.html)"));
  app.add_option(
      "--plan-args", plan_args,
      Tr("draw the plan's estimate: plan's flags, e.g. \"llama-3.1-8b --method qlora\""));
  app.add_option("--title", title, Tr("the page's heading (default: run ID or the samples file)"));
  app.add_option("--platform", platform_text,
                 Tr("judge the samples as gb10, discrete or none (default: [platform] kind in "
                    "config.toml, else detect)"));
  app.add_option("--step-regex", step_regex,
                 Tr("a pattern for the log's step lines (see explain --help)"));
  AddJournalFlag(app, journal_flag);
  AddJsonFlag(app, json);
  return defined;
}

int RunReportCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& [app, samples_path, log_path, events_path, out_path, journal_flag, plan_args, title,
         platform_text, step_regex, run_id, json] = FlagsOf<ReportCommandFlags>(given_flags);
  try {
    if (run_id > 0) {
      FilesFromRun(env, {run_id, journal_flag, /*need_log=*/false, "report"},
                   {log_path, samples_path, events_path});
      if (title.empty()) title = fmt::format("run {}", run_id);
    }
    if (samples_path.empty())
      throw UsageError{Tr("--samples: give watch's samples CSV, or --run ID of a watch run")};
    bool platform_from_config = false;  // the data names no source; the profile is what counts
    const std::optional<PlatformKind> forced =
        PlatformKindFor(env, platform_text, &platform_from_config);
    const std::optional<StepPattern> pattern = StepPatternFlag(step_regex);
    // -o replaces only a regular file or nothing, never one of the inputs: checked before
    // anything is read, and again when the page is written.
    const std::vector<std::string> inputs{samples_path, log_path, events_path};
    if (!json) CheckOutputFlag(out_path, "-o", inputs);
    // The log first, so the samples keep only the rows its slowdown windows need
    // (ExplainSampleFilter, as explain does); its text is gone once its steps are read.
    std::optional<ReportLog> log;
    if (!log_path.empty())
      log = ReadReportLog(ReadWhole("--log", log_path), pattern ? &*pattern : nullptr);
    // Two passes over the samples, neither holding the file: the first measures its extent
    // (the time axis) and keeps the windows' rows; the second buckets every row as it is read
    // (report/report_data.h ReportSamplePass). Memory follows the buckets and the windows.
    SamplesExtent extent;
    ExplainSampleFilter filter(log ? log->timings : std::vector<StepTiming>{});
    const SampleSeries samples =
        ReadSamplesFlag(samples_path, [&](const SampleSeries& series, const Sample& s) {
          extent.Add(s);
          return filter.Keep(series, s);
        });
    std::unique_ptr<ReportSamplePass> pass;
    if (extent.rows > 0)
      ReadSamplesFlag(samples_path, [&](const SampleSeries& series, const Sample& s) {
        if (!pass) pass = std::make_unique<ReportSamplePass>(series, extent);
        pass->Add(s);
        return false;
      });
    // The page's data (report --json prints it; the page's script and tests read it) is
    // English: its notes and the plan's line are written in English here, explain's verdicts
    // (their evidence and advice) are message values that BuildReportData renders in English,
    // and it writes the rest untranslated. Errors found on the way are in the user's language.
    PlatformSource source = PlatformSource::kNone;
    ReportInputs in = StartReportInputs(
        samples, samples_path,
        WithConfiguredPower(env, ProfileFromSamples(samples, filter.stats(), forced, &source)),
        title, std::chrono::system_clock::now());
    in.pass = pass.get();
    std::optional<RecordedEvents> recorded;
    if (!events_path.empty())
      recorded = AddReportEvents(in, ReadWhole("--events", events_path), events_path);
    if (log) {
      JudgeReportLog(*log, samples, recorded ? &*recorded : nullptr, in.profile);
      AddReportLog(in, *log, log_path);
    }
    // --plan-args: plan's own flags as words, parsed by plan's definitions into a request.
    // A --from FILE among them: the keys it has that the plan does not model are a note.
    if (!plan_args.empty()) {
      std::optional<FromFile> from;
      AddPlanEstimate(in, ResolvePlanWords(SplitWords(plan_args, "--plan-args"), "--plan-args", "",
                                           env, &from));
      if (from)
        if (auto note = NotModelledNote(from->config, from->path))
          in.notes.push_back(EnglishText(*note));
    }
    auto data = BuildReportData(in);
    if (!data)
      throw UsageError{"--samples: " + samples_path + ": " + TranslatedText(data.error().what)};
    if (json) {
      PrintJson(env, *data);
      return kExitOk;
    }
    auto page = FillReportTemplate(ReportTemplate(), *data);
    if (!page) throw UsageError{TranslatedText(page.error().what)};
    WriteFileAtomically(out_path, *page, "-o", inputs);
    PrintReportWritten(env, out_path, page->size(), *data, !log_path.empty());
    return kExitOk;
  } catch (const UsageError& e) {
    PrintError(env, "report: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
