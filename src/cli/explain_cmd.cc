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
#include <CLI/CLI.hpp>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/explain_view.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "cli/run_files.h"
#include "explain/companion_steps.h"
#include "explain/explain_report.h"
#include "explain/step_log.h"
#include "explain/step_times.h"
#include "samples/samples_csv.h"

namespace headroom {
namespace {

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
      FilesFromRun(env, {run_id, journal_flag, /*need_log=*/true, "explain"},
                   {log_path, samples_path, events_path});
    if (log_path.empty())
      throw UsageError{Tr("--log: give the training log, or --run ID of a watch run")};
    const std::optional<StepPattern> pattern = StepPatternFlag(step_regex);
    // Inputs first, all of them, so a bad path is reported before any analysis.
    // The log is parsed before the samples are read so that only the rows its slowdown
    // windows look at are kept (ExplainSampleFilter): memory follows the windows, not the file.
    const std::string log_text = ReadWhole("--log", log_path);
    StepLogOptions options;
    if (pattern) options.pattern = &*pattern;
    // A step-records file of the companion (docs/companion.md) is read as such: exact times.
    bool from_records = false;
    const std::vector<StepRecord> records = ParseStepSource(log_text, options, &from_records);
    const std::vector<StepTiming> timings = StepTimes(records);
    ExplainSampleFilter filter(timings);
    std::optional<SampleSeries> samples;
    if (!samples_path.empty())
      samples =
          ReadSamplesFlag(samples_path, [&filter](const SampleSeries& series, const Sample& s) {
            return filter.Keep(series, s);
          });
    std::optional<RecordedEvents> events;
    if (!events_path.empty()) events = ParseEventLines(ReadWhole("--events", events_path));

    if (timings.empty()) {
      PrintError(
          env, "explain: " +
                   TrFormat("no step series in {}: {} step records; the built-in formats are tqdm, "
                            "hf-dict, megatron, torchtune, jsonl (try --step-regex)",
                            log_path, records.size()));
      return kExitNegative;
    }

    ExplainRequest request{log_path,
                           samples_path,
                           events_path,
                           samples ? &*samples : nullptr,
                           events ? &*events : nullptr,
                           forced,
                           platform_from_config,
                           env.config.settings.platform_override()};
    request.power.kind = std::nullopt;  // the kind is `forced`, chosen above
    if (samples) request.sample_stats = &filter.stats();
    ExplainReport r = AnalyzeRun(request, records, timings);
    if (from_records) {
      r.notes.insert(r.notes.begin(),
                     Msg("steps from the companion's step records: the trainer's own step numbers "
                         "and end times, no log scraping"));
    }
    const std::string text = json ? ExplainReportToJson(r).dump(2) + "\n" : ExplainReportText(r);
    std::fputs(text.c_str(), env.out);
    return kExitOk;
  } catch (const UsageError& e) {
    PrintError(env, "explain: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
