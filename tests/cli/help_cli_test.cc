// headroom --version, `headroom help`, and the man pages and shell completions made from the
// commands' own flag definitions, checked against --help and used in real bash, zsh (in
// tmux) and groff.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "run_cli.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::RunCli;
using testing::RunProgram;

const std::string kDocsDir = std::string(HEADROOM_BINARY_DIR) + "/docs-generated";

// The commands `headroom --help` lists.
std::vector<std::string> ListedCommands() {
  const auto r = RunCli({"--help"});
  std::vector<std::string> commands;
  std::istringstream in(r.out);
  std::string line;
  bool in_list = false;
  while (std::getline(in, line)) {
    if (line == "commands:") {
      in_list = true;
      continue;
    }
    if (in_list && line.empty()) break;
    if (in_list && line.rfind("  ", 0) == 0) {
      std::istringstream words(line);
      std::string name;
      words >> name;
      commands.push_back(name);
    }
  }
  return commands;
}

// Every long flag --help shows for the words (a command, or a command and its subcommand);
// option rows start with two spaces and a dash.
std::set<std::string> HelpFlags(const std::vector<std::string>& words) {
  std::vector<std::string> args = words;
  args.push_back("--help");
  const auto r = RunCli(args);
  std::set<std::string> flags;
  const std::regex flag(R"((?:^|[ ,])(--[a-z0-9][a-z0-9-]*))");
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("  -", 0) != 0) continue;
    const std::string names = line.substr(0, line.find("  ", 2));
    for (auto it = std::sregex_iterator(names.begin(), names.end(), flag);
         it != std::sregex_iterator(); ++it) {
      if ((*it)[1] != "--help") flags.insert((*it)[1]);
    }
  }
  return flags;
}

// The subcommands `command --help` lists (ladder's start/record/..., config's show/path/check).
std::vector<std::string> Subcommands(const std::string& command) {
  const auto r = RunCli({command, "--help"});
  std::vector<std::string> subs;
  std::istringstream in(r.out);
  std::string line;
  bool in_list = false;
  while (std::getline(in, line)) {
    if (line == "Subcommands:") {
      in_list = true;
      continue;
    }
    if (in_list && line.rfind("  ", 0) != 0) break;
    if (in_list) {
      std::istringstream words(line);
      std::string name;
      words >> name;
      subs.push_back(name);
    }
  }
  return subs;
}

std::string RoffFlag(const std::string& flag) {
  std::string out;
  for (char c : flag) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

TEST(HelpCli, VersionNamesTheGitRevision) {
  const auto r = RunCli({"--version"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_match(r.out, m, std::regex(R"(headroom (\d+\.\d+\.\d+) \(git ([^)]+)\)\n)")))
      << r.out;
  const auto head =
      RunProgram({"git", "-C", HEADROOM_SOURCE_DIR, "rev-parse", "--short=12", "HEAD"});
  if (head.status != 0) GTEST_SKIP() << "no git checkout here: " << head.err;
  // The revision the binary was built from is this checkout's HEAD (plus -dirty, maybe).
  EXPECT_EQ(m[2].str().substr(0, 12), head.out.substr(0, 12)) << r.out;
  EXPECT_EQ(RunCli({"-V"}).out, r.out);
}

TEST(HelpCli, HelpCommandPrintsThatCommandsHelp) {
  const auto commands = ListedCommands();
  ASSERT_GE(commands.size(), 12u);
  for (const auto& c : commands) {
    const auto via_help = RunCli({"help", c});
    const auto via_flag = RunCli({c, "--help"});
    EXPECT_EQ(via_help.status, 0) << c << ": " << via_help.err;
    EXPECT_EQ(via_help.out, via_flag.out) << c;
    EXPECT_NE(via_help.out.find("Usage: headroom " + c), std::string::npos) << c;
  }
  const auto list = RunCli({"help"});
  EXPECT_EQ(list.status, 0);
  EXPECT_EQ(list.out, RunCli({"--help"}).out);
}

TEST(HelpCli, HelpRefusesAnUnknownCommandInOneLine) {
  const auto r = RunCli({"help", "plna"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "headroom: help: unknown command 'plna' (see headroom --help)\n");
  const auto two = RunCli({"help", "--man", "--completion", "bash"});
  EXPECT_EQ(two.status, 2);
  EXPECT_NE(two.err.find("give one of --man, --man-dir and --completion"), std::string::npos)
      << two.err;
  const auto shell = RunCli({"help", "--completion", "fish"});
  EXPECT_EQ(shell.status, 2);
  EXPECT_NE(shell.err.find("'fish' is not bash or zsh"), std::string::npos) << shell.err;
}

// Each command's man page names every flag its --help names, and groff reads it without a
// warning.
TEST(HelpCli, ManPageOfEachCommandHasEveryFlagOfItsHelp) {
  const testing::TempDir scratch("help-man");  // private: no fixed names in /tmp
  for (const auto& c : ListedCommands()) {
    const auto page = RunCli({"help", "--man", c, "--date", "2026-01-02"});
    ASSERT_EQ(page.status, 0) << c << ": " << page.err;
    EXPECT_NE(page.out.find(".TH HEADROOM\\-"), std::string::npos) << c;
    EXPECT_NE(page.out.find("2026-01-02"), std::string::npos) << c;
    auto flags = HelpFlags({c});
    for (const auto& sub : Subcommands(c)) {
      EXPECT_NE(page.out.find(".SS " + sub), std::string::npos) << c << " " << sub;
      flags.merge(HelpFlags({c, sub}));
    }
    EXPECT_FALSE(flags.empty()) << c;
    for (const auto& f : flags)
      EXPECT_NE(page.out.find(RoffFlag(f)), std::string::npos) << c << " " << f;
    const std::string tmp = scratch.File("headroom-" + c + ".1");
    std::ofstream(tmp) << page.out;
    const auto groff = RunProgram({"groff", "-man", "-Tutf8", "-ww", "-z", tmp});
    EXPECT_EQ(groff.status, 0) << c;
    EXPECT_EQ(groff.err, "") << c;
  }
}

// The flags several commands share (cli/common_flags.h) are defined once: each has the same
// help text in every command that takes it (the command's own screen, and a subcommand's).
// The texts are the common definitions' (cli/common_flags.cc), not copies in each command.
TEST(HelpCli, CommonFlagsSayTheSameInEveryCommand) {
  std::map<std::string, std::map<std::string, std::string>> texts;  // flag -> where -> text
  const std::regex row(R"(^  (-[^ ]*(?: [A-Z:]+)?) +(.*)$)");
  for (const auto& c : ListedCommands()) {
    std::vector<std::vector<std::string>> screens = {{c}};
    for (const auto& sub : Subcommands(c)) screens.push_back({c, sub});
    for (const auto& words : screens) {
      std::vector<std::string> args = words;
      args.push_back("--help");
      std::istringstream in(RunCli(args).out);
      std::string line;
      std::smatch m;
      while (std::getline(in, line)) {
        if (!std::regex_match(line, m, row)) continue;
        for (const std::string flag :
             {"--root", "--journal", "--json", "--nvml-lib", "--cuda-lib"}) {
          const std::string names = m[1].str().substr(0, m[1].str().find(' '));
          if (("," + names + ",").find("," + flag + ",") == std::string::npos) continue;
          std::string where;
          for (const auto& w : words) where += (where.empty() ? "" : " ") + w;
          // config show's setting flags (--journal, ...) show a setting, not the flag.
          if (where == "config show" && flag != "--json") continue;
          texts[flag][where] = m[2];
        }
      }
    }
  }
  for (const std::string flag : {"--root", "--journal", "--json", "--nvml-lib", "--cuda-lib"}) {
    ASSERT_GE(texts[flag].size(), 2u) << flag;
    const std::string& first = texts[flag].begin()->second;
    for (const auto& [where, text] : texts[flag]) EXPECT_EQ(text, first) << flag << " in " << where;
  }
  EXPECT_GE(texts["--root"].size(), 9u);
  EXPECT_GE(texts["--json"].size(), 11u);
}

TEST(HelpCli, MainManPageListsEveryCommand) {
  const auto page = RunCli({"help", "--man"});
  ASSERT_EQ(page.status, 0) << page.err;
  for (const auto& c : ListedCommands()) {
    EXPECT_NE(page.out.find("headroom\\-" + c + "\\fR(1)"), std::string::npos) << c;
  }
}

// The pages the build wrote (and the package installs) are the binary's own.
TEST(HelpCli, BuiltManPagesMatchTheBinary) {
  for (const auto& c : ListedCommands()) {
    const std::string gz = kDocsDir + "/man1/headroom-" + c + ".1.gz";
    ASSERT_TRUE(std::filesystem::exists(gz)) << gz;
    const auto built = RunProgram({"gzip", "-dc", gz});
    ASSERT_EQ(built.status, 0);
    // The date line aside (the build stamps the commit's date).
    const auto fresh = RunCli({"help", "--man", c});
    const auto body = [](const std::string& page) { return page.substr(page.find('\n')); };
    EXPECT_EQ(body(built.out), body(fresh.out)) << c;
  }
}

// A page's text without its zero-width break points (\:, between CJK characters).
std::string WithoutBreakPoints(std::string page) {
  for (size_t at = page.find("\\:"); at != std::string::npos; at = page.find("\\:", at))
    page.erase(at, 2);
  return page;
}

// The same pages in Traditional Chinese: headings and descriptions translated, every flag
// still there, groff silent on the UTF-8 text, and the build's zh_TW pages the binary's own.
TEST(HelpCli, ManPagesInTraditionalChinese) {
  const testing::TempDir scratch("help-man-zh");  // private: no fixed names in /tmp
  const std::vector<std::string> zh = {"LANGUAGE=zh_TW", "LC_ALL=C.UTF-8"};
  auto main_page = RunCli({"help", "--man", "--date", "2026-01-02"}, 20000, zh);
  ASSERT_EQ(main_page.status, 0) << main_page.err;
  EXPECT_NE(main_page.out.find("讓\\:長"),
            std::string::npos);                               // break points between CJK characters
  EXPECT_EQ(main_page.out.find("\\:，"), std::string::npos);  // none before closing punctuation
  main_page.out = WithoutBreakPoints(main_page.out);
  EXPECT_NE(main_page.out.find(".SH 名稱\nheadroom \\- 讓長時間的機器學習訓練作業"),
            std::string::npos)
      << main_page.out;
  EXPECT_NE(main_page.out.find(".SH 環境變數\n"), std::string::npos);
  EXPECT_EQ(main_page.out.find(".SH NAME"), std::string::npos);
  for (const auto& c : ListedCommands()) {
    const auto english = RunCli({"help", "--man", c, "--date", "2026-01-02"});
    const auto page = RunCli({"help", "--man", c, "--date", "2026-01-02"}, 20000, zh);
    ASSERT_EQ(page.status, 0) << c << ": " << page.err;
    const std::string text = WithoutBreakPoints(page.out);
    EXPECT_NE(text, english.out) << c;
    for (const char* heading :
         {".SH 名稱\n", ".SH 用法概要\n", ".SH 說明\n", ".SH 選項\n", ".SH 另請參閱\n"}) {
      EXPECT_NE(text.find(heading), std::string::npos) << c << " " << heading;
    }
    for (const char* heading : {".SH NAME", ".SH OPTIONS", ".SH DESCRIPTION"}) {
      EXPECT_EQ(text.find(heading), std::string::npos) << c << " " << heading;
    }
    // The exit statuses are found in the translated description too.
    if (english.out.find(".SH EXIT STATUS\n") != std::string::npos) {
      EXPECT_NE(text.find(".SH 結束狀態\n"), std::string::npos) << c;
    }
    EXPECT_NE(text.find("顯示說明後結束"), std::string::npos) << c;
    auto flags = HelpFlags({c});
    for (const auto& sub : Subcommands(c)) flags.merge(HelpFlags({c, sub}));
    for (const auto& f : flags)
      EXPECT_NE(text.find(RoffFlag(f)), std::string::npos) << c << " " << f;
    const std::string tmp = scratch.File("headroom-" + c + ".zh_TW.1");
    std::ofstream(tmp) << page.out;
    const auto groff = RunProgram({"groff", "-Kutf8", "-man", "-Tutf8", "-ww", "-z", tmp});
    EXPECT_EQ(groff.status, 0) << c;
    EXPECT_EQ(groff.err, "") << c;
    // As man shows it at 80 columns, without a warning: troff says "can't break line" when
    // filled text runs past the width (the usage examples, shown as written, may).
    const auto shown = RunProgram({"env", "LC_ALL=C.UTF-8", "MANWIDTH=80", "man", "-l", tmp});
    EXPECT_EQ(shown.status, 0) << c;
    EXPECT_EQ(shown.err, "") << c;

    const std::string gz = kDocsDir + "/zh_TW/man1/headroom-" + c + ".1.gz";
    ASSERT_TRUE(std::filesystem::exists(gz)) << gz;
    const auto built = RunProgram({"gzip", "-dc", gz});
    ASSERT_EQ(built.status, 0);
    const auto body = [](const std::string& p) { return p.substr(p.find('\n')); };
    EXPECT_EQ(body(built.out), body(page.out)) << c;
  }
}

TEST(HelpCli, ManDirWritesOnePagePerCommand) {
  const testing::TempDir scratch("help-man-dir");
  const std::string dir = scratch.File("man");
  const auto r = RunCli({"help", "--man-dir", dir});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/headroom.1"));
  for (const auto& c : ListedCommands())
    EXPECT_TRUE(std::filesystem::exists(dir + "/headroom-" + c + ".1")) << c;
}

// Completes the words in real bash with the generated script: what COMPREPLY holds.
std::string BashComplete(const std::string& words) {
  const std::string script =
      "source \"$1\"; read -ra COMP_WORDS <<<\"$2\"; "
      "[[ $2 == *' ' ]] && COMP_WORDS+=(''); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
      "_headroom; printf '%s\\n' \"${COMPREPLY[@]}\"";
  const auto r =
      RunProgram({"bash", "--norc", "-c", script, "_", kDocsDir + "/completions/headroom", words});
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

TEST(HelpCli, BashCompletesCommandsFlagsSubcommandsAndModels) {
  if (RunProgram({"bash", "-c", "true"}).status != 0) GTEST_SKIP() << "no bash";
  EXPECT_EQ(BashComplete("headroom pl"), "plan\n");
  EXPECT_EQ(BashComplete("headroom help do"), "doctor\n");
  EXPECT_EQ(BashComplete("headroom ladder st"), "start\n");
  EXPECT_EQ(BashComplete("headroom ladder start --sy"), "--symptom\n");
  EXPECT_NE(BashComplete("headroom plan llama-3.1-").find("llama-3.1-70b\n"), std::string::npos);
  // Every flag of every command's --help is offered after `headroom CMD --`.
  for (const auto& c : ListedCommands()) {
    const std::string offered = BashComplete("headroom " + c + " --");
    for (const auto& f : HelpFlags({c}))
      EXPECT_NE(offered.find(f + "\n"), std::string::npos) << c << " " << f;
    for (const auto& sub : Subcommands(c)) {
      const std::string in_sub = BashComplete("headroom " + c + " " + sub + " --");
      for (const auto& f : HelpFlags({c, sub})) {
        EXPECT_NE(in_sub.find(f + "\n"), std::string::npos) << c << " " << sub << " " << f;
      }
    }
  }
  // A path flag completes file names; a size completes nothing.
  const testing::TempDir scratch("bashcomp");
  const std::string dir = scratch.path().string();
  std::ofstream(dir + "/journal-a.db") << "";
  EXPECT_EQ(BashComplete("headroom guard --journal " + dir + "/jour"), dir + "/journal-a.db\n");
  EXPECT_EQ(BashComplete("headroom guard --min-available "), "\n");
}

// zsh's completion system, for real: an interactive zsh in a detached tmux, TAB pressed.
class ZshInTmux : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunProgram({"zsh", "-c", "true"}).status != 0)
      GTEST_SKIP() << "no zsh (scripts/install-deps installs it)";
    if (RunProgram({"tmux", "-V"}).status != 0)
      GTEST_SKIP() << "no tmux (scripts/install-deps installs it)";
    socket_ = "headroom-zsh-" + std::to_string(getpid());
    home_dir_.emplace("zsh-home");  // private, removed with the fixture
    home_ = home_dir_->path().string();
    // compinit finds _headroom on fpath; -u: no ownership questions in a test.
    std::ofstream(home_ + "/.zshrc")
        << "fpath=(" << kDocsDir << "/completions $fpath)\n"
        << "autoload -U compinit && compinit -u -d " << home_ << "/.zcompdump\n"
        << "PS1='READY> '\n";
    const auto r =
        RunProgram({"tmux", "-L", socket_, "new-session", "-d", "-x", "200", "-y", "50", "env",
                    "ZDOTDIR=" + home_, "HOME=" + home_, "TERM=xterm", "zsh", "-i"});
    ASSERT_EQ(r.status, 0) << r.err;
    ASSERT_TRUE(WaitFor("READY>")) << Screen();
  }
  void TearDown() override {
    if (!socket_.empty()) RunProgram({"tmux", "-L", socket_, "kill-server"});
    if (!home_.empty()) std::filesystem::remove_all(home_);
  }
  std::string Screen() { return RunProgram({"tmux", "-L", socket_, "capture-pane", "-p"}).out; }
  bool WaitFor(const std::string& text) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline) {
      if (Screen().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  void Type(const std::string& keys) {
    RunProgram({"tmux", "-L", socket_, "send-keys", "-l", "--", keys});
  }
  void Press(const std::string& key) { RunProgram({"tmux", "-L", socket_, "send-keys", key}); }
  void ClearLine() { Press("C-u"); }

  std::optional<testing::TempDir> home_dir_;
  std::string socket_, home_;
};

TEST_F(ZshInTmux, CompletesCommandsAndFlags) {
  Type("headroom pl");
  Press("Tab");
  EXPECT_TRUE(WaitFor("READY> headroom plan")) << Screen();
  Type("--lora-ra");
  Press("Tab");
  EXPECT_TRUE(WaitFor("headroom plan --lora-rank")) << Screen();
  ClearLine();
  Type("headroom ladder sta");
  Press("Tab");
  EXPECT_TRUE(WaitFor("READY> headroom ladder start")) << Screen();
  ClearLine();
  Type("headroom guard --min-av");
  Press("Tab");
  EXPECT_TRUE(WaitFor("headroom guard --min-available")) << Screen();
}

}  // namespace
}  // namespace headroom
