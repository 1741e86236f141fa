// Messages in the user's language through the real binary: a few commands under
// LANG=zh_TW.UTF-8 show the catalog's Traditional Chinese (i18n_cli.h reads it from the
// catalog the build merged), the same commands under LANG=C and an unknown language are
// English, LANGUAGE picks the language too, --json and the files doctor writes are byte for
// byte the English ones, and numbers keep their '.'.
#include "i18n_cli.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <clocale>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "../explain/synthetic_run.h"
#include "base/display_width.h"
#include "plan/plan.h"
#include "testing_files.h"

namespace headroom {
namespace {

using namespace i18n_cli;  // NOLINT(google-build-using-namespace): the tests' own helpers

// plan's budget table has one "  MemTotal ..." row ending in `figures` (its first column is as
// wide as the widest label, a translated one counted in terminal columns).
bool MemTotalRowIs(const std::string& out, const std::string& figures) {
  const auto rows = LinesStartingWith(out, "  MemTotal ");
  return rows.size() == 1 && rows[0].ends_with(" " + figures) &&
         rows[0].find_first_not_of(' ', 10) == rows[0].size() - figures.size();
}

TEST_F(I18nCli, MainHelpIsChineseUnderZhTw) {
  const auto zh = Headroom({"--help"}, kChinese);
  ASSERT_EQ(zh.status, 0) << zh.err;
  EXPECT_TRUE(Contains(zh.out, Zh("commands:"))) << zh.out;
  EXPECT_TRUE(Contains(
      zh.out,
      "  plan       " + Zh("will this model, method, batch and packing fit in the memory pool?")));
  EXPECT_TRUE(Contains(zh.out, Zh("exit status: 0 success, 1 a negative answer (e.g. does not "
                                  "fit), 2 usage or input error")));
  EXPECT_TRUE(Contains(zh.out, Zh("usage: headroom <command> [options]   (headroom help <command>, "
                                  "or headroom <command> --help)")));
  EXPECT_FALSE(Contains(zh.out, "commands:"));
  EXPECT_FALSE(Contains(zh.out, "will this model"));
  EXPECT_FALSE(Contains(zh.out, "exit status"));

  const auto en = Headroom({"--help"}, kEnglish);
  ASSERT_EQ(en.status, 0);
  EXPECT_TRUE(Contains(en.out,
                       "commands:\n  plan       will this model, method, batch and packing fit in "
                       "the memory pool?"));
  EXPECT_TRUE(Contains(en.out, "\nexit status: 0 success"));
}

TEST_F(I18nCli, PlanTableAndVerdictAreChineseAndNumbersKeepTheirPoint) {
  const std::vector<std::string> args = {"plan",  "llama-3.1-8b", "--method",
                                         "qlora", "--root",       kIdle};
  const auto zh = Headroom(args, kChinese);
  ASSERT_EQ(zh.status, 0) << zh.err;
  EXPECT_TRUE(Contains(zh.out, Zh("tensor peak"))) << zh.out;
  EXPECT_TRUE(Contains(zh.out, Zh("page cache (reclaimable)")));
  EXPECT_TRUE(Contains(zh.out, Zh("advice, in the OOM ladder's order:")) ||
              !Contains(zh.out, "advice"));
  // "verdict: {0}: peak {1} ...": the translated line up to the peak, with the translated verdict.
  std::string verdict = Zh("verdict: {0}: peak {1} (the steady peak) is {2} of the {3} budget");
  verdict = verdict.substr(0, verdict.find("{1}"));
  verdict.replace(verdict.find("{0}"), 3, Zh("fits"));
  EXPECT_TRUE(Contains(zh.out, verdict)) << verdict << "\n" << zh.out;
  EXPECT_FALSE(Contains(zh.out, "verdict:"));
  EXPECT_FALSE(Contains(zh.out, "tensor peak"));
  EXPECT_FALSE(Contains(zh.out, "page cache (reclaimable)"));
  // LC_NUMERIC stays "C" whatever the language: the table's figures keep '.'.
  EXPECT_TRUE(MemTotalRowIs(zh.out, "130.66  121.69")) << zh.out;

  const auto en = Headroom(args, kEnglish);
  ASSERT_EQ(en.status, 0) << en.err;
  EXPECT_TRUE(Contains(en.out, "verdict: fits: peak"));
  EXPECT_TRUE(Contains(en.out, "tensor peak"));
  EXPECT_FALSE(Contains(en.out, Zh("tensor peak")));
}

TEST_F(I18nCli, DecimalsKeepTheirPointUnderACommaLocale) {
  // zh_TW's decimal point is '.' already: this needs a locale whose point is ','. One that is
  // installed, else de_DE compiled from glibc's sources into a temporary LOCPATH (a few
  // seconds), else skipped.
  std::vector<std::string> env;
  for (const char* name :
       {"de_DE.UTF-8", "fr_FR.UTF-8", "ru_RU.UTF-8", "nl_NL.UTF-8", "es_ES.UTF-8"}) {
    if (locale_t l = newlocale(LC_ALL_MASK, name, static_cast<locale_t>(nullptr))) {
      freelocale(l);
      env = Locale({"LANG=zh_TW.UTF-8", std::string("LC_NUMERIC=") + name});
      break;
    }
  }
  testing::TempDir dir("i18n-locales");
  if (env.empty()) {
    const std::string def =
        "localedef -i de_DE -f UTF-8 " + (dir / "de_DE.UTF-8").string() + " >/dev/null 2>&1";
    if (!std::filesystem::exists("/usr/share/i18n/locales/de_DE") ||
        std::system(def.c_str()) != 0) {
      GTEST_SKIP()
          << "no locale with a decimal comma installed, and none could be made with localedef";
    }
    // LOCPATH replaces the system's locales: C.UTF-8 is glibc's own, LANGUAGE picks zh_TW.
    env = Locale({"LOCPATH=" + dir.path().string(), "LANG=C.UTF-8", "LANGUAGE=zh_TW",
                  "LC_NUMERIC=de_DE.UTF-8"});
  }
  const auto r = Headroom({"plan", "llama-3.1-8b", "--method", "qlora", "--root", kIdle}, env);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, Zh("tensor peak"))) << r.out;
  EXPECT_TRUE(MemTotalRowIs(r.out, "130.66  121.69")) << r.out;
  EXPECT_FALSE(Contains(r.out, "130,66"));
}

TEST_F(I18nCli, CommandHelpIsChineseIncludingCli11sWords) {
  const auto zh = Headroom({"plan", "--help"}, kChinese);
  ASSERT_EQ(zh.status, 0) << zh.err;
  EXPECT_EQ(
      zh.out.rfind(
          Zh("Will this training run fit in the memory pool? Sums weights, gradients, optimizer "
             "states, activations, logits, framework overhead and the model-load transient, "
             "against "
             "MemAvailable from /proc/meminfo (never nvidia-smi).\n\n"
             "exit status: 0 fits or tight, 1 does not fit, 2 usage or input error"),
          0),
      0u)
      << zh.out;
  EXPECT_TRUE(
      Contains(zh.out, "\n" + Zh("Usage") + ": headroom plan [" + Zh("OPTIONS") + "] [model]\n"));
  EXPECT_TRUE(Contains(zh.out, "\n" + Zh("Positionals") + ":\n"));
  EXPECT_TRUE(Contains(zh.out, "\n" + Zh("Options") + ":\n"));
  EXPECT_TRUE(Contains(
      zh.out, "  -h,--help                   " + Zh("Print this help message and exit") + "\n"));
  // The value column starts at 30 display columns whatever the type's translation.
  EXPECT_TRUE(
      Contains(zh.out, "\n  --json" + std::string(22, ' ') + Zh("print JSON (schema_version 1)")));
  EXPECT_TRUE(Contains(zh.out, PadToWidth("  --seq " + Zh("TEXT"), 30) +
                                   Zh("sequence or packing length in tokens (default 2048)") +
                                   "\n"))
      << zh.out;
  for (const char* english : {"Usage:", "Options:", "Positionals:", "TEXT", "Print this help",
                              "exit status", "sequence or packing length"}) {
    EXPECT_FALSE(Contains(zh.out, english)) << english;
  }

  // A subcommand's screen (ladder start: REQUIRED) and a validator's range (sweep).
  const auto ladder = Headroom({"ladder", "start", "--help"}, kChinese);
  ASSERT_EQ(ladder.status, 0);
  EXPECT_TRUE(Contains(ladder.out, Zh("REQUIRED")));
  EXPECT_TRUE(Contains(ladder.out, Zh("begin a ladder for JOB after an OOM")));
  EXPECT_FALSE(Contains(ladder.out, "REQUIRED"));
  const auto sweep = Headroom({"sweep", "--help"}, kChinese);
  EXPECT_TRUE(Contains(sweep.out, "--max-trials " + Zh("INT") + ":" +
                                      ZhFormat("{0} in [{1} - {2}]", Zh("INT"), 1, 10000)))
      << sweep.out;

  const auto en = Headroom({"plan", "--help"}, kEnglish);
  EXPECT_TRUE(
      Contains(en.out, "\nUsage: headroom plan [OPTIONS] [model]\n\nPositionals:\n  model TEXT"));
}

TEST_F(I18nCli, UsageErrorsAreChinese) {
  auto zh = Headroom({"plan", "--bogus", "--root", kIdle}, kChinese);
  EXPECT_EQ(zh.status, 2);
  EXPECT_EQ(zh.err, "headroom: plan: " +
                        ZhFormat("The following argument was not expected: {}", "--bogus") + "\n");

  zh = Headroom({"frobnicate"}, kChinese);
  EXPECT_EQ(zh.status, 2);
  EXPECT_EQ(
      zh.err,
      "headroom: " + ZhFormat("unknown command '{}' (see headroom --help)", "frobnicate") + "\n");

  zh = Headroom({"plan", "--root", kIdle}, kChinese);
  EXPECT_EQ(zh.status, 2);
  EXPECT_EQ(zh.err, "headroom: plan: " +
                        Zh("no model: give a catalog name, --config PATH or --params N "
                           "(headroom plan --list-models lists the catalog)") +
                        "\n");

  zh = Headroom({"sweep", "--max-trials", "0", "--", "true"}, kChinese);
  EXPECT_EQ(zh.status, 2);
  EXPECT_EQ(zh.err,
            "headroom: sweep: " +
                ZhFormat("{0}: Value {1} not in range {2} to {3}", "--max-trials", "0", 1, 10000) +
                "\n");

  const auto en = Headroom({"plan", "--bogus", "--root", kIdle}, kEnglish);
  EXPECT_EQ(en.err, "headroom: plan: The following argument was not expected: --bogus\n");
}

TEST_F(I18nCli, JsonIsTheSameBytesInEveryLanguage) {
  const std::vector<std::vector<std::string>> commands = {
      {"plan", "llama-3.1-8b", "--method", "qlora", "--root", kIdle, "--json"},
      {"plan", "llama-3.1-70b", "--method", "full", "--root", kIdle,
       "--json"},  // does not fit: advice
      {"plan", "llama-3.1-70b", "--method", "full", "--budget", "100GB", "--root", kIdle, "--json"},
      {"plan", "--list-models", "--json"},
      {"ps", "--root", kFixtures + "ps-box", "--need", "4GiB", "--json"},
  };
  for (const auto& args : commands) {
    const auto en = Headroom(args, kEnglish);
    const auto zh = Headroom(args, kChinese);
    EXPECT_EQ(zh.status, en.status) << args[0];
    EXPECT_FALSE(en.out.empty()) << args[0];
    EXPECT_EQ(zh.out, en.out) << args[0] << " " << args[1];
    EXPECT_EQ(zh.err, en.err) << args[0] << " " << args[1];
  }
}

// --json is read from the parsed flags (cli.h GaveJson), on a command or a subcommand: the
// rest of the command, the configuration's errors included, is English.
TEST_F(I18nCli, JsonMakesTheConfigurationErrorEnglish) {
  const std::vector<std::string> broken = {"HEADROOM_WATCH_INTERVAL=10ms"};
  const std::string english =
      "headroom: config: HEADROOM_WATCH_INTERVAL: '10ms' is below the minimum of 100ms\n";
  const auto zh = Headroom({"history"}, With(kChinese, broken));
  EXPECT_EQ(zh.status, 2);
  EXPECT_TRUE(HasCjk(zh.err)) << zh.err;
  const auto json = Headroom({"history", "--json"}, With(kChinese, broken));
  EXPECT_EQ(json.status, 2);
  EXPECT_EQ(json.err, english);
  const auto show = Headroom({"config", "show", "--json"}, With(kChinese, broken));
  EXPECT_EQ(show.err, english);
  EXPECT_FALSE(HasCjk(show.out)) << show.out;
  // After `--` the words are the job's: its --json does not make guard English.
  const auto job = Headroom({"guard", "--", "true", "--json"}, With(kChinese, broken));
  EXPECT_EQ(job.status, 2);
  EXPECT_TRUE(HasCjk(job.err)) << job.err;
}

// doctor on the discrete fixture box with the fake NVML and libcuda, and `workload`.
struct DoctorBox {
  testing::TempDir dir{"i18n-doctor"};
  std::vector<std::string> fakes;
  std::vector<std::string> args;
  explicit DoctorBox(const std::string& workload) {
    testing::WriteFile(dir / "nvml", "scenario discrete\n");
    testing::WriteFile(dir / "cuda", "");
    fakes = {"HEADROOM_FAKE_NVML_SCRIPT=" + (dir / "nvml").string(),
             "HEADROOM_FAKE_CUDA_SCRIPT=" + (dir / "cuda").string(),
             "WORLD_SIZE=",
             "NNODES=",
             "TORCH_CUDA_ARCH_LIST=",
             "container="};
    const std::string box = kFixtures + "doctor/";
    args = {"doctor",
            "--root",
            box + "discrete",
            "--nvml-lib",
            HEADROOM_FAKE_NVML_PATH,
            "--cuda-lib",
            HEADROOM_FAKE_CUDA_PATH,
            "--python",
            box + "env",
            "--no-bandwidth",
            "--workload",
            workload};
  }
  CliResult Run(const std::vector<std::string>& extra,
                const std::vector<std::string>& locale) const {
    return RunCli(With(args, extra), 60000, With(locale, fakes));
  }
};

TEST_F(I18nCli, DoctorReportIsEnglishWhileItsTextIsChinese) {
  const DoctorBox doctor("qlora llama-3.1-8b seq 2048");
  const std::string report = (doctor.dir / "env-report.json").string();
  const auto zh = doctor.Run({"--report", report}, kChinese);
  const auto en = doctor.Run({"--json"}, kEnglish);
  ASSERT_EQ(en.status, 1)
      << en.err;  // ready with warnings: the discrete box's thermal and contention
  ASSERT_EQ(zh.status, en.status) << zh.err;
  ASSERT_TRUE(Contains(en.out, "\"schema_version\"")) << en.out;
  EXPECT_EQ(Slurp(report), en.out);
  // The text: Chinese verdict words and lines.
  EXPECT_TRUE(Contains(zh.out, Zh("warn"))) << zh.out;
  EXPECT_TRUE(Contains(zh.out, ZhFormat("report: {}", report)));
  EXPECT_TRUE(Contains(zh.out, ZhFormat("workload: {}", "qlora llama-3.1-8b seq 2048")));
  EXPECT_FALSE(Contains(zh.out, "\nverdict: "));
}

TEST_F(I18nCli, DoctorVerdictWordsLineUpAndTheWorkloadIsChineseWhileTheReportIsEnglish) {
  const DoctorBox doctor("full llama-3.1-70b");  // does not fit: blocked, with advice
  const std::string report = (doctor.dir / "env-report.json").string();
  const auto zh = doctor.Run({"--report", report}, kChinese);
  const auto en = doctor.Run({"--json"}, kEnglish);
  ASSERT_EQ(en.status, 2) << en.err;
  ASSERT_EQ(zh.status, 2) << zh.err;
  EXPECT_EQ(Slurp(report), en.out);
  EXPECT_FALSE(HasCjk(en.out));
  const auto j = nlohmann::json::parse(en.out);
  ASSERT_EQ(j["workload"]["verdict"], "does not fit");
  EXPECT_TRUE(j["workload"]["plan"].get<std::string>().ends_with(": does not fit"))
      << j["workload"];
  const auto advice = j["workload"]["advice"].get<std::vector<std::string>>();
  ASSERT_FALSE(advice.empty());
  ASSERT_TRUE(
      advice[0].starts_with("no shorter --seq fits: --seq moves the activations and logits ("))
      << advice[0];

  // Each check's verdict word, translated, padded to four columns: the titles start in one
  // column whatever the word's bytes.
  size_t checks = 0;
  std::map<std::string, int> counts;
  for (const auto& line : LinesStartingWith(zh.out, "G")) {
    const std::string id = line.substr(0, line.find(' '));
    const std::string verdict = j["checks"][id].get<std::string>().substr(0, 4);
    const std::string word = Zh(verdict);
    EXPECT_EQ(line.rfind(PadToWidth(id, 4) + " " + PadToWidth(word, 4) + " ", 0), 0u) << line;
    EXPECT_EQ(DisplayWidth(PadToWidth(id, 4) + " " + PadToWidth(word, 4) + " "), 10u);
    ++counts[verdict];
    ++checks;
  }
  EXPECT_EQ(checks, 11u) << zh.out;
  // The workload: the plan line ends in the Chinese verdict, the advice is Chinese.
  const auto workload = zh.out.find(ZhFormat("workload: {}", "full llama-3.1-70b") + "\n  ");
  ASSERT_NE(workload, std::string::npos) << zh.out;
  const std::string plan_line =
      zh.out.substr(workload, zh.out.find('\n', zh.out.find('\n', workload) + 1) - workload);
  EXPECT_TRUE(plan_line.ends_with(Zh("does not fit"))) << plan_line;
  EXPECT_EQ(Zh("does not fit"), "無法容納");
  // The first advice has figures: its Chinese up to the first of them.
  const std::string seq =
      Zh("no shorter --seq fits: --seq moves the activations and logits ({0} at --seq {1}), but "
         "even at --seq 1 the peak is {2}, {3} over the {4} target, in terms --seq does not move; "
         "the largest is {5} ({6})");
  EXPECT_TRUE(Contains(zh.out, "  " + ZhFormat("advice: {}", seq.substr(0, seq.find('{')))))
      << zh.out;
  for (const auto& a : advice) EXPECT_FALSE(Contains(zh.out, a)) << a;
  EXPECT_TRUE(
      Contains(zh.out, ZhFormat("verdict: {} ({} fail, {} warn, {} skip); --verbose shows every "
                                "check's details",
                                Zh("blocked"), counts["fail"], counts["warn"], counts["skip"])))
      << zh.out;
}

TEST_F(I18nCli, PlanThatDoesNotFitHasAChineseVerdictAnchorAndAdvice) {
  const std::vector<std::string> args = {"plan",     "llama-3.1-70b", "--method", "full",
                                         "--budget", "100GB",         "--root",   kIdle};
  const std::string no_journal = "HEADROOM_JOURNAL=/nonexistent/headroom-i18n/journal.db";
  const auto zh = Headroom(args, With(kChinese, {no_journal}));
  const auto en = Headroom(args, With(kEnglish, {no_journal}));
  ASSERT_EQ(en.status, 1) << en.err;
  ASSERT_EQ(zh.status, 1) << zh.err;
  std::string verdict = Zh("verdict: {0}: peak {1} (the steady peak) is {2} of the {3} budget");
  verdict = verdict.substr(0, verdict.find("{1}"));
  verdict.replace(verdict.find("{0}"), 3, "無法容納");
  EXPECT_TRUE(Contains(zh.out, verdict)) << zh.out;
  // No anchor of the same method and size (the full anchor is a 9B), said in Chinese, and
  // every piece of advice in Chinese; none of the English.
  EXPECT_TRUE(Contains(zh.out, ZhFormat("anchor: no reported run close to this one (the same "
                                        "method, a model within {0:g}x the parameters)",
                                        2.0)))
      << zh.out;
  std::smatch m;
  EXPECT_TRUE(Contains(zh.out, Zh("advice, in the OOM ladder's order:") + "\n")) << zh.out;
  for (int i = 1; i <= 4; ++i) {
    const auto en_line = LinesStartingWith(en.out, fmt::format("  {}. ", i));
    const auto zh_line = LinesStartingWith(zh.out, fmt::format("  {}. ", i));
    ASSERT_EQ(en_line.size(), 1u) << en.out;
    ASSERT_EQ(zh_line.size(), 1u) << zh.out;
    EXPECT_TRUE(HasCjk(zh_line[0])) << zh_line[0];
    EXPECT_FALSE(Contains(zh.out, en_line[0].substr(5))) << en_line[0];
  }
  ASSERT_TRUE(
      std::regex_search(en.out, m, std::regex("switch to --method qlora: peak (.*) \\(fits\\)")))
      << en.out;
  EXPECT_TRUE(
      Contains(zh.out, ZhFormat("switch to --method {}: peak {} (fits)", "qlora", m.str(1))))
      << zh.out;
  EXPECT_TRUE(Contains(zh.out, Zh(kPlanDisclaimer)));
}

TEST_F(I18nCli, PsNeedAdvisesKeepAndStopInChinese) {
  testing::TempDir dir("i18n-ps");
  testing::WriteFile(dir / "script", "scenario discrete\n");
  const std::vector<std::string> args = {
      "ps",     "--root", kFixtures + "ps-box", "--nvml-lib", HEADROOM_FAKE_NVML_PATH,
      "--need", "4GiB"};
  const std::string script = "HEADROOM_FAKE_NVML_SCRIPT=" + (dir / "script").string();
  const auto zh = Headroom(args, With(kChinese, {script}));
  ASSERT_EQ(zh.status, 1) << zh.err;
  EXPECT_TRUE(Contains(LinesStartingWith(zh.out, " PID")[0], "  " + Zh("ADVICE") + "  ")) << zh.out;
  // vLLM (capped) and llama.cpp are kept, the uncapped torch process stops.
  const std::pair<const char*, const char*> advice[] = {
      {"1111", "keep"}, {"4444", "keep"}, {"2222", "stop"}};
  for (const auto& [pid, action] : advice) {
    const auto row = LinesStartingWith(zh.out, pid);
    ASSERT_EQ(row.size(), 1u) << zh.out;
    EXPECT_TRUE(Contains(row[0], "  " + Zh(action) + "  ")) << row[0];
    EXPECT_FALSE(Contains(row[0], std::string("  ") + action + "  ")) << row[0];
  }
  EXPECT_EQ(Zh("keep"), "保留");
  EXPECT_EQ(Zh("stop"), "停止");
  const auto json = With(args, {"--json"});
  EXPECT_EQ(Headroom(json, With(kChinese, {script})).out,
            Headroom(json, With(kEnglish, {script})).out);
}

TEST_F(I18nCli, ExplainNamesItsCausesInChinese) {
  using testing::Scenario;
  testing::TempDir dir("i18n-explain");
  bool also_seen = false;
  // The samples of one scenario with the events of another: the last, a thermal slowdown
  // while another process starts on the GPU, has a second cause.
  const std::pair<Scenario, Scenario> runs[] = {
      {Scenario::kThermalPlateau, Scenario::kThermalPlateau},
      {Scenario::kClockCollapse, Scenario::kClockCollapse},
      {Scenario::kContention, Scenario::kContention},
      {Scenario::kHostSide, Scenario::kHostSide},
      {Scenario::kThermalBit, Scenario::kContention}};
  for (const auto& [samples, events] : runs) {
    const auto run = testing::MakeSyntheticRun(samples);
    const std::string events_jsonl = testing::MakeSyntheticRun(events).events_jsonl;
    testing::WriteFile(dir / "train.log", run.log);
    testing::WriteFile(dir / "samples.csv", run.samples_csv);
    testing::WriteFile(dir / "events.jsonl", events_jsonl);
    std::vector<std::string> args = {"explain", "--log", (dir / "train.log").string(), "--samples",
                                     (dir / "samples.csv").string()};
    if (!events_jsonl.empty()) args = With(args, {"--events", (dir / "events.jsonl").string()});
    const auto en = Headroom(args, kEnglish);
    const auto zh = Headroom(args, kChinese);
    ASSERT_EQ(en.status, 0) << en.err;
    ASSERT_EQ(zh.status, 0) << zh.err;
    // "     verdict: thermal" or "     verdict: contention (also: host-side, thermal)": the
    // same causes, by their Chinese names.
    const auto verdicts = LinesStartingWith(en.out, "     verdict: ");
    ASSERT_FALSE(verdicts.empty()) << en.out;
    for (const auto& line : verdicts) {
      std::smatch m;
      const std::string text = line.substr(14);
      if (std::regex_match(text, m, std::regex(R"((\S+) \(also: (.*)\))"))) {
        std::string also;
        const std::string list = m.str(2);
        for (size_t start = 0; start <= list.size();) {
          const size_t comma = std::min(list.find(", ", start), list.size());
          also += (also.empty() ? "" : ", ") + Zh(list.substr(start, comma - start));
          start = comma + 2;
        }
        EXPECT_TRUE(Contains(
            zh.out, "     " + ZhFormat("verdict: {0} (also: {1})", Zh(m.str(1)), also) + "\n"))
            << zh.out;
        also_seen = true;
      } else {
        EXPECT_TRUE(Contains(zh.out, "     " + ZhFormat("verdict: {}", Zh(text)) + "\n")) << zh.out;
      }
    }
    EXPECT_TRUE(LinesStartingWith(zh.out, "     verdict: ").empty()) << zh.out;
    EXPECT_EQ(Headroom(With(args, {"--json"}), kChinese).out,
              Headroom(With(args, {"--json"}), kEnglish).out);
  }
  EXPECT_TRUE(also_seen) << "no scenario has a second cause: the 'also' list is untested";
}

TEST_F(I18nCli, LanguageVariableChoosesTooAndUnknownLanguagesAreEnglish) {
  const std::vector<std::string> args = {"plan",  "llama-3.1-8b", "--method",
                                         "qlora", "--root",       kIdle};
  const auto en = Headroom(args, kEnglish);
  ASSERT_EQ(en.status, 0);

  // LANGUAGE is gettext's list of languages; it counts when the locale is not "C" itself.
  const auto language = Headroom(args, Locale({"LANG=C.UTF-8", "LANGUAGE=zh_TW"}));
  EXPECT_EQ(language.status, 0) << language.err;
  EXPECT_TRUE(Contains(language.out, Zh("tensor peak"))) << language.out;

  // LC_MESSAGES alone chooses the messages.
  const auto messages = Headroom(args, Locale({"LANG=C.UTF-8", "LC_MESSAGES=zh_TW.UTF-8"}));
  EXPECT_TRUE(Contains(messages.out, Zh("tensor peak"))) << messages.out;

  // A language with no catalog (and no locale): English, unchanged.
  const auto unknown = Headroom(args, Locale({"LANG=xx_YY.UTF-8"}));
  EXPECT_EQ(unknown.status, 0);
  EXPECT_EQ(unknown.out, en.out);
  const auto unknown_help = Headroom({"plan", "--help"}, Locale({"LANG=xx_YY.UTF-8"}));
  EXPECT_EQ(unknown_help.out, Headroom({"plan", "--help"}, kEnglish).out);
}

}  // namespace
}  // namespace headroom
