#include "cli/top/top_view.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "top/text_width.h"
#include "top_testing.h"

namespace headroom {
namespace {

using testing::Gb10Snapshot;
using testing::HistoryOf;

class TopView : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(locale_.ok()) << "no C.UTF-8 locale"; }

  static ViewOptions Size(size_t w, size_t h, ColourMode colour = ColourMode::k256,
                          bool utf8 = true) {
    ViewOptions o;
    o.width = w;
    o.height = h;
    o.colour = colour;
    o.utf8 = utf8;
    o.host = "spark-1";
    return o;
  }
  static bool Has(const Frame& f, std::string_view text) {
    return FrameText(f).find(text) != std::string::npos;
  }
  static bool HasRole(const Frame& f, Role role) {
    for (const auto& r : f.rows) {
      for (const auto& s : r.spans) {
        if (s.role == role && !s.text.empty()) return true;
      }
    }
    return false;
  }
  // The row (index) whose text holds `text`; -1 when none.
  static int RowOf(const Frame& f, std::string_view text) {
    for (size_t i = 0; i < f.rows.size(); ++i) {
      if (RowText(f.rows[i]).find(text) != std::string::npos) return static_cast<int>(i);
    }
    return -1;
  }
  // Every row within the width, no more rows than the height.
  static void ExpectFits(const Frame& f, size_t w, size_t h) {
    EXPECT_LE(f.rows.size(), h);
    for (size_t i = 0; i < f.rows.size(); ++i) {
      EXPECT_LE(RowWidth(f.rows[i]), w) << "row " << i << ": " << RowText(f.rows[i]);
    }
  }

  testing::ScopedUtf8Locale locale_;
};

TEST_F(TopView, EverySizeFitsAndShowsPoolGpuProcessesAndKeys) {
  const TopSnapshot s = Gb10Snapshot();
  const History h = HistoryOf(s, 300);
  for (auto [w, ht] :
       {std::pair<size_t, size_t>{80, 24}, {120, 40}, {40, 12}, {40, 10}, {400, 150}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(ht));
    const Frame f = LayoutTop(s, h, UiState{}, Size(w, ht));
    ExpectFits(f, w, ht);
    EXPECT_EQ(f.rows.size(), ht);  // the keys sit on the last row
    EXPECT_TRUE(Has(f, "headroom top"));
    EXPECT_TRUE(Has(f, "pool"));
    EXPECT_TRUE(Has(f, "GPU"));
    EXPECT_TRUE(Has(f, "processes holding the pool: 3"));
    EXPECT_EQ(RowOf(f, "q quit"), static_cast<int>(ht) - 1);
    EXPECT_TRUE(HasRole(f, Role::kBarUsed));
    EXPECT_FALSE(Has(f, "too small"));
  }
}

TEST_F(TopView, LargerTerminalsShowMore) {
  const TopSnapshot s = Gb10Snapshot();
  const History h = HistoryOf(s, 300);
  const Frame tiny = LayoutTop(s, h, UiState{}, Size(40, 12));
  const Frame normal = LayoutTop(s, h, UiState{}, Size(80, 24));
  const Frame big = LayoutTop(s, h, UiState{}, Size(120, 40));
  // 40x12: the events give way to the processes; 80x24 and up show them.
  EXPECT_FALSE(Has(tiny, "events:"));
  EXPECT_TRUE(Has(normal, "events: 2"));
  EXPECT_TRUE(Has(normal, "power_plateau"));
  // Readings per row: one at 40 columns, two at 80, three at 120.
  // (The cells' labels are padded to 8 columns: "avail    114.99 GiB".)
  EXPECT_NE(RowOf(normal, "avail    "), -1);
  EXPECT_EQ(RowOf(normal, "avail    "), RowOf(normal, "PSI      "));
  EXPECT_EQ(RowOf(big, "avail    "), RowOf(big, "power    "));
  EXPECT_NE(RowOf(tiny, "avail    "), RowOf(tiny, "PSI      "));
  // Wide tables gain columns: PSS and USER only where there is room.
  EXPECT_TRUE(Has(big, "PSS"));
  EXPECT_TRUE(Has(big, "USER"));
  EXPECT_FALSE(Has(tiny, "PSS"));
  // The graphs grow with the width: at 400 columns each graph is far longer than at 80.
  const Frame huge = LayoutTop(s, h, UiState{}, Size(400, 150));
  const auto graph_cols = [](const Frame& f) {
    size_t n = 0;
    for (const auto& r : f.rows) {
      for (const auto& sp : r.spans) n += sp.role == Role::kGraph ? DisplayWidth(sp.text) : 0;
    }
    return n;
  };
  EXPECT_GT(graph_cols(huge), 3 * graph_cols(normal));
}

TEST_F(TopView, TooSmallSaysSoInsteadOfGarbling) {
  const TopSnapshot s = Gb10Snapshot();
  for (auto [w, ht] :
       {std::pair<size_t, size_t>{39, 24}, {80, 9}, {20, 5}, {10, 1}, {1, 1}, {0, 0}}) {
    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(ht));
    const Frame f = LayoutTop(s, History{}, UiState{}, Size(w, ht));
    ExpectFits(f, w, ht);
    if (w >= 20 && ht >= 1) {
      EXPECT_TRUE(Has(f, "terminal too small")) << FrameText(f);
    }
    EXPECT_FALSE(Has(f, "processes holding"));
  }
}

TEST_F(TopView, GuardLevelsAreMarkedOnThePoolBar) {
  const TopSnapshot s = Gb10Snapshot();
  const Frame f = LayoutTop(s, History{}, UiState{}, Size(120, 40));
  EXPECT_TRUE(Has(f, "guard run 7 pid 4321: warn level 20.00 GiB (W)"));
  EXPECT_TRUE(Has(f, "warn level 20.00 GiB (W)"));
  EXPECT_TRUE(Has(f, "kill level 10.00 GiB (K)"));
  // On the bar: W at (MemTotal - 20 GiB) / MemTotal of its width, K further right.
  const int bar = RowOf(f, "[");
  ASSERT_GE(bar, 0);
  const std::string text = RowText(f.rows[bar]);
  const size_t w = text.find('W'), k = text.find('K');
  ASSERT_NE(w, std::string::npos);
  ASSERT_NE(k, std::string::npos);
  EXPECT_LT(w, k);
  EXPECT_TRUE(HasRole(f, Role::kMark));
  // No guard: the row says so, and no mark.
  TopSnapshot none = s;
  none.guards.clear();
  const Frame g = LayoutTop(none, History{}, UiState{}, Size(120, 40));
  EXPECT_TRUE(Has(g, "none running"));
  EXPECT_FALSE(HasRole(g, Role::kMark));
}

TEST_F(TopView, ASweepHasAKillLevelAndNoWarnLevel) {
  TopSnapshot s = Gb10Snapshot();
  s.guards[0].kind = "sweep";
  s.guards[0].warn_below_bytes = 0;  // a sweep's trials have none
  const Frame f = LayoutTop(s, History{}, UiState{}, Size(120, 40));
  EXPECT_TRUE(Has(f, "sweep run 7 pid 4321: no warn level · kill level 10.00 GiB (K)"))
      << FrameText(f);
  const int bar = RowOf(f, "[");
  ASSERT_GE(bar, 0);
  const std::string text = RowText(f.rows[bar]);
  EXPECT_EQ(text.find('W'), std::string::npos) << text;  // no mark at MemTotal (warn level 0)
  EXPECT_NE(text.find('K'), std::string::npos) << text;
}

TEST_F(TopView, MonochromeMarksWarningsThatColourShowsByRole) {
  TopSnapshot s = Gb10Snapshot();
  s.sample.mem_available_bytes = 6ULL << 30;  // below the guard's 10 GiB kill level
  s.sample.psi_some_avg10_pct = 35.1;         // past the 10 % warning
  const Frame colour = LayoutTop(s, History{}, UiState{}, Size(120, 40, ColourMode::k16));
  const Frame mono = LayoutTop(s, History{}, UiState{}, Size(120, 40, ColourMode::kMono));
  EXPECT_TRUE(HasRole(colour, Role::kCrit));
  EXPECT_TRUE(HasRole(mono, Role::kCrit));  // the same roles: the palette decides the look
  EXPECT_TRUE(HasRole(colour, Role::kWarn));
  EXPECT_FALSE(Has(colour, "!"));
  EXPECT_TRUE(Has(mono, "6.00 GiB !!"));
  EXPECT_TRUE(Has(mono, "some 35.10% full 0.00% !"));
}

TEST_F(TopView, AsciiWithoutUtf8) {
  TopSnapshot s = Gb10Snapshot();
  s.holders[1].command = "python 訓練.py";
  const Frame f =
      LayoutTop(s, HistoryOf(s, 50), UiState{}, Size(100, 30, ColourMode::kMono, false));
  const std::string text = FrameText(f);
  EXPECT_TRUE(std::all_of(text.begin(), text.end(),
                          [](char c) { return static_cast<unsigned char>(c) < 0x80; }));
  EXPECT_TRUE(Has(f, "python ??.py"));
  EXPECT_TRUE(Has(f, "[####"));  // the bar in ASCII
}

TEST_F(TopView, WideCharactersKeepTheColumns) {
  TopSnapshot s = Gb10Snapshot();
  s.holders[0].user = "陳大文";
  s.holders[0].command = "python 訓練腳本_記憶體池_頁面快取_非常長的名稱.py --data 資料集";
  s.events.push_back(TopEvent{s.sample.time, "guard_ended",
                              Message::Literal("守護 run 7 結束了，這是一段很長的中文訊息"), "{}"});
  for (size_t w : {40, 57, 80, 81, 120, 133}) {
    SCOPED_TRACE(w);
    const Frame f = LayoutTop(s, HistoryOf(s, 100), UiState{}, Size(w, 30));
    ExpectFits(f, w, 30);
    // The PID column still lines up under its head in the CJK row.
    const int head = RowOf(f, "PID");
    const int row = RowOf(f, "1111");
    ASSERT_GE(head, 0);
    ASSERT_GE(row, 0);
    EXPECT_EQ(DisplayWidth(RowText(f.rows[head]).substr(0, RowText(f.rows[head]).find("PID") + 3)),
              DisplayWidth(RowText(f.rows[row]).substr(0, RowText(f.rows[row]).find("1111") + 4)));
  }
}

TEST_F(TopView, SortPausedAndHelp) {
  const TopSnapshot s = Gb10Snapshot();
  UiState ui;
  Frame f = LayoutTop(s, History{}, ui, Size(100, 30));
  // By memory: vllm (40 GiB on the GPU) first, then python (6), llama.cpp (5).
  EXPECT_LT(RowOf(f, "1111"), RowOf(f, "2222"));
  EXPECT_LT(RowOf(f, "2222"), RowOf(f, "4444"));
  EXPECT_TRUE(Has(f, "sorted by mem"));
  EXPECT_TRUE(Has(f, "s sort (mem)"));
  ui.sort = SortOrder::kName;  // llama.cpp, python, vllm
  f = LayoutTop(s, History{}, ui, Size(100, 30));
  EXPECT_LT(RowOf(f, "4444"), RowOf(f, "2222"));
  EXPECT_LT(RowOf(f, "2222"), RowOf(f, "1111"));
  EXPECT_TRUE(Has(f, "sorted by name"));
  EXPECT_FALSE(Has(f, "PAUSED"));

  ui.paused = true;
  f = LayoutTop(s, History{}, ui, Size(100, 30));
  EXPECT_EQ(RowOf(f, "PAUSED"), 0);
  EXPECT_TRUE(HasRole(f, Role::kPaused));
  EXPECT_TRUE(Has(f, "p resume"));

  ui.help = true;
  f = LayoutTop(s, History{}, ui, Size(100, 30));
  ExpectFits(f, 100, 30);
  EXPECT_TRUE(Has(f, "this help; any key closes it"));
  EXPECT_TRUE(Has(f, "press any key to close the help"));
  EXPECT_FALSE(Has(f, "processes holding"));
}

TEST_F(TopView, WithoutGpuSaysWhyAndShowsTheRest) {
  const TopSnapshot s = testing::NoGpuSnapshot();
  const Frame f = LayoutTop(s, HistoryOf(s, 10), UiState{}, Size(120, 40));
  EXPECT_TRUE(Has(f, "GPU      none: nvml: dlopen(libnvidia-ml.so.1)"));
  EXPECT_TRUE(Has(f, "no GPU"));
  EXPECT_TRUE(Has(f, "memory "));  // host memory, not "pool": no unified GPU here
  EXPECT_TRUE(Has(f, "PSI"));
  EXPECT_TRUE(Has(f, "processes holding the pool: 3"));
  EXPECT_FALSE(Has(f, "power    "));  // the reading's cell
  EXPECT_FALSE(Has(f, "W sustained"));
  EXPECT_FALSE(Has(f, "SM clock"));
}

TEST_F(TopView, Gb10PowerAgainstItsCapsDiscreteAgainstItsLimit) {
  const TopSnapshot gb10 = Gb10Snapshot();
  Frame f = LayoutTop(gb10, History{}, UiState{}, Size(120, 40));
  EXPECT_TRUE(Has(f, "61.0/100 W"));
  EXPECT_TRUE(Has(f, "power 100 W sustained, 240 W rated"));
  EXPECT_TRUE(Has(f, "throttle: none"));
  EXPECT_FALSE(Has(f, "GPU mem"));  // GB10: the GPU's memory is the pool, never NVML's N/A

  const TopSnapshot discrete = testing::DiscreteSnapshot();
  f = LayoutTop(discrete, History{}, UiState{}, Size(120, 40));
  EXPECT_TRUE(Has(f, "690.0/700 W"));
  EXPECT_TRUE(Has(f, "power limit 700 W"));
  EXPECT_TRUE(Has(f, "throttle: power cap (software), thermal slowdown (software)"));
  EXPECT_TRUE(Has(f, "GPU mem"));
  EXPECT_TRUE(Has(f, "memory "));
}

TEST_F(TopView, Gb10DegradedClockWithNoBitSet) {
  TopSnapshot s = Gb10Snapshot();
  s.sample.sm_clock_mhz = 700;
  const Frame f = LayoutTop(s, History{}, UiState{}, Size(160, 40));
  EXPECT_TRUE(Has(f, "none set, but SM clock 700 MHz is in the degraded band (500-850 MHz)"));
  EXPECT_TRUE(HasRole(f, Role::kCrit));
}

TEST_F(TopView, ThrottleWords) {
  EXPECT_TRUE(ThrottleWords(0).empty());
  EXPECT_TRUE(ThrottleWords(0x1).empty());  // idle is no slowdown
  EXPECT_EQ(ThrottleWords(0x24),
            (std::vector<std::string>{"power cap (software)", "thermal slowdown (software)"}));
  EXPECT_EQ(ThrottleWords(0xC8),
            (std::vector<std::string>{"hardware slowdown", "thermal slowdown (hardware)",
                                      "power brake (hardware)"}));
  const auto unknown = ThrottleWords(0x1000);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].rfind("unknown_0x", 0), 0u);
}

TEST_F(TopView, BatchListsEverythingWithoutKeys) {
  TopSnapshot s = Gb10Snapshot();
  for (pid_t p = 5000; p < 5060; ++p)
    s.holders.push_back(testing::Holder(p, "gpu process", "", std::nullopt));
  ViewOptions o = Size(100, 10'000);
  o.batch = true;
  const Frame f = LayoutTop(s, History{}, UiState{}, o);
  EXPECT_TRUE(Has(f, "5059"));
  EXPECT_TRUE(Has(f, "power_plateau"));
  EXPECT_FALSE(Has(f, "q quit"));
  EXPECT_LT(f.rows.size(), 100u);  // not padded to the height
  // In a terminal the same list is cut, with a count.
  const Frame term = LayoutTop(s, History{}, UiState{}, Size(100, 30));
  EXPECT_FALSE(Has(term, "5059"));
  EXPECT_TRUE(Has(term, "more"));
}

}  // namespace
}  // namespace headroom
