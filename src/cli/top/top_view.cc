// Implementation notes.
//  - Rows above the process table carry a priority; when the height is short the rows of
//    the lowest priority go first (the last rows of readings, then the guards' details), and
//    the pool bar, its figures and the GPU line stay to the end. The process table keeps at
//    least its title, head and two rows; the events get a share from 8 free rows on, and
//    whatever rows the processes do not need.
//  - Readings are cells of about kCellColumns: label, value, and a sparkline in what is
//    left of the cell. A row holds width / kCellColumns cells (1 to 4), so 80 columns give
//    two per row and 120 three; the first cells are the most important ones.
//  - Monochrome terminals cannot show a warning by colour, so a value past a threshold gets
//    a '!' (warning) or '!!' (critical) after it; with colour the role alone says it.
//  - Severity thresholds: MemAvailable below a running guard's kill level is critical and
//    below its warn level a warning; with no guard, the guard's default levels (the larger
//    of 4 GiB and 8 % of MemTotal, and twice that) stand in. PSI some avg10 at or above
//    10 % is a warning (samples/sample_events.h, the memory_pressure event) and full avg10 at
//    or above 10 % critical. Power at or above 95 % of the sustained figure or limit is a
//    warning: that is where GB10's controller holds it (sample_events.h, power_plateau).
#include "cli/top/top_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/bytes.h"
#include "cli/i18n.h"
#include "cli/top/top_view_parts.h"
#include "gpu/clock_events.h"
#include "guard/guard.h"
#include "top/sparkline.h"
#include "top/text_width.h"

namespace headroom {

using top_view::GiBOrDash;
using top_view::TextRow;

namespace {

constexpr size_t kCellColumns = 40;
constexpr size_t kMaxCellsPerRow = 4;
// Labels take the width of the widest one plus a blank, at least 9 columns ("SM clock"
// and a blank) and at most 14, so a translation with longer words still lines up.
constexpr size_t kMinLabelColumns = 9;
constexpr size_t kMaxLabelColumns = 14;
constexpr size_t kMinGraphColumns = 4;

struct Cell {
  std::string label;
  std::string value;
  Role role = Role::kValue;
  Metric metric = Metric::kAvailable;
  bool graph = false;
  GraphRange range;
};

// Rows above the process table, each with its priority (0 kept longest).
struct RankedRow {
  int priority = 0;
  FrameRow row;
};

size_t LabelColumns(const ViewOptions& o) {
  size_t widest = 0;
  for (const char* label : {Tr("pool"), Tr("memory"), Tr("guard"), Tr("avail"), Tr("power"),
                            Tr("SM clock"), Tr("temp"), Tr("GPU util"), Tr("GPU mem")}) {
    widest = std::max(widest, DisplayWidth(TerminalSafe(label, o.utf8)));
  }
  return std::clamp(widest + 1, kMinLabelColumns, kMaxLabelColumns);
}

// The value with its monochrome severity mark.
std::string Marked(std::string value, Role role, const ViewOptions& o) {
  if (o.colour != ColourMode::kMono) return value;
  if (role == Role::kCrit) return value + " !!";
  if (role == Role::kWarn) return value + " !";
  return value;
}

bool UnifiedPool(const TopSnapshot& s) {
  return s.platform.kind == PlatformKind::kGb10 || s.platform.kind == PlatformKind::kIntegrated;
}

// The levels MemAvailable is judged against: the strictest running guard's, else the
// guard's defaults.
std::pair<uint64_t, uint64_t> MemoryLevels(const TopSnapshot& s, uint64_t total) {
  if (s.guards.empty()) {
    const PoolLevels levels = ResolvePoolLevels(total);  // sys/pool_levels.h, the one model
    return {levels.kill.bytes, levels.warn.bytes};
  }
  uint64_t kill = 0, warn = 0;
  for (const auto& g : s.guards) {
    kill = std::max(kill, g.kill_below_bytes);
    warn = std::max(warn, g.warn_below_bytes);
  }
  return {kill, warn};
}

Role AvailableRole(const TopSnapshot& s) {
  const auto& m = s.sample;
  if (!m.mem_total_bytes || !m.mem_available_bytes) return Role::kValue;
  const auto [kill, warn] = MemoryLevels(s, *m.mem_total_bytes);
  if (*m.mem_available_bytes < kill) return Role::kCrit;
  if (*m.mem_available_bytes < warn) return Role::kWarn;
  return Role::kValue;
}

FrameRow TitleRow(const TopSnapshot& s, const UiState& ui, const ViewOptions& o) {
  std::string gpu = s.has_gpu ? s.platform.gpu_name : Tr("no GPU");
  const double interval_s = static_cast<double>(o.interval.count()) / 1000.0;
  std::string left = TrFormat(" headroom top · {} · {} · every {:g} s · {}", o.host, gpu,
                              interval_s, top_view::LocalClock(s.sample.time));
  std::string right = ui.paused ? std::string(" ") + Tr("PAUSED") + " " : std::string();
  RowBuilder b(o.width, o.utf8);
  const size_t right_cols = DisplayWidth(TerminalSafe(right, o.utf8));
  b.AddCell(left, o.width > right_cols ? o.width - right_cols : 0, Role::kTitle);
  if (!right.empty()) b.Add(right, Role::kPaused);
  return b.Take();
}

std::vector<RankedRow> MemoryRows(const TopSnapshot& s, const ViewOptions& o) {
  const size_t label_cols = LabelColumns(o);
  std::vector<RankedRow> rows;
  const auto& m = s.sample;
  const std::string label = UnifiedPool(s) ? Tr("pool") : Tr("memory");
  RowBuilder bar(o.width, o.utf8);
  bar.AddCell(label, label_cols - 1, Role::kLabel).Add(" ");
  if (m.mem_total_bytes && m.mem_available_bytes && *m.mem_total_bytes > 0) {
    const double total = static_cast<double>(*m.mem_total_bytes);
    const double available = static_cast<double>(*m.mem_available_bytes);
    // Page cache inside MemAvailable: reclaimable, so shaded apart from what is used.
    const double cache = std::min(static_cast<double>(m.mem_cached_bytes.value_or(0)), available);
    std::vector<BarMark> marks;
    for (const auto& g : s.guards) {
      if (g.warn_below_bytes > 0)
        marks.push_back({1.0 - static_cast<double>(g.warn_below_bytes) / total, 'W'});
      marks.push_back({1.0 - static_cast<double>(g.kill_below_bytes) / total, 'K'});
    }
    const size_t width = bar.left() > 2 ? bar.left() - 2 : 0;
    bar.Add("[", Role::kDim);
    for (Span& span : MemoryBar(width, (total - available) / total, cache / total, marks, o.utf8)) {
      bar.Add(span.text, span.role);
    }
    bar.Add("]", Role::kDim);
  } else {
    bar.Add(Tr("proc/meminfo not readable"), Role::kDim);
  }
  rows.push_back({0, bar.Take()});

  RowBuilder fig(o.width, o.utf8);
  fig.PadTo(label_cols);
  const Role avail_role = AvailableRole(s);
  std::optional<uint64_t> used;
  if (m.mem_total_bytes && m.mem_available_bytes && *m.mem_total_bytes >= *m.mem_available_bytes) {
    used = *m.mem_total_bytes - *m.mem_available_bytes;
  }
  fig.Add(Tr("used") + std::string(" "), Role::kDim).Add(GiBOrDash(used), Role::kValue);
  fig.Add(std::string(" · ") + Tr("page cache") + " ", Role::kDim)
      .Add(GiBOrDash(m.mem_cached_bytes), Role::kValue);
  fig.Add(std::string(" · ") + Tr("available") + " ", Role::kDim)
      .Add(Marked(GiBOrDash(m.mem_available_bytes), avail_role, o), avail_role);
  fig.Add(std::string(" · ") + Tr("total") + " ", Role::kDim)
      .Add(GiBOrDash(m.mem_total_bytes), Role::kValue);
  if (m.swap_used_bytes && *m.swap_used_bytes > 0) {
    fig.Add(std::string(" · ") + Tr("swap used") + " ", Role::kDim)
        .Add(FormatGiB(*m.swap_used_bytes), Role::kValue);
  }
  rows.push_back({0, fig.Take()});

  // The guards: one row each (two at most, then a count), or one saying there is none.
  const size_t shown = std::min<size_t>(s.guards.size(), 2);
  for (size_t i = 0; i < shown; ++i) {
    const auto& g = s.guards[i];
    RowBuilder r(o.width, o.utf8);
    r.AddCell(Tr("guard"), label_cols - 1, Role::kLabel).Add(" ");
    // TRANSLATORS: {0} is the command that guards (guard, watch or sweep), kept as it is.
    r.Add(TrFormat("{0} run {1} pid {2}: ", g.kind, g.run_id, g.guard_pid), Role::kValue);
    if (g.warn_below_bytes > 0)
      r.Add(TrFormat("warn level {} (W)", FormatGiB(g.warn_below_bytes)), Role::kWarn);
    else
      r.Add(Tr("no warn level"), Role::kDim);
    r.Add(" · ", Role::kDim);
    r.Add(TrFormat("kill level {} (K)", FormatGiB(g.kill_below_bytes)), Role::kCrit);
    rows.push_back({i == 0 ? 2 : 4, r.Take()});
  }
  if (s.guards.size() > shown) {
    rows.push_back({4, TextRow(std::string(label_cols, ' ') +
                                   TrFormat("and {} more running guards", s.guards.size() - shown),
                               Role::kDim, o)});
  }
  if (s.guards.empty()) {
    RowBuilder r(o.width, o.utf8);
    r.AddCell(Tr("guard"), label_cols - 1, Role::kLabel).Add(" ");
    r.Add(s.guards_note.empty() ? Tr("none running (headroom guard marks its levels here)")
                                : TrFormat("not known: {}", s.guards_note),
          Role::kDim);
    rows.push_back({6, r.Take()});  // the first row to go: it says only what is not there
  }
  return rows;
}

std::vector<Cell> ReadingCells(const TopSnapshot& s, const History& h, const ViewOptions& o) {
  const auto& m = s.sample;
  std::vector<Cell> cells;
  const auto pct = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.0f}%", *v) : std::string("-");
  };

  Cell avail{
      Tr("avail"), GiBOrDash(m.mem_available_bytes), AvailableRole(s), Metric::kAvailable, true,
      {}};
  avail.range = {0, m.mem_total_bytes ? static_cast<double>(*m.mem_total_bytes) : 1.0};
  cells.push_back(avail);

  Cell psi{"PSI", "-", Role::kValue, Metric::kPsiSome, true, {}};
  if (m.psi_some_avg10_pct) {
    psi.value = TrFormat("some {:.2f}%", *m.psi_some_avg10_pct);
    if (m.psi_full_avg10_pct) psi.value += " " + TrFormat("full {:.2f}%", *m.psi_full_avg10_pct);
    if (*m.psi_some_avg10_pct >= 10) psi.role = Role::kWarn;
    if (m.psi_full_avg10_pct && *m.psi_full_avg10_pct >= 10) psi.role = Role::kCrit;
  }
  psi.range = AutoRange(h.Last(Metric::kPsiSome, o.width), 10.0);
  psi.range.lo = 0;
  cells.push_back(psi);

  if (s.has_gpu) {
    const auto cap_mw = s.platform.sustained_power_mw;
    Cell power{Tr("power"), "-", Role::kValue, Metric::kPower, true, {}};
    if (m.power_mw) {
      const double w = *m.power_mw / 1000.0;
      power.value =
          cap_mw ? fmt::format("{:.1f}/{:.0f} W", w, *cap_mw / 1000.0) : fmt::format("{:.1f} W", w);
      if (cap_mw && *m.power_mw >= 0.95 * *cap_mw) power.role = Role::kWarn;
    }
    const auto top_mw = s.platform.rated_power_mw ? s.platform.rated_power_mw : cap_mw;
    power.range =
        top_mw ? GraphRange{0, *top_mw / 1000.0} : AutoRange(h.Last(Metric::kPower, o.width), 50.0);
    cells.push_back(power);

    Cell clock{Tr("SM clock"), m.sm_clock_mhz ? fmt::format("{} MHz", *m.sm_clock_mhz) : "-",
               Role::kValue,   Metric::kSmClock,
               true,           {}};
    if (m.sm_clock_mhz && InDegradedClockBand(s.platform, *m.sm_clock_mhz))
      clock.role = Role::kCrit;
    const auto normal = s.platform.normal_sm_clock_mhz;
    clock.range = normal ? GraphRange{0, static_cast<double>(*normal)}
                         : AutoRange(h.Last(Metric::kSmClock, o.width), 500.0);
    cells.push_back(clock);

    Cell temp{
        Tr("temp"),
        m.temperature_c ? fmt::format("{} {}C", *m.temperature_c, o.utf8 ? "\xC2\xB0" : "") : "-",
        Role::kValue,
        Metric::kTemperature,
        true,
        {}};
    temp.range = AutoRange(h.Last(Metric::kTemperature, o.width), 10.0);
    cells.push_back(temp);

    Cell util{
        Tr("GPU util"), m.gpu_utilization_pct ? fmt::format("{}%", *m.gpu_utilization_pct) : "-",
        Role::kValue,   Metric::kGpuUtil,
        true,           {0, 100}};
    cells.push_back(util);
    if (m.gpu_memory_total_bytes) {
      Cell mem{Tr("GPU mem"),
               fmt::format("{}/{}", GiBOrDash(m.gpu_memory_used_bytes),
                           FormatGiB(*m.gpu_memory_total_bytes)),
               Role::kValue,
               Metric::kGpuMemoryUsed,
               true,
               {0, static_cast<double>(*m.gpu_memory_total_bytes)}};
      cells.push_back(mem);
    }
  }
  cells.push_back(Cell{"CPU", pct(m.cpu_util_pct), Role::kValue, Metric::kCpuUtil, true, {0, 100}});
  for (Cell& c : cells) c.value = Marked(c.value, c.role, o);
  return cells;
}

std::vector<RankedRow> ReadingRows(const TopSnapshot& s, const History& h, const ViewOptions& o) {
  const size_t label_cols = LabelColumns(o);
  const std::vector<Cell> cells = ReadingCells(s, h, o);
  const size_t per_row = std::clamp<size_t>(o.width / kCellColumns, 1, kMaxCellsPerRow);
  const size_t cell_width = o.width / per_row;
  std::vector<RankedRow> rows;
  for (size_t first = 0; first < cells.size(); first += per_row) {
    RowBuilder b(o.width, o.utf8);
    for (size_t i = first; i < std::min(first + per_row, cells.size()); ++i) {
      const Cell& c = cells[i];
      const size_t end = (i - first + 1 == per_row) ? o.width : (i - first + 1) * cell_width;
      b.AddCell(c.label, label_cols - 1, Role::kLabel).Add(" ");
      b.Add(c.value, c.role);
      const size_t room = end > b.used() + 2 ? end - b.used() - 2 : 0;
      if (c.graph && room >= kMinGraphColumns) {
        b.Add(" ");
        b.Add(Sparkline(h.Last(c.metric, room), room, c.range, o.utf8), Role::kGraph);
      }
      b.PadTo(end);
    }
    // The first row of readings outranks the guards' details; later rows go before them.
    const int priority = first == 0 ? 1 : 3 + static_cast<int>(first / per_row);
    rows.push_back({priority, b.Take()});
  }
  return rows;
}

RankedRow GpuRow(const TopSnapshot& s, const ViewOptions& o) {
  const size_t label_cols = LabelColumns(o);
  RowBuilder b(o.width, o.utf8);
  b.AddCell("GPU", label_cols - 1, Role::kLabel).Add(" ");
  if (!s.has_gpu) {
    b.Add(Tr("none"), Role::kWarn);
    if (!s.gpu_note.empty()) b.Add(": " + s.gpu_note, Role::kDim);
    b.Add(std::string(" · ") + Tr("memory, PSI and processes only"), Role::kDim);
    return {1, b.Take()};
  }
  const auto& m = s.sample;
  if (m.gpu_lost) {
    b.Add(Tr("lost: the driver answers GPU_IS_LOST"), Role::kCrit);
    return {1, b.Take()};
  }
  b.Add(Tr("throttle") + std::string(": "), Role::kDim);
  if (!m.clock_event_reasons) {
    b.Add(Tr("not reported"), Role::kDim);
  } else {
    const auto words = ThrottleWords(*m.clock_event_reasons);
    const uint64_t hw = 0x08 | 0x40 | 0x80;  // hw_slowdown, hw_thermal, hw_power_brake
    const Role role = (*m.clock_event_reasons & hw)             ? Role::kCrit
                      : IsClockSlowdown(*m.clock_event_reasons) ? Role::kWarn
                                                                : Role::kGood;
    std::string text;
    for (const auto& w : words) text += (text.empty() ? "" : ", ") + w;
    if (words.empty()) {
      // GB10's degraded state sets no bit (gpu/platform.h): the clock band says it.
      const bool degraded = m.sm_clock_mhz && InDegradedClockBand(s.platform, *m.sm_clock_mhz);
      if (degraded) {
        b.Add(Marked(TrFormat("none set, but SM clock {} MHz is in the degraded band ({}-{} MHz)",
                              *m.sm_clock_mhz, s.platform.degraded_sm_clock_min_mhz.value_or(0),
                              s.platform.degraded_sm_clock_max_mhz.value_or(0)),
                     Role::kCrit, o),
              Role::kCrit);
      } else {
        b.Add(Tr("none"), Role::kGood);
      }
    } else {
      b.Add(Marked(text, role, o), role);
    }
  }
  std::string caps;
  const auto& p = s.platform;
  if (p.kind == PlatformKind::kGb10 && p.sustained_power_mw && p.rated_power_mw) {
    caps = TrFormat("power {} W sustained, {} W rated", *p.sustained_power_mw / 1000,
                    *p.rated_power_mw / 1000);
  } else if (p.sustained_power_mw) {
    caps = TrFormat("power limit {} W", *p.sustained_power_mw / 1000);
  } else {
    caps = Tr("no power limit reported");
  }
  b.Add(" · " + caps, Role::kDim);
  b.Add(" · " + p.gpu_name + " (" + std::string(PlatformKindName(p.kind)) + ")", Role::kDim);
  return {1, b.Take()};
}

FrameRow KeysRow(const UiState& ui, const ViewOptions& o) {
  RowBuilder b(o.width, o.utf8);
  const auto key = [&](const char* k, const std::string& what) {
    b.Add(k, Role::kKey).Add(" " + what + "  ", Role::kNormal);
  };
  key("q", Tr("quit"));
  key("p", ui.paused ? Tr("resume") : Tr("pause"));
  key("s", TrFormat("sort ({})", SortOrderName(ui.sort)));
  key("h", Tr("help"));
  return b.Take();
}

Frame TooSmall(const ViewOptions& o) {
  Frame f{o.width, o.height, {}};
  // Short lines, cut to the width whatever it is; a one-row terminal gets the first.
  const std::string lines[] = {TrFormat("terminal too small: {}x{}", o.width, o.height),
                               TrFormat("top needs {}x{}", kMinWidth, kMinHeight), Tr("q quits")};
  for (const std::string& line : lines) {
    if (f.rows.size() >= o.height) break;
    RowBuilder b(o.width, o.utf8);
    b.Add(line, Role::kWarn);
    f.rows.push_back(b.Take());
  }
  return f;
}

}  // namespace

std::vector<std::string> ThrottleWords(uint64_t mask) {
  // Bit by bit with gpu/clock_events.h's table; the words are what the bits mean.
  static constexpr std::pair<std::string_view, const char*> kWords[] = {
      {"applications_clocks_setting", N_("application clocks set")},
      {"sw_power_cap", N_("power cap (software)")},
      {"hw_slowdown", N_("hardware slowdown")},
      {"sync_boost", N_("sync boost")},
      {"sw_thermal_slowdown", N_("thermal slowdown (software)")},
      {"hw_thermal_slowdown", N_("thermal slowdown (hardware)")},
      {"hw_power_brake_slowdown", N_("power brake (hardware)")},
      {"display_clock_setting", N_("display clock setting")},
  };
  std::vector<std::string> out;
  for (const std::string& name : DecodeClockEventReasons(mask)) {
    if (name == "gpu_idle") continue;
    const auto it = std::find_if(std::begin(kWords), std::end(kWords),
                                 [&](const auto& w) { return w.first == name; });
    out.push_back(it != std::end(kWords) ? Tr(it->second) : name);  // unknown_0x...: shown as is
  }
  return out;
}

Frame LayoutTop(const TopSnapshot& s, const History& h, const UiState& ui, const ViewOptions& o) {
  if (o.width < kMinWidth || o.height < kMinHeight) return TooSmall(o);
  Frame f{o.width, o.height, {}};
  f.rows.push_back(TitleRow(s, ui, o));
  const size_t keys = o.batch ? 0 : 1;
  const size_t body = o.height - 1 - keys;
  if (ui.help) {
    for (FrameRow& r : top_view::HelpRows(body, o)) f.rows.push_back(std::move(r));
    while (f.rows.size() < o.height - keys) f.rows.push_back({});
    if (keys) f.rows.push_back(TextRow(Tr("press any key to close the help"), Role::kKey, o));
    return f;
  }

  std::vector<RankedRow> top = MemoryRows(s, o);
  for (RankedRow& r : ReadingRows(s, h, o)) top.push_back(std::move(r));
  top.push_back(GpuRow(s, o));
  // Keep the process table's title, head and two rows in view: drop top rows, least
  // important first, until they fit above it.
  constexpr size_t kMinProcessRows = 4;
  const size_t top_budget = body > kMinProcessRows ? body - kMinProcessRows : 0;
  std::vector<size_t> order(top.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return top[a].priority < top[b].priority; });
  std::vector<bool> keep(top.size(), false);
  for (size_t i = 0; i < std::min(top_budget, order.size()); ++i) keep[order[i]] = true;
  for (size_t i = 0; i < top.size(); ++i) {
    if (keep[i]) f.rows.push_back(std::move(top[i].row));
  }

  // Below: the processes, then the events. The events' share is a quarter of what is left
  // (from 8 rows on), and what the processes do not need goes to the events too.
  const size_t left = o.height - keys - f.rows.size();
  const size_t events_want = 1 + std::max<size_t>(s.events.size(), 1);
  size_t event_rows = 0;
  if (o.batch) {
    event_rows = events_want;
  } else if (left >= 8) {
    const size_t share = std::min<size_t>(events_want, std::min<size_t>(left / 4 + 1, 7));
    const size_t processes_want = 2 + std::max<size_t>(s.holders.size(), 1);
    const size_t spare = left > processes_want + share ? left - processes_want - share : 0;
    event_rows = std::min(events_want, share + spare);
  }
  const size_t process_rows = o.batch ? left : left - event_rows;
  for (FrameRow& r : top_view::ProcessRows(s, ui, process_rows, o)) f.rows.push_back(std::move(r));
  const size_t room = o.height - keys - f.rows.size();
  for (FrameRow& r : top_view::EventRows(s, std::min(event_rows, room), o))
    f.rows.push_back(std::move(r));
  if (keys) {
    while (f.rows.size() < o.height - 1) f.rows.push_back({});
    f.rows.push_back(KeysRow(ui, o));
  }
  return f;
}

}  // namespace headroom
