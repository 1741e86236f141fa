// `headroom top` end to end, interactive: the real binary in a real tmux (one private server
// per test, killed in teardown), against fixture trees and the fake NVML, driven with
// send-keys and read with capture-pane; every wait is bounded. Batch mode, usage errors and
// a real guard: top_batch_cli_test.cc.
#include "top_cli.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <thread>

#include "testing_files.h"
#include "tmux_session.h"
#include "top/text_width.h"
#include "top_testing.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::Slurp;
using testing::TmuxSession;

using testing::Contains;
using testing::kGb10Idle;
using testing::kPsBox;
using testing::kTopSource;

// Both parts on screen. ncurses updates the screen top to bottom, so waiting for a change in
// the last row (the keys) as well as the one of interest means the whole frame is drawn:
// a capture taken while tmux is still reading an update would hold half of each frame.
std::function<bool(const std::string&)> Both(std::string a, std::string b) {
  return [a = std::move(a), b = std::move(b)](const std::string& s) {
    return Contains(s, a) && Contains(s, b);
  };
}

// The line of `screen` holding `text`, -1 when none.
int LineOf(const std::string& screen, const std::string& text) {
  std::istringstream lines(screen);
  int i = 0;
  for (std::string line; std::getline(lines, line); ++i) {
    if (Contains(line, text)) return i;
  }
  return -1;
}

// One `headroom top` in tmux: a script that records the tty settings before and after, the
// command's pid and its exit status, then keeps the pane open.
class TopInTmux {
 public:
  TopInTmux(size_t width, size_t height, const std::vector<std::string>& args,
            const std::string& env, const std::string& nvml_scenario = "")
      : dir_("top-tmux") {
    std::string quoted;
    for (const auto& a : args) quoted += " '" + a + "'";
    std::string exports = "export TERM=xterm-256color LANG=C.UTF-8 HEADROOM_JOURNAL=" +
                          (dir_ / "journal.db").string() +
                          "\nunset NO_COLOR LC_ALL LANGUAGE COLUMNS LINES\n";
    if (!nvml_scenario.empty()) {
      testing::WriteFile(dir_ / "nvml.txt", "scenario " + nvml_scenario + "\n");
      exports += "export HEADROOM_FAKE_NVML_SCRIPT=" + (dir_ / "nvml.txt").string() + "\n";
    }
    const std::string d = dir_.path().string();
    testing::WriteFile(dir_ / "top.sh", "echo $$ > " + d + "/top.pid\nexec " + HEADROOM_BINARY +
                                            " top" + quoted + "\n");
    testing::WriteFile(dir_ / "run.sh", exports + env + "\n" + "stty -g > " + d +
                                            "/stty.before\n"
                                            "sh " +
                                            d +
                                            "/top.sh\n"
                                            "echo \"top exited $?\"\n"
                                            "stty -g > " +
                                            d +
                                            "/stty.after\n"
                                            "exec sleep 600\n");
    tmux_ = std::make_unique<TmuxSession>(width, height, (dir_ / "run.sh").string());
  }
  const TmuxSession& tmux() const { return *tmux_; }
  const fs::path& dir() const { return dir_.path(); }

  pid_t TopPid() const {
    for (int i = 0; i < 100; ++i) {
      const std::string text = Slurp(dir_ / "top.pid");
      if (!text.empty()) return static_cast<pid_t>(std::stol(text));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return -1;
  }
  // After top has exited: the terminal as the shell left it before. A terminal without an
  // alternate screen (vt100) keeps top's last frame above the shell's next line, as it
  // does for every curses program; the modes and the cursor are restored all the same.
  void ExpectTerminalRestored(bool alternate_screen = true) const {
    std::string screen;
    ASSERT_TRUE(tmux_->WaitForText("top exited 0", 5000, &screen)) << screen;
    if (alternate_screen) {
      EXPECT_FALSE(Contains(screen, "processes holding")) << "top's screen left behind:\n"
                                                          << screen;
    }
    EXPECT_EQ(tmux_->Format("#{alternate_on}"), "0");
    EXPECT_EQ(tmux_->Format("#{cursor_flag}"), "1");
    for (int i = 0; i < 100 && Slurp(dir_ / "stty.after").empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_EQ(Slurp(dir_ / "stty.before"), Slurp(dir_ / "stty.after"));
    EXPECT_FALSE(Slurp(dir_ / "stty.before").empty());
  }

 private:
  testing::TempDir dir_;
  std::unique_ptr<TmuxSession> tmux_;
};

std::vector<std::string> DiscreteArgs() {
  return {"--root", kPsBox, "--nvml-lib", HEADROOM_FAKE_NVML_PATH, "--interval", "200ms"};
}

TEST(TopTmux, FirstFrameKeysAndQuitRestoreTheTerminal) {
  TopInTmux top(120, 40, DiscreteArgs(), "", "discrete");
  const auto& t = top.tmux();
  ASSERT_TRUE(t.started());
  std::string screen;
  ASSERT_TRUE(t.WaitFor(Both("processes holding the pool: 5", "h help"), 8000, &screen)) << screen;
  for (const char* part :
       {"headroom top", "NVIDIA H200", "memory ", "used 6.70 GiB", "page cache 3.13 GiB",
        "available 114.99 GiB", "power    350.0/700 W", "SM clock 1980 MHz",
        "throttle: power cap (software), thermal slowdown (software)", "0.50 (--gpu-memory-ut",
        "q quit", "s sort (mem)"}) {
    EXPECT_TRUE(Contains(screen, part)) << part << "\n" << screen;
  }
  // By memory: vLLM's 40 GiB on the GPU first, its worker (1 GiB) after python (6 GiB).
  EXPECT_LT(LineOf(screen, "   1111 "), LineOf(screen, "   2222 "));
  EXPECT_LT(LineOf(screen, "   2222 "), LineOf(screen, "   1112 "));

  t.SendKeys("h");
  ASSERT_TRUE(t.WaitFor(Both("this help; any key closes it", "press any key to close the help"),
                        5000, &screen))
      << screen;
  EXPECT_FALSE(Contains(screen, "processes holding"));
  t.SendKeys("x");
  ASSERT_TRUE(t.WaitFor(
      [](const std::string& s) {
        return Contains(s, "processes holding") && !Contains(s, "this help");
      },
      5000, &screen))
      << screen;

  t.SendKeys("s");
  ASSERT_TRUE(t.WaitFor(Both("sorted by pid", "s sort (pid)"), 5000, &screen)) << screen;
  EXPECT_LT(LineOf(screen, "   1112 "), LineOf(screen, "   2222 "));
  t.SendKeys("s");
  ASSERT_TRUE(t.WaitFor(Both("sorted by name", "s sort (name)"), 5000, &screen)) << screen;
  EXPECT_LT(LineOf(screen, "   4444 "), LineOf(screen, "   3333 "));  // llama.cpp before ollama

  t.SendKeys("q");
  top.ExpectTerminalRestored();
}

TEST(TopTmux, PauseFreezesTheDisplayWhileSamplingGoesOn) {
  // The fake's temperature rises a degree per sample: five a second at 200 ms.
  TopInTmux top(120, 40, DiscreteArgs(), "", "discrete");
  const auto& t = top.tmux();
  std::string screen;
  ASSERT_TRUE(t.WaitForText("processes holding", 8000, &screen)) << screen;
  t.SendKeys("p");
  ASSERT_TRUE(t.WaitFor(Both("PAUSED", "p resume"), 5000, &screen)) << screen;
  const std::string frozen = t.Capture();
  // Frozen: a second of samples (five temperature steps) changes nothing on screen.
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  EXPECT_EQ(t.Capture(), frozen);
  t.SendKeys("p");
  ASSERT_TRUE(t.WaitFor(
      [&](const std::string& s) {
        return !Contains(s, "PAUSED") && Contains(s, "p pause") && s != frozen;
      },
      5000, &screen))
      << screen;
  t.SendKeys("q");
  top.ExpectTerminalRestored();
}

TEST(TopTmux, ResizeLaysOutAgain) {
  TopInTmux top(120, 40,
                {"--root", kGb10Idle, "--nvml-lib", HEADROOM_FAKE_NVML_PATH, "--interval", "200ms"},
                "", "gb10");
  const auto& t = top.tmux();
  std::string screen;
  ASSERT_TRUE(t.WaitFor(Both("processes holding the pool: 1", "h help"), 8000, &screen)) << screen;
  EXPECT_TRUE(Contains(screen, "pool     [")) << screen;  // GB10: the GPU's memory is the pool
  EXPECT_TRUE(Contains(screen, "power 100 W sustained, 240 W rated")) << screen;
  EXPECT_TRUE(Contains(screen, "PSS"));
  t.Resize(40, 12);
  const auto narrow = [](const std::string& s) {
    std::istringstream lines(s);
    size_t rows = 0;
    for (std::string line; std::getline(lines, line);) ++rows;
    return rows == 12 && Contains(s, "PID") && !Contains(s, "PSS") && Contains(s, "q quit");
  };
  ASSERT_TRUE(t.WaitFor(narrow, 5000, &screen)) << screen;
  t.Resize(30, 8);
  ASSERT_TRUE(t.WaitForText("terminal too small: 30x8", 5000, &screen)) << screen;
  t.Resize(120, 40);
  ASSERT_TRUE(t.WaitFor(
      [](const std::string& s) { return Contains(s, "PSS") && !Contains(s, "too small"); }, 5000,
      &screen))
      << screen;
  t.SendKeys("q");
  top.ExpectTerminalRestored();
}

// SGR sequences that set a colour (30-37, 90-97, 38;5;N), as capture-pane -e writes them.
const std::regex kColourSgr(R"(\x1b\[(\d+;)*(3[0-7]|9[0-7]|38;5;\d+)(;\d+)*m)");
const std::regex kBrightSgr(R"(\x1b\[(\d+;)*9[0-7](;\d+)*m)");

// A directory with xterm-16color compiled (ncurses-base lacks it; ncurses-term has it).
std::string SixteenColourTerminfo(const fs::path& dir) {
  const auto r = testing::RunTool(
      {"tic", "-x", "-o", dir.string(), kTopSource + "/tests/fixtures/terminfo/xterm-16color.src"});
  return r.status == 0 ? dir.string() : "";
}

TEST(TopTmux, SixteenColoursAnd256AndMonochromeTerminals) {
  testing::TempDir terminfo("top-terminfo");
  const std::string ti = SixteenColourTerminfo(terminfo.path());
  ASSERT_FALSE(ti.empty()) << "tic could not compile tests/fixtures/terminfo/xterm-16color.src";
  struct Case {
    std::string env;
    bool colour;
    bool bright;
    std::string sgr;  // a sequence that must appear
    bool alternate_screen = true;
  };
  const Case cases[] = {
      {"export TERM=xterm-16color TERMINFO=" + ti, true, true, ""},
      {"export TERM=xterm-256color", true, false, "38;5;"},
      {"export TERM=vt100", false, false, "\x1b[7m", false},  // reverse video: the title bar
      {"export TERM=xterm-mono", false, false, "\x1b[7m"},
      {"export TERM=xterm-256color NO_COLOR=1", false, false, "\x1b[7m"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.env);
    TopInTmux top(120, 40, DiscreteArgs(), c.env, "discrete");
    const auto& t = top.tmux();
    std::string screen;
    ASSERT_TRUE(t.WaitFor([](const std::string& s) { return Contains(s, "processes holding"); },
                          8000, &screen, true))
        << screen;
    EXPECT_EQ(std::regex_search(screen, kColourSgr), c.colour) << screen;
    if (c.bright) {
      EXPECT_TRUE(std::regex_search(screen, kBrightSgr)) << screen;
    }
    if (!c.sgr.empty()) {
      EXPECT_TRUE(Contains(screen, c.sgr)) << screen;
    }
    // Without colour a warning carries a mark: the throttle reasons are one.
    EXPECT_EQ(Contains(t.Capture(), "thermal slowdown (software) !"), !c.colour);
    t.SendKeys("q");
    top.ExpectTerminalRestored(c.alternate_screen);
  }
}

TEST(TopTmux, WithoutAGpuShowsMemoryPsiAndProcessesAndSaysWhy) {
  TopInTmux top(120, 40, {"--root", kGb10Idle, "--nvml-lib", "/nonexistent/libnvidia-ml.so.1"}, "");
  const auto& t = top.tmux();
  std::string screen;
  ASSERT_TRUE(t.WaitFor(Both("processes holding the pool: 0", "h help"), 8000, &screen)) << screen;
  EXPECT_TRUE(Contains(screen, "GPU      none: nvml: dlopen(/nonexistent/libnvidia-ml.so.1)"))
      << screen;
  EXPECT_TRUE(Contains(screen, "no GPU"));
  EXPECT_TRUE(Contains(screen, "PSI      some 0.00% full 0.00%")) << screen;
  EXPECT_TRUE(Contains(screen, "available 114.99 GiB"));
  EXPECT_FALSE(Contains(screen, "SM clock"));
  t.SendKeys("q");
  top.ExpectTerminalRestored();

  TopInTmux failing(120, 40, {"--root", kGb10Idle, "--nvml-lib", HEADROOM_FAKE_NVML_PATH}, "",
                    "init-fail");
  ASSERT_TRUE(failing.tmux().WaitForText("processes holding", 8000, &screen)) << screen;
  EXPECT_TRUE(Contains(screen, "none: nvml: nvmlInit_v2(): driver not loaded")) << screen;
  failing.tmux().SendKeys("q");
  failing.ExpectTerminalRestored();

  TopInTmux deviceless(120, 40, {"--root", kGb10Idle, "--nvml-lib", HEADROOM_FAKE_NVML_PATH}, "",
                       "no-device");
  ASSERT_TRUE(deviceless.tmux().WaitForText("processes holding", 8000, &screen)) << screen;
  EXPECT_TRUE(Contains(screen, "GPU      none: nvml: no GPU device")) << screen;
  EXPECT_TRUE(Contains(screen, "PSI      some 0.00%")) << screen;
  deviceless.tmux().SendKeys("q");
  deviceless.ExpectTerminalRestored();
}

TEST(TopTmux, SigtermAndSighupRestoreTheTerminalAndExitZero) {
  for (int sig : {SIGTERM, SIGHUP}) {
    SCOPED_TRACE(sig);
    TopInTmux top(100, 30, DiscreteArgs(), "", "discrete");
    std::string screen;
    ASSERT_TRUE(top.tmux().WaitForText("processes holding", 8000, &screen)) << screen;
    const pid_t pid = top.TopPid();
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(pid, sig), 0);
    top.ExpectTerminalRestored();
  }
}

TEST(TopTmux, UnknownTerminalIsAOneLineErrorWithStatusTwo) {
  TopInTmux top(100, 30, DiscreteArgs(), "export TERM=no-such-terminal", "discrete");
  std::string screen;
  ASSERT_TRUE(top.tmux().WaitForText("top exited 2", 8000, &screen)) << screen;
  EXPECT_TRUE(Contains(screen, "headroom: top: no terminfo entry for TERM='no-such-terminal'"))
      << screen;
}

TEST(TopTmux, TraditionalChineseKeepsTheLayout) {
  TopInTmux top(100, 30, {"--root", kGb10Idle, "--nvml-lib", HEADROOM_FAKE_NVML_PATH},
                "export LANG=zh_TW.UTF-8", "gb10");
  const auto& t = top.tmux();
  std::string screen;
  ASSERT_TRUE(t.WaitFor(Both("記憶體池", "h 說明"), 8000, &screen)) << screen;
  testing::ScopedUtf8Locale utf8;
  ASSERT_TRUE(utf8.ok());
  std::istringstream lines(screen);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), 30u) << screen;
  for (const auto& row : rows) EXPECT_LE(DisplayWidth(row), 100u) << row;
  // The last row, the keys, drawn whole: had the layout counted bytes or code points
  // instead of columns, ncurses would have cut its end.
  EXPECT_TRUE(Contains(rows.back(), "q 離開")) << rows.back();
  EXPECT_TRUE(Contains(rows.back(), "h 說明")) << rows.back();
  t.SendKeys("q");
  top.ExpectTerminalRestored();
}

}  // namespace
}  // namespace headroom
