// The lower panes of `headroom top`: the processes holding the pool (the columns of
// `headroom ps`, docs/ps.md), the events, and the help page.
//
// Implementation notes. The table's columns have fixed widths except COMMAND, which takes
// what is left; when the width cannot give COMMAND kMinCommandColumns, columns go in the
// order PSS, USER, CAP, RSS, KIND (the figures least needed to tell who holds the pool: PSS
// is mostly unreadable for other users' processes anyway), so PID, GPU and the command stay.
#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "base/bytes.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "cli/top/top_view_parts.h"
#include "top/text_width.h"

namespace headroom::top_view {
namespace {

constexpr size_t kMinCommandColumns = 12;

enum class Col { kPid, kUser, kKind, kRss, kPss, kGpu, kCap, kCommand };

struct Column {
  Col id;
  const char* head;  // N_: translated when drawn
  size_t width;
  bool right;
};

constexpr Column kColumns[] = {
    {Col::kPid, "PID", 7, true},         {Col::kUser, N_("USER"), 9, false},
    {Col::kKind, N_("KIND"), 14, false}, {Col::kRss, "RSS", 10, true},
    {Col::kPss, "PSS", 10, true},        {Col::kGpu, "GPU", 10, true},
    {Col::kCap, N_("CAP"), 22, false},
};
constexpr Col kDropOrder[] = {Col::kPss, Col::kUser, Col::kCap, Col::kRss, Col::kKind};

std::string CapText(const HolderRow& r) {
  if (r.part_of) return TrFormat("(of pid {})", *r.part_of);
  if (r.cap_fraction) return fmt::format("{:.2f} ({})", *r.cap_fraction, r.cap_source);
  if (r.cap_bytes) return TrFormat("{} (torch cap)", FormatGiB(*r.cap_bytes));
  if (r.fixed_after_load) return Tr("fixed at load");
  return Tr("none");
}

std::string CellText(const HolderRow& r, Col c) {
  switch (c) {
    case Col::kPid:
      return std::to_string(r.pid);
    case Col::kUser:
      return r.user;
    case Col::kKind:
      return r.kind;
    case Col::kRss:
      return GiBOrDash(r.rss_bytes);
    case Col::kPss:
      return GiBOrDash(r.pss_bytes);
    case Col::kGpu:
      return GiBOrDash(r.gpu_bytes);
    case Col::kCap:
      return CapText(r);
    case Col::kCommand:
      return r.in_proc ? r.command : Tr("(not in this pid namespace)");
  }
  return {};
}

// The columns that fit in `width` beside a command of kMinCommandColumns.
std::vector<Column> FittingColumns(size_t width) {
  std::vector<Column> cols(std::begin(kColumns), std::end(kColumns));
  const auto needed = [&] {
    size_t n = kMinCommandColumns;
    for (const auto& c : cols) n += c.width + 1;
    return n;
  };
  for (Col drop : kDropOrder) {
    if (needed() <= width) break;
    cols.erase(
        std::remove_if(cols.begin(), cols.end(), [&](const Column& c) { return c.id == drop; }),
        cols.end());
  }
  return cols;
}

}  // namespace

std::string LocalClock(WallTime t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm local{};
  if (::localtime_r(&secs, &local) == nullptr) return "--:--:--";
  return fmt::format("{:02}:{:02}:{:02}", local.tm_hour, local.tm_min, local.tm_sec);
}

std::string GiBOrDash(const std::optional<uint64_t>& bytes) {
  return bytes ? FormatGiB(*bytes) : "-";
}

FrameRow TextRow(std::string_view text, Role role, const ViewOptions& o) {
  RowBuilder b(o.width, o.utf8);
  b.Add(text, role);
  return b.Take();
}

std::vector<FrameRow> ProcessRows(const TopSnapshot& s, const UiState& ui, size_t max_rows,
                                  const ViewOptions& o) {
  std::vector<FrameRow> rows;
  if (max_rows == 0) return rows;
  {
    RowBuilder b(o.width, o.utf8);
    b.Add(TrFormat("processes holding the pool: {}", s.holders.size()), Role::kLabel);
    b.Add(std::string(" · ") + TrFormat("sorted by {}", SortOrderName(ui.sort)), Role::kDim);
    if (s.holders_time)
      b.Add(std::string(" · ") + TrFormat("surveyed {}", LocalClock(*s.holders_time)), Role::kDim);
    if (!s.holders_note.empty()) b.Add(" · " + TranslatedText(s.holders_note), Role::kDim);
    rows.push_back(b.Take());
  }
  if (rows.size() >= max_rows) return rows;
  if (s.holders.empty()) {
    rows.push_back(
        TextRow(Tr("  none: no inference server, trainer, python with torch or GPU process found"),
                Role::kDim, o));
    return rows;
  }
  const std::vector<Column> cols = FittingColumns(o.width);
  {
    RowBuilder b(o.width, o.utf8);
    for (const auto& c : cols)
      b.AddCell(Tr(c.head), c.width, Role::kHeader, c.right).AddCell(" ", 1, Role::kHeader);
    b.AddCell(Tr("COMMAND"), b.left(), Role::kHeader);
    rows.push_back(b.Take());
  }
  std::vector<HolderRow> sorted = s.holders;
  SortHolders(sorted, ui.sort);
  const size_t room = max_rows - rows.size();
  const bool cut = sorted.size() > room;
  const size_t shown = cut ? (room > 0 ? room - 1 : 0) : sorted.size();
  for (size_t i = 0; i < shown; ++i) {
    const HolderRow& r = sorted[i];
    RowBuilder b(o.width, o.utf8);
    for (const auto& c : cols) {
      const Role role = c.id == Col::kPid
                            ? Role::kValue
                            : (r.part_of && c.id == Col::kCap ? Role::kDim : Role::kNormal);
      b.AddCell(CellText(r, c.id), c.width, role, c.right).Add(" ");
    }
    b.Add(CellText(r, Col::kCommand), r.in_proc ? Role::kNormal : Role::kDim);
    rows.push_back(b.Take());
  }
  if (cut && room > 0)
    rows.push_back(TextRow(TrFormat("  and {} more", sorted.size() - shown), Role::kDim, o));
  return rows;
}

std::vector<FrameRow> EventRows(const TopSnapshot& s, size_t max_rows, const ViewOptions& o) {
  std::vector<FrameRow> rows;
  if (max_rows == 0) return rows;
  rows.push_back(TextRow(TrFormat("events: {}", s.events_total), Role::kLabel, o));
  if (s.events.empty()) {
    if (max_rows > 1) {
      rows.push_back(TextRow(
          Tr("  none yet (throttling, clock collapse, memory pressure, GPU processes, guards)"),
          Role::kDim, o));
    }
    return rows;
  }
  const size_t room = max_rows - 1;
  const size_t first = s.events.size() > room ? s.events.size() - room : 0;
  for (size_t i = first; i < s.events.size(); ++i) {
    const TopEvent& e = s.events[i];
    RowBuilder b(o.width, o.utf8);
    b.Add("  " + LocalClock(e.time) + " ", Role::kDim);
    const bool bad =
        e.type == "clock_collapse" || e.type == "gpu_lost" || e.type == "memory_pressure";
    b.Add(e.type, bad ? Role::kWarn : Role::kValue);
    b.Add(" " + TranslatedText(e.message), Role::kNormal);
    rows.push_back(b.Take());
  }
  return rows;
}

std::vector<FrameRow> HelpRows(size_t max_rows, const ViewOptions& o) {
  // Each line: the key or section name (a key, a unit or a metric name is never
  // translated; the section words are), and what it is.
  struct HelpLine {
    const char* key;
    bool translate_key;
    const char* what;
  };
  static constexpr HelpLine kLines[] = {
      {"q", false, N_("quit (the terminal is restored; SIGINT, SIGTERM and SIGHUP do the same)")},
      {"p", false, N_("pause: freeze the display while sampling goes on; p again resumes")},
      {"s", false,
       N_("sort the processes: by memory (NVML's GPU figure, else PSS, else RSS), pid, name")},
      {"h", false, N_("this help; any key closes it")},
      {"", false, ""},
      {N_("pool"), true,
       N_("MemTotal - MemAvailable used, page cache (Cached) shaded, from /proc/meminfo")},
      {"W K", false, N_("the warn and kill levels of each running headroom guard")},
      {"PSI", false, N_("memory pressure: some and full avg10, percent of the last 10 s")},
      {"GPU", false,
       N_("temperature, power against the platform's caps, SM clock, utilization (NVML)")},
      {N_("throttle"), true, N_("the clock event reasons NVML sets, as words")},
      {N_("processes"), true,
       N_("what headroom ps lists: RSS, PSS, NVML's GPU memory, the cap each started with")},
      {N_("events"), true,
       N_("throttling, clock collapse, memory pressure, GPU processes, guards")},
      {"GiB", false, N_("2^30 bytes; graphs show one sample per column, newest on the right")},
  };
  std::vector<FrameRow> rows;
  rows.push_back(TextRow(Tr("headroom top: keys and what is shown"), Role::kLabel, o));
  for (const HelpLine& line : kLines) {
    if (rows.size() >= max_rows) break;
    RowBuilder b(o.width, o.utf8);
    if (*line.key != '\0') {
      b.Add("  ")
          .AddCell(line.translate_key ? Tr(line.key) : line.key, 12, Role::kKey)
          .Add(Tr(line.what));
    }
    rows.push_back(b.Take());
  }
  return rows;
}

}  // namespace headroom::top_view
