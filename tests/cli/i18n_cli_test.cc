// Messages in the user's language through the real binary: a few commands under
// LANG=zh_TW.UTF-8 show the catalog's Traditional Chinese (the expected text is read from
// the catalog the build merged, build/po/zh_TW.po, not written here), the same commands
// under LANG=C and an unknown language are English, LANGUAGE picks the language too, --json
// and the files doctor writes are byte for byte the English ones, and numbers keep their '.'.
//
// LC_ALL, LC_MESSAGES and LANGUAGE are removed from each child's environment (glibc's
// putenv("NAME") unsets NAME), so only the variables a case sets choose its language.
// Skipped when the zh_TW.UTF-8 locale or the catalog is missing (scripts/install-deps makes
// both).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <clocale>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/display_width.h"
#include "model/testing_files.h"
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
  EXPECT_TRUE(Contains(
      zh.out, Zh("usage: headroom <command> [options]   (headroom <command> --help for more)")));
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
  EXPECT_TRUE(Contains(zh.out, "  MemTotal      130.66  121.69")) << zh.out;

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
  EXPECT_TRUE(Contains(r.out, "  MemTotal      130.66  121.69")) << r.out;
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

TEST_F(I18nCli, DoctorReportIsEnglishWhileItsTextIsChinese) {
  testing::TempDir dir("i18n-doctor");
  testing::WriteFile(dir / "nvml", "scenario discrete\n");
  testing::WriteFile(dir / "cuda", "");
  std::vector<std::string> fakes = {"HEADROOM_FAKE_NVML_SCRIPT=" + (dir / "nvml").string(),
                                    "HEADROOM_FAKE_CUDA_SCRIPT=" + (dir / "cuda").string(),
                                    "WORLD_SIZE=",
                                    "NNODES=",
                                    "TORCH_CUDA_ARCH_LIST=",
                                    "container="};
  const std::string box = kFixtures + "doctor/";
  const std::vector<std::string> args = {"doctor",
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
                                         "qlora llama-3.1-8b seq 2048"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::string report = (dir / "env-report.json").string();
  const auto zh = RunCli(with(args, {"--report", report}), 60000, with(kChinese, fakes));
  const auto en = RunCli(with(args, {"--json"}), 60000, with(kEnglish, fakes));
  ASSERT_EQ(en.status, 1)
      << en.err;  // ready with warnings: the discrete box's thermal and contention
  ASSERT_EQ(zh.status, en.status) << zh.err;
  ASSERT_TRUE(Contains(en.out, "\"schema_version\"")) << en.out;
  std::ifstream in(report);
  std::stringstream written;
  written << in.rdbuf();
  EXPECT_EQ(written.str(), en.out);
  // The text: Chinese verdict words and lines.
  EXPECT_TRUE(Contains(zh.out, Zh("warn"))) << zh.out;
  EXPECT_TRUE(Contains(zh.out, ZhFormat("report: {}", report)));
  EXPECT_TRUE(Contains(zh.out, ZhFormat("workload: {}", "qlora llama-3.1-8b seq 2048")));
  EXPECT_FALSE(Contains(zh.out, "\nverdict: "));
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
