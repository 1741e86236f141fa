// Messages in the user's language through the real binary: a few commands under
// LANG=zh_TW.UTF-8 show the catalog's Traditional Chinese (the expected text is read from
// the catalog the build merged, build/po/zh_TW.po, not written here), the same commands
// under LANG=C and an unknown language are English, LANGUAGE picks the language too, --json
// and the files doctor writes are byte for byte the English ones, and numbers keep their '.'.
// Where one command both prints and records (guard, sweep, watch, ladder, report), the screen
// is Chinese while what it records is English: the events files, the CSV files, the journal's
// rows (read with SQLite) and the report page's data.
//
// LC_ALL, LC_MESSAGES and LANGUAGE are removed from each child's environment (glibc's
// putenv("NAME") unsets NAME), so only the variables a case sets choose its language.
// Skipped when the zh_TW.UTF-8 locale or the catalog is missing (scripts/install-deps makes
// both).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <clocale>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "../explain/synthetic_run.h"
#include "base/display_width.h"
#include "model/testing_files.h"
#include "plan/plan.h"
#include "run_cli.h"

namespace headroom {
namespace {

using testing::CliResult;
using testing::RunCli;

const std::string kFixtures = std::string(HEADROOM_SOURCE_DIR) + "/tests/fixtures/";
const std::string kIdle = kFixtures + "gb10-idle";
const std::string kCatalog = std::string(HEADROOM_BINARY_DIR) + "/po/zh_TW.po";

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Whether `text` holds a character of the zh_TW translation: a CJK ideograph or CJK or
// full-width punctuation, the characters a terminal draws two columns wide. Data may hold
// other non-ASCII characters (a sensor's "°C").
bool HasCjk(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    const size_t n = (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (n != 0 && DisplayWidth(std::string_view(text).substr(i, n)) == 2) return true;
  }
  return false;
}

std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lines of `text` that start with `prefix`.
std::vector<std::string> LinesStartingWith(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  }
  return out;
}

// Every value of every row of every table of a journal, one a line: what the journal holds.
std::string JournalText(const std::string& path) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << path;
    sqlite3_close(db);
    return out;
  }
  std::vector<std::string> tables;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) {
    tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  }
  sqlite3_finalize(st);
  for (const auto& table : tables) {
    sqlite3_prepare_v2(db, ("SELECT * FROM \"" + table + "\"").c_str(), -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int i = 0; i < sqlite3_column_count(st); ++i) {
        if (const unsigned char* v = sqlite3_column_text(st, i)) out += reinterpret_cast<const char*>(v);
        out += '\n';
      }
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

// The merged catalog's translations, msgid -> msgstr (plural entries by their singular).
std::map<std::string, std::string> ReadCatalog(const std::string& path) {
  std::ifstream in(path);
  std::map<std::string, std::string> out;
  std::string line, msgid, msgstr, *field = nullptr;
  const auto flush = [&] {
    if (!msgid.empty()) out[msgid] = msgstr;
    msgid.clear();
    msgstr.clear();
    field = nullptr;
  };
  const auto unquote = [](const std::string& q) {
    std::string s;
    for (size_t i = q.find('"') + 1; i + 1 < q.size(); ++i) {
      if (q[i] == '\\' && i + 2 < q.size()) {
        const char c = q[++i];
        s += c == 'n' ? '\n' : c == 't' ? '\t' : c;
      } else {
        s += q[i];
      }
    }
    return s;
  };
  while (std::getline(in, line)) {
    if (line.empty()) {
      flush();
    } else if (line.rfind("msgid_plural ", 0) == 0) {
      field = nullptr;
    } else if (line.rfind("msgid ", 0) == 0) {
      field = &msgid;
      *field = unquote(line);
    } else if (line.rfind("msgstr ", 0) == 0 || line.rfind("msgstr[0] ", 0) == 0) {
      field = &msgstr;
      *field = unquote(line);
    } else if (line.rfind("msgstr[", 0) == 0) {
      field = nullptr;
    } else if (line[0] == '"' && field) {
      *field += unquote(line);
    }
  }
  flush();
  return out;
}

// The environment of a child that speaks `vars` only.
std::vector<std::string> Locale(std::vector<std::string> vars) {
  std::vector<std::string> env = {"LC_ALL", "LC_MESSAGES", "LANGUAGE", "LANG"};
  env.insert(env.end(), vars.begin(), vars.end());
  return env;
}
const std::vector<std::string> kChinese = Locale({"LANG=zh_TW.UTF-8"});
const std::vector<std::string> kEnglish = Locale({"LANG=C"});

CliResult Headroom(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  return RunCli(args, 20000, env);
}

// plan's budget table has one "  MemTotal ..." row ending in `figures` (its first column is as
// wide as the widest label, a translated one counted in terminal columns).
bool MemTotalRowIs(const std::string& out, const std::string& figures) {
  const auto rows = LinesStartingWith(out, "  MemTotal ");
  return rows.size() == 1 && rows[0].ends_with(" " + figures) &&
         rows[0].find_first_not_of(' ', 10) == rows[0].size() - figures.size();
}

std::vector<std::string> With(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class I18nCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (locale_t zh = newlocale(LC_ALL_MASK, "zh_TW.UTF-8", static_cast<locale_t>(nullptr))) {
      freelocale(zh);
      has_locale_ = true;
    }
    catalog_ = ReadCatalog(kCatalog);
  }
  void SetUp() override {
    if (!has_locale_)
      GTEST_SKIP() << "the zh_TW.UTF-8 locale is not installed (scripts/install-deps generates it)";
    if (catalog_.empty())
      GTEST_SKIP() << "no merged catalog at " << kCatalog << " (gettext's msgcat/msgfmt missing?)";
  }
  // The translation of `msgid`; a test that asks for one the catalog lacks fails here.
  static std::string Zh(const std::string& msgid) {
    const auto it = catalog_.find(msgid);
    if (it == catalog_.end() || it->second.empty()) {
      ADD_FAILURE() << "not in " << kCatalog << ": " << msgid;
      return "(untranslated: " + msgid + ")";
    }
    return it->second;
  }
  // The translation of a format `msgid` filled with `args`, as TrFormat does.
  template <typename... Args>
  static std::string ZhFormat(const std::string& msgid, const Args&... args) {
    return fmt::vformat(Zh(msgid), fmt::make_format_args(args...));
  }

  static inline bool has_locale_ = false;
  static inline std::map<std::string, std::string> catalog_;
};

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
  EXPECT_TRUE(Contains(zh.out, "\n  --json" + std::string(22, ' ') +
                                   Zh("print the plan as JSON (schema in docs/plan-json.md)")));
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
    args = {"doctor",         "--root",     box + "discrete", "--nvml-lib",     HEADROOM_FAKE_NVML_PATH,
            "--cuda-lib",     HEADROOM_FAKE_CUDA_PATH,        "--python",       box + "env",
            "--no-bandwidth", "--workload", workload};
  }
  CliResult Run(const std::vector<std::string>& extra, const std::vector<std::string>& locale) const {
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
  EXPECT_TRUE(j["workload"]["plan"].get<std::string>().ends_with(": does not fit")) << j["workload"];
  const auto advice = j["workload"]["advice"].get<std::vector<std::string>>();
  ASSERT_FALSE(advice.empty());
  ASSERT_EQ(advice[0],
            "no shorter --seq fits: what is over does not depend on it (weights, optimizer states and "
            "step, or the load peak)");

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
  EXPECT_EQ(checks, 10u) << zh.out;
  // The workload: the plan line ends in the Chinese verdict, the advice is Chinese.
  const auto workload = zh.out.find(ZhFormat("workload: {}", "full llama-3.1-70b") + "\n  ");
  ASSERT_NE(workload, std::string::npos) << zh.out;
  const std::string plan_line = zh.out.substr(workload, zh.out.find('\n', zh.out.find('\n', workload) + 1) - workload);
  EXPECT_TRUE(plan_line.ends_with(Zh("does not fit"))) << plan_line;
  EXPECT_EQ(Zh("does not fit"), "無法容納");
  EXPECT_TRUE(Contains(zh.out, "  " + ZhFormat("advice: {}", Zh(advice[0])) + "\n")) << zh.out;
  for (const auto& a : advice) EXPECT_FALSE(Contains(zh.out, a)) << a;
  EXPECT_TRUE(Contains(zh.out, ZhFormat("verdict: {} ({} fail, {} warn, {} skip); --verbose shows every "
                                        "check's details",
                                        Zh("blocked"), counts["fail"], counts["warn"], counts["skip"])))
      << zh.out;
}

TEST_F(I18nCli, PlanThatDoesNotFitHasAChineseVerdictAnchorAndAdvice) {
  const std::vector<std::string> args = {"plan",   "llama-3.1-70b", "--method", "full",
                                         "--budget", "100GB",       "--root",   kIdle};
  const std::string no_journal = "HEADROOM_JOURNAL=/nonexistent/headroom-i18n/journal.db";
  const auto zh = Headroom(args, With(kChinese, {no_journal}));
  const auto en = Headroom(args, With(kEnglish, {no_journal}));
  ASSERT_EQ(en.status, 1) << en.err;
  ASSERT_EQ(zh.status, 1) << zh.err;
  std::string verdict = Zh("verdict: {0}: peak {1} (the steady peak) is {2} of the {3} budget");
  verdict = verdict.substr(0, verdict.find("{1}"));
  verdict.replace(verdict.find("{0}"), 3, "無法容納");
  EXPECT_TRUE(Contains(zh.out, verdict)) << zh.out;
  // The anchor's statement, and every piece of advice, in Chinese; none of the English.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(en.out, m, std::regex("anchor: \"([^\"]+)\""))) << en.out;
  EXPECT_TRUE(Contains(zh.out, "\"" + Zh(m.str(1)) + "\"")) << zh.out;
  EXPECT_TRUE(Contains(zh.out, Zh("advice, in the OOM ladder's order:") + "\n")) << zh.out;
  for (int i = 1; i <= 4; ++i) {
    const auto en_line = LinesStartingWith(en.out, fmt::format("  {}. ", i));
    const auto zh_line = LinesStartingWith(zh.out, fmt::format("  {}. ", i));
    ASSERT_EQ(en_line.size(), 1u) << en.out;
    ASSERT_EQ(zh_line.size(), 1u) << zh.out;
    EXPECT_TRUE(HasCjk(zh_line[0])) << zh_line[0];
    EXPECT_FALSE(Contains(zh.out, en_line[0].substr(5))) << en_line[0];
  }
  ASSERT_TRUE(std::regex_search(en.out, m, std::regex("switch to --method qlora: peak (.*) \\(fits\\)"))) << en.out;
  EXPECT_TRUE(Contains(zh.out, ZhFormat("switch to --method {}: peak {} (fits)", "qlora", m.str(1)))) << zh.out;
  EXPECT_TRUE(Contains(zh.out, Zh(kPlanDisclaimer)));
}

TEST_F(I18nCli, PsNeedAdvisesKeepAndStopInChinese) {
  testing::TempDir dir("i18n-ps");
  testing::WriteFile(dir / "script", "scenario discrete\n");
  const std::vector<std::string> args = {"ps",        "--root", kFixtures + "ps-box", "--nvml-lib",
                                         HEADROOM_FAKE_NVML_PATH, "--need", "4GiB"};
  const std::string script = "HEADROOM_FAKE_NVML_SCRIPT=" + (dir / "script").string();
  const auto zh = Headroom(args, With(kChinese, {script}));
  ASSERT_EQ(zh.status, 1) << zh.err;
  EXPECT_TRUE(Contains(LinesStartingWith(zh.out, " PID")[0], "  " + Zh("ADVICE") + "  ")) << zh.out;
  // vLLM (capped) and llama.cpp are kept, the uncapped torch process stops.
  const std::pair<const char*, const char*> advice[] = {{"1111", "keep"}, {"4444", "keep"}, {"2222", "stop"}};
  for (const auto& [pid, action] : advice) {
    const auto row = LinesStartingWith(zh.out, pid);
    ASSERT_EQ(row.size(), 1u) << zh.out;
    EXPECT_TRUE(Contains(row[0], "  " + Zh(action) + "  ")) << row[0];
    EXPECT_FALSE(Contains(row[0], std::string("  ") + action + "  ")) << row[0];
  }
  EXPECT_EQ(Zh("keep"), "保留");
  EXPECT_EQ(Zh("stop"), "停止");
  const auto json = With(args, {"--json"});
  EXPECT_EQ(Headroom(json, With(kChinese, {script})).out, Headroom(json, With(kEnglish, {script})).out);
}

TEST_F(I18nCli, ExplainNamesItsCausesInChinese) {
  using testing::Scenario;
  testing::TempDir dir("i18n-explain");
  bool also_seen = false;
  // The samples of one scenario with the events of another: the last, a thermal slowdown
  // while another process starts on the GPU, has a second cause.
  const std::pair<Scenario, Scenario> runs[] = {{Scenario::kThermalPlateau, Scenario::kThermalPlateau},
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
        EXPECT_TRUE(Contains(zh.out, "     " + ZhFormat("verdict: {0} (also: {1})", Zh(m.str(1)), also) + "\n"))
            << zh.out;
        also_seen = true;
      } else {
        EXPECT_TRUE(Contains(zh.out, "     " + ZhFormat("verdict: {}", Zh(text)) + "\n")) << zh.out;
      }
    }
    EXPECT_TRUE(LinesStartingWith(zh.out, "     verdict: ").empty()) << zh.out;
    EXPECT_EQ(Headroom(With(args, {"--json"}), kChinese).out, Headroom(With(args, {"--json"}), kEnglish).out);
  }
  EXPECT_TRUE(also_seen) << "no scenario has a second cause: the 'also' list is untested";
}

TEST_F(I18nCli, GuardSpeaksChineseWhileItsEventsAndJournalStayEnglish) {
  testing::TempDir dir("i18n-guard");
  const pid_t job = fork();
  ASSERT_GE(job, 0);
  if (job == 0) {
    execl("/bin/sleep", "sleep", "20", static_cast<char*>(nullptr));
    _exit(127);
  }
  // --pid: always one note (descendants that re-parent away cannot be followed); a kill level
  // above any MemAvailable: the warning line and the kill come at the first reading, and no
  // memory is used.
  const std::string journal = (dir / "journal.db").string(), events = (dir / "events.jsonl").string();
  const auto zh = Headroom({"guard", "--journal", journal, "--events", events, "--pid", std::to_string(job),
                            "--min-available", "1T"},
                           kChinese);
  int status = 0;
  waitpid(job, &status, 0);
  ASSERT_EQ(zh.status, 99) << zh.err;
  EXPECT_TRUE(WIFSIGNALED(status));
  const std::string note =
      "--pid: descendants that re-parent away from the process (setsid and double fork) cannot be "
      "followed; run the job under the guard for that";
  EXPECT_TRUE(Contains(zh.err, "headroom guard: " + ZhFormat("note: {}", Zh(note)) + "\n")) << zh.err;
  std::string warning = Zh("headroom guard: warning: MemAvailable {:.2f} GiB is below the warning level {:.2f} GiB");
  EXPECT_TRUE(Contains(zh.err, warning.substr(0, warning.find('{')))) << zh.err;
  std::string killed = Zh("killed the job ({0}: MemAvailable {1} against the level; {2}{3}{4})");
  EXPECT_TRUE(Contains(zh.err, killed.substr(0, killed.find('{')) + "memavailable")) << zh.err;
  for (const char* english : {"killed the job", "lowest MemAvailable", "note: ", "warning: "}) {
    EXPECT_FALSE(Contains(zh.err, english)) << english << "\n" << zh.err;
  }
  // The events file and the journal (summary_json's notes and reasons) are English.
  const std::string lines = Slurp(events);
  EXPECT_TRUE(Contains(lines, "\"type\":\"note\"")) << lines;
  EXPECT_TRUE(Contains(lines, "\"text\":\"" + note + "\"")) << lines;
  EXPECT_FALSE(HasCjk(lines)) << lines;
  const std::string rows = JournalText(journal);
  EXPECT_TRUE(Contains(rows, "\"kill_reason\":\"memavailable\"")) << rows;
  EXPECT_TRUE(Contains(rows, note)) << rows;
  EXPECT_FALSE(HasCjk(rows)) << rows;
}

TEST_F(I18nCli, SweepProgressIsChineseWhileItsJournalAndCsvStayEnglish) {
  testing::TempDir dir("i18n-sweep");
  const std::string journal = (dir / "journal.db").string(), csv = (dir / "out.csv").string();
  // One trial of a job that uses no memory; limits that any machine meets.
  const auto zh = Headroom({"sweep", "--state", journal, "--csv", csv, "--batch", "1", "--limit", "99%",
                            "--min-available", "64M", "--require-available", "1M", "--", "sh", "-c",
                            "true {batch}"},
                           kChinese);
  ASSERT_EQ(zh.status, 0) << zh.err;
  EXPECT_TRUE(Contains(zh.err, ZhFormat("sweep: trial {} of at most {}: {}", 1, 30, "batch=1"))) << zh.err;
  EXPECT_FALSE(Contains(zh.err, "sweep: trial ")) << zh.err;
  std::string answer = Zh("answer: {0}: peak {1} above the baseline, headroom {2} to the limit {3}");
  EXPECT_TRUE(Contains(zh.out, answer.substr(0, answer.find("{0}")) + "batch=1")) << zh.out;
  const std::string table = Slurp(csv);
  EXPECT_TRUE(Contains(table, "peak_mem_bytes,headroom_bytes,status,notes\n1,,,")) << table;
  EXPECT_FALSE(HasCjk(table)) << table;
  const std::string rows = JournalText(journal);
  EXPECT_TRUE(Contains(rows, "tree RSS peak ")) << rows;  // the trial's notes
  EXPECT_FALSE(HasCjk(rows)) << rows;
}

TEST_F(I18nCli, WatchEventLinesAreChineseWhileItsCsvAndEventsStayEnglish) {
  testing::TempDir dir("i18n-watch");
  testing::WriteFile(dir / "nvml", "scenario gb10\ndegrade_after 3\n");
  const std::string csv = (dir / "s.csv").string(), events = (dir / "e.jsonl").string();
  const auto zh = RunCli({"watch", "--no-journal", "--interval", "100ms", "--out", csv, "--events", events,
                          "--nvml-lib", HEADROOM_FAKE_NVML_PATH, "--guard", "--", "sh", "-c", "sleep 1.5"},
                         20000, With(kChinese, {"HEADROOM_FAKE_NVML_SCRIPT=" + (dir / "nvml").string()}));
  ASSERT_EQ(zh.status, 0) << zh.err;
  // GB10's degraded clock (the fake's degrade_after): an event line, its message in Chinese.
  bool collapse = false;
  for (const auto& line : LinesStartingWith(zh.err, "headroom watch: ")) {
    if (!Contains(line, " clock_collapse: ")) continue;
    collapse = true;
    EXPECT_TRUE(HasCjk(line)) << line;
  }
  EXPECT_TRUE(collapse) << zh.err;
  std::string end = Zh("job exited with status {} after {:.1f} s; {} samples in {}");
  EXPECT_TRUE(Contains(zh.err, "headroom watch: " + end.substr(0, end.find('{')))) << zh.err;
  const std::string lines = Slurp(events);
  EXPECT_TRUE(Contains(lines, "\"type\":\"clock_collapse\"")) << lines;
  EXPECT_FALSE(HasCjk(lines)) << lines;
  EXPECT_FALSE(HasCjk(Slurp(csv)));

  // Without NVML: the CSV header's note is English (dlerror's text too), the line on stderr
  // is Chinese.
  const std::string missing = "/nonexistent/libnvidia-ml.so.1";
  const auto no_gpu = Headroom({"watch", "--no-journal", "--interval", "100ms", "--out", csv, "--nvml-lib",
                                missing, "--", "sh", "-c", "sleep 0.3"},
                               kChinese);
  ASSERT_EQ(no_gpu.status, 0) << no_gpu.err;
  std::string dlopen = ZhFormat("nvml: dlopen({0}): {1}", missing, "{1}");
  EXPECT_TRUE(Contains(no_gpu.err, "headroom: " + dlopen.substr(0, dlopen.find("{1}")))) << no_gpu.err;
  const std::string header = Slurp(csv);
  EXPECT_TRUE(Contains(header, "\n# note: nvml: dlopen(" + missing + "): ")) << header;
  EXPECT_TRUE(Contains(header, "; GPU columns are empty\n")) << header;
  EXPECT_FALSE(HasCjk(header)) << header;
}

TEST_F(I18nCli, LadderAdviceIsChineseOnScreenAndEnglishInTheJournal) {
  testing::TempDir dir("i18n-ladder");
  std::filesystem::create_directories(dir / "root/proc/sys/vm");
  std::filesystem::copy_file(kFixtures + "gb10-pagecache/proc/meminfo", dir / "root/proc/meminfo");
  testing::WriteFile(dir / "root/proc/sys/vm/drop_caches", "0\n");
  const std::string journal = (dir / "journal.db").string();
  const auto ladder = [&](const std::vector<std::string>& args) {
    return Headroom(With({"ladder", "--journal", journal, "--root", (dir / "root").string()}, args), kChinese);
  };
  auto r = ladder({"start", "myjob", "--symptom", "load", "--plan-args",
                   "llama-3.1-8b --method lora --seq 65536 --batch 8 --budget 40GB"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, Zh("flush the page cache between runs") + "\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, ZhFormat("between runs, as root: {} (or: headroom ladder apply JOB)",
                                       "sync; echo 3 > /proc/sys/vm/drop_caches")))
      << r.out;
  r = ladder({"record", "myjob", "--result", "oom"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string plan = Zh("plan: {0} {1}, batch {2} x seq {3}: peak {4} of a {5} budget ({6})");
  EXPECT_TRUE(Contains(r.out, "  " + plan.substr(0, plan.find("{0}")) + "llama-3.1-8b lora")) << r.out;
  EXPECT_TRUE(Contains(r.out, Zh("does not fit"))) << r.out;
  EXPECT_FALSE(Contains(r.out, "plan: llama")) << r.out;
  // The view: the symptom's note in Chinese; a ladder at step 1 gets a live "now:" line.
  ASSERT_EQ(ladder({"start", "other", "--symptom", "step"}).status, 0);
  r = ladder({});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "  " +
                                  ZhFormat("note: {}", Zh("packing and batch do not change the load peak (weights "
                                                          "plus the load transient); this step matters less for an "
                                                          "OOM while loading, but the order is kept")) +
                                  "\n"))
      << r.out;
  std::string now = Zh("now: {}");
  const auto now_lines = LinesStartingWith(r.out, "  " + now.substr(0, now.find("{}")) + "Cached ");
  ASSERT_EQ(now_lines.size(), 1u) << r.out;
  EXPECT_TRUE(HasCjk(now_lines[0].substr(now_lines[0].find("Cached ")))) << now_lines[0];
  // The journal: the entries' texts and evidence in English.
  const std::string rows = JournalText(journal);
  EXPECT_TRUE(Contains(rows, "plan: llama-3.1-8b lora, batch 8 x seq 65536")) << rows;
  EXPECT_TRUE(Contains(rows, "packing and batch do not change the load peak")) << rows;
  EXPECT_FALSE(HasCjk(rows)) << rows;
  const auto j = nlohmann::json::parse(
      Headroom({"ladder", "--journal", journal, "--root", (dir / "root").string(), "--json"}, kChinese).out);
  EXPECT_EQ(j["ladders"][0]["step_title"], "shorten the packing length first, then reduce the batch size");
}

TEST_F(I18nCli, ReportPageDataIsEnglishWhileItsLineIsChinese) {
  testing::TempDir dir("i18n-report");
  const auto run = testing::MakeSyntheticRun(testing::Scenario::kContention);
  testing::WriteFile(dir / "train.log", run.log);
  testing::WriteFile(dir / "samples.csv", run.samples_csv);
  testing::WriteFile(dir / "events.jsonl", run.events_jsonl);
  const auto page = [&](const std::string& name, const std::vector<std::string>& locale) {
    const auto r = Headroom({"report", "--samples", (dir / "samples.csv").string(), "--log",
                             (dir / "train.log").string(), "--events", (dir / "events.jsonl").string(),
                             "--plan-args", "llama-3.1-8b --method qlora --budget 100GB", "-o",
                             (dir / name).string()},
                            locale);
    EXPECT_EQ(r.status, 0) << r.err;
    // The page's data, without the time it was made.
    std::string data = Slurp(dir / name);
    const size_t start = data.find("window.HEADROOM_DATA =\n");
    EXPECT_NE(start, std::string::npos);
    data = data.substr(start, data.find("\n;\n", start) - start);
    return std::make_pair(r.out, std::regex_replace(data, std::regex(R"("generated":"[^"]*")"), ""));
  };
  const auto [zh_line, zh_data] = page("zh.html", kChinese);
  const auto [en_line, en_data] = page("en.html", kEnglish);
  EXPECT_TRUE(Contains(en_data, "\"verdict\":\"contention\"")) << en_data.substr(0, 2000);
  EXPECT_EQ(zh_data, en_data);
  EXPECT_FALSE(HasCjk(zh_data));
  EXPECT_TRUE(en_line.starts_with("wrote ")) << en_line;
  EXPECT_TRUE(HasCjk(zh_line)) << zh_line;
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
