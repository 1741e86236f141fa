// Implementation notes.
//  - Writing: a row is built in one std::string and handed to DurableLines, one write(2).
//    Numbers are fixed-point where the source has a fixed resolution (power from mW: two
//    decimals, as nvidia-smi prints; energy from mJ: three) and shortest round-trip for the
//    sensor columns, whose resolution varies by driver.
//  - Reading: line by line, never RFC 4180 multi-line records: no field we write holds a
//    quote, comma or newline, so a line is a record, and a torn or zero-filled tail cannot
//    swallow the lines after it. A quoted field (a hand-edited file) is unquoted.
//  - Header values with spaces are double-quoted (device="NVIDIA GB10"); the writer replaces
//    '"' and control bytes in them, so the reader needs no escapes.
#include "samples/samples_csv.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>

#include "base/message.h"
#include "base/safe_file.h"
#include "gpu/clock_events.h"

namespace headroom {
namespace {

constexpr size_t kFixedColumns = std::size(kSampleColumns);

// Header value: bare when it has no blank, else quoted; '"', ',' kept out of it.
std::string HeaderValue(std::string_view v) {
  std::string out;
  bool blank = v.empty();
  for (char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '"') {
      out += '?';
    } else {
      if (c == ' ') blank = true;
      out += c;
    }
  }
  return blank ? "\"" + out + "\"" : out;
}

template <typename T>
std::optional<T> ParseNumber(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(value)) return std::nullopt;
  }
  return value;
}

// "99.50" W -> 99500 mW, rounding to the nearest milliwatt.
std::optional<uint64_t> ScaledUnsigned(std::string_view text, double scale) {
  auto v = ParseNumber<double>(text);
  if (!v || *v < 0 || *v * scale > 1.8e19) return std::nullopt;
  return static_cast<uint64_t>(*v * scale + 0.5);
}

// Splits one CSV line at commas; a field wrapped in double quotes is unquoted ("" -> ").
std::vector<std::string_view> SplitFields(std::string_view line, std::string& scratch) {
  std::vector<std::string_view> fields;
  if (line.find('"') == std::string_view::npos) {
    size_t start = 0;
    for (;;) {
      const size_t comma = line.find(',', start);
      fields.push_back(line.substr(start, comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    return fields;
  }
  // Quoted fields: rebuild into scratch, separated by '\0', then slice. Rare path.
  scratch.clear();
  std::vector<std::pair<size_t, size_t>> spans;
  size_t i = 0, begin = 0;
  bool quoted = false;
  while (i <= line.size()) {
    if (i == line.size() || (!quoted && line[i] == ',')) {
      spans.emplace_back(begin, scratch.size() - begin);
      begin = scratch.size();
      if (i == line.size()) break;
      ++i;
      continue;
    }
    const char c = line[i];
    if (c == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
        scratch += '"';
        i += 2;
        continue;
      }
      quoted = !quoted;
      ++i;
      continue;
    }
    scratch += c;
    ++i;
  }
  for (auto [b, n] : spans) fields.push_back(std::string_view(scratch).substr(b, n));
  return fields;
}

// key=value pairs separated by blanks; a value may be double-quoted (no escapes).
std::map<std::string, std::string, std::less<>> ParseHeaderPairs(std::string_view text) {
  std::map<std::string, std::string, std::less<>> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    const size_t eq = text.find('=', i);
    if (eq == std::string_view::npos) break;
    const std::string key(text.substr(i, eq - i));
    i = eq + 1;
    std::string value;
    if (i < text.size() && text[i] == '"') {
      const size_t close = text.find('"', i + 1);
      const size_t end = close == std::string_view::npos ? text.size() : close;
      value = text.substr(i + 1, end - i - 1);
      i = end == text.size() ? end : end + 1;
    } else {
      const size_t blank = std::min(text.find(' ', i), text.size());
      value = text.substr(i, blank - i);
      i = blank;
    }
    if (!key.empty() && key.find(' ') == std::string::npos) out.emplace(key, std::move(value));
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Fills the field of `s` named by fixed column `index` from `text`; false when it does not
// parse (the field stays nullopt). An empty text is n/a and parses.
bool SetFixed(Sample& s, size_t index, std::string_view text) {
  if (text.empty()) return true;
  const std::string_view name = kSampleColumns[index].name;
  auto u32 = [&](std::optional<uint32_t>& f) {
    auto v = ParseNumber<uint32_t>(text);
    f = v;
    return v.has_value();
  };
  auto u64 = [&](std::optional<uint64_t>& f) {
    auto v = ParseNumber<uint64_t>(text);
    f = v;
    return v.has_value();
  };
  auto pct = [&](std::optional<double>& f) {
    auto v = ParseNumber<double>(text);
    if (v && *v >= 0) f = v;
    return f.has_value();
  };
  if (name == "temperature.gpu") {
    auto v = ParseNumber<double>(text);  // an integer from us; a fraction from elsewhere
    if (!v || *v < -300 || *v > 10000) return false;
    s.temperature_c = static_cast<int>(*v < 0 ? *v - 0.5 : *v + 0.5);
    return true;
  }
  if (name == "power.draw") {
    auto mw = ScaledUnsigned(text, 1000);
    if (!mw || *mw > UINT32_MAX) return false;
    s.power_mw = static_cast<uint32_t>(*mw);
    return true;
  }
  if (name == "clocks.sm") return u32(s.sm_clock_mhz);
  if (name == "clocks.mem") return u32(s.mem_clock_mhz);
  if (name == "clocks_event_reasons") {
    s.clock_event_reasons = ParseClockEventReasonNames(text);
    return s.clock_event_reasons.has_value();
  }
  if (name == "utilization.gpu") return u32(s.gpu_utilization_pct);
  if (name == "energy") {
    s.energy_mj = ScaledUnsigned(text, 1000);
    return s.energy_mj.has_value();
  }
  if (name == "mem.total") return u64(s.mem_total_bytes);
  if (name == "mem.available") return u64(s.mem_available_bytes);
  if (name == "mem.cached") return u64(s.mem_cached_bytes);
  if (name == "mem.free") return u64(s.mem_free_bytes);
  if (name == "swap.used") return u64(s.swap_used_bytes);
  if (name == "psi.memory.some.avg10") return pct(s.psi_some_avg10_pct);
  if (name == "psi.memory.full.avg10") return pct(s.psi_full_avg10_pct);
  if (name == "cpu.util") return pct(s.cpu_util_pct);
  if (name == "memory.total") return u64(s.gpu_memory_total_bytes);
  if (name == "memory.used") return u64(s.gpu_memory_used_bytes);
  return true;  // timestamp: handled by the caller
}

}  // namespace

std::optional<uint64_t> ParseClockEventReasonNames(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text == "none") return uint64_t{0};
  uint64_t mask = 0;
  size_t start = 0;
  for (;;) {
    const size_t bar = text.find('|', start);
    const std::string_view name = text.substr(start, bar - start);
    bool known = false;
    for (const auto& r : kClockEventReasons) {
      if (r.name == name) {
        mask |= r.bit;
        known = true;
      }
    }
    if (!known) {
      if (!name.starts_with("unknown_0x") || name.size() > 26) return std::nullopt;
      uint64_t bits = 0;
      const std::string_view hex = name.substr(10);
      const auto [ptr, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), bits, 16);
      if (ec != std::errc() || ptr != hex.data() + hex.size() || bits == 0) return std::nullopt;
      mask |= bits;
    }
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  return mask;
}

std::string FormatSamplesHeader(const SamplesHeader& h) {
  std::string out = fmt::format(
      "# headroom samples schema_version={} host={} device={} platform={} interval_ms={} "
      "started={}\n",
      kSamplesSchemaVersion, HeaderValue(h.host), HeaderValue(h.device), HeaderValue(h.platform),
      h.interval_ms, FormatIso8601WithOffset(h.started));
  out += "# units:";
  bool first = true;
  auto unit = [&](std::string_view name, std::string_view u) {
    out += first ? " " : ", ";
    first = false;
    out += name;
    out += '=';
    out += u;
  };
  for (const auto& c : kSampleColumns) unit(c.name, c.unit);
  for (const auto& c : h.extra_columns) unit(c.name, c.unit);
  out += '\n';
  for (const auto& n : h.notes) {
    std::string line = n;
    std::replace_if(
        line.begin(), line.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    out += "# note: " + line + "\n";
  }
  for (size_t i = 0; i < kFixedColumns; ++i) {
    if (i) out += ',';
    out += kSampleColumns[i].name;
  }
  for (const auto& c : h.extra_columns) out += "," + c.name;
  out += '\n';
  return out;
}

std::string FormatSampleRow(const Sample& s, size_t extra_columns) {
  std::string out = FormatIso8601WithOffset(s.time);
  out.reserve(256);
  auto field = [&out](const auto& v, auto&& format) {
    out += ',';
    if (v) format(*v);
  };
  auto integer = [&out](auto v) { fmt::format_to(std::back_inserter(out), "{}", v); };
  field(s.temperature_c, integer);
  field(s.power_mw, [&](uint32_t mw) {
    fmt::format_to(std::back_inserter(out), "{}.{:02}", mw / 1000, (mw % 1000) / 10);
  });
  field(s.sm_clock_mhz, integer);
  field(s.mem_clock_mhz, integer);
  field(s.clock_event_reasons, [&](uint64_t mask) {
    if (mask == 0) {
      out += "none";
      return;
    }
    const auto names = DecodeClockEventReasons(mask);
    for (size_t i = 0; i < names.size(); ++i) {
      if (i) out += '|';
      out += names[i];
    }
  });
  field(s.gpu_utilization_pct, integer);
  field(s.energy_mj, [&](uint64_t mj) {
    fmt::format_to(std::back_inserter(out), "{}.{:03}", mj / 1000, mj % 1000);
  });
  field(s.mem_total_bytes, integer);
  field(s.mem_available_bytes, integer);
  field(s.mem_cached_bytes, integer);
  field(s.mem_free_bytes, integer);
  field(s.swap_used_bytes, integer);
  auto fixed2 = [&](double v) { fmt::format_to(std::back_inserter(out), "{:.2f}", v); };
  field(s.psi_some_avg10_pct, fixed2);
  field(s.psi_full_avg10_pct, fixed2);
  field(s.cpu_util_pct, [&](double v) { fmt::format_to(std::back_inserter(out), "{:.1f}", v); });
  field(s.gpu_memory_total_bytes, integer);
  field(s.gpu_memory_used_bytes, integer);
  for (size_t i = 0; i < extra_columns; ++i) {
    out += ',';
    if (i < s.extra.size() && s.extra[i])
      fmt::format_to(std::back_inserter(out), "{}", *s.extra[i]);
  }
  out += '\n';
  return out;
}

Result<SamplesCsvWriter> SamplesCsvWriter::Create(const std::filesystem::path& path,
                                                  const SamplesHeader& header,
                                                  std::chrono::milliseconds sync_period) {
  auto file = DurableLines::Create(path, sync_period);
  if (!file) return file.error();
  SamplesCsvWriter w(std::move(*file), header.extra_columns.size());
  auto wrote = w.file_.Append(FormatSamplesHeader(header));
  if (!wrote) return wrote.error();
  return w;
}

Result<size_t> SamplesCsvWriter::Append(const Sample& s) {
  auto wrote = file_.Append(FormatSampleRow(s, extra_));
  if (wrote) ++rows_;
  return wrote;
}

namespace {

// Where each column of the file goes: a fixed column's index, or kFixedColumns + the index of
// an extra column; and which column is the timestamp.
struct ColumnMap {
  std::vector<size_t> index;
  size_t timestamp = 0;
};

// "# units: a=W, b=C": each pair into series.units.
void ParseUnitsLine(std::string_view rest, SampleSeries& series) {
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view pair = Trim(rest.substr(0, comma));
    const size_t eq = pair.find('=');
    if (eq != std::string_view::npos && eq > 0) {
      series.units.emplace(std::string(pair.substr(0, eq)), std::string(pair.substr(eq + 1)));
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
}

// A comment before the column row (`body`: after the '#'): the "headroom samples" header,
// units or a note; others are ignored. An error for a header without a known schema_version.
std::optional<Error> ParseCommentLine(std::string_view body, size_t line_no, SampleSeries& series,
                                      bool& have_header) {
  if (body.starts_with("headroom samples")) {
    have_header = true;
    series.header = ParseHeaderPairs(body.substr(16));
    auto it = series.header.find("schema_version");
    auto v = it == series.header.end() ? std::nullopt : ParseNumber<int>(it->second);
    if (!v || *v < 1)
      return Error{Msg("samples: line {}: no schema_version in the header", line_no)};
    if (*v > kSamplesSchemaVersion) {
      return Error{
          Msg("samples: schema_version {} is newer than this reader's ({}); update headroom", *v,
              kSamplesSchemaVersion)};
    }
    series.schema_version = *v;
  } else if (body.starts_with("units:")) {
    ParseUnitsLine(body.substr(6), series);
  } else if (body.starts_with("note:")) {
    series.notes.emplace_back(Trim(body.substr(5)));
  }
  return std::nullopt;
}

// The column row: series.columns and extra_columns (with their units), and the map from the
// file's columns. Errors: a name twice, no timestamp column.
std::optional<Error> ParseColumnRow(std::string_view line, size_t line_no, std::string& scratch,
                                    SampleSeries& series, ColumnMap& map) {
  std::set<std::string, std::less<>> seen;
  bool have_timestamp = false;
  for (std::string_view f : SplitFields(line, scratch)) {
    std::string name(Trim(f));
    if (!seen.insert(name).second) {
      return Error{Msg("samples: line {}: column '{}' appears twice", line_no, name.substr(0, 64))};
    }
    size_t index = kFixedColumns;
    for (size_t i = 0; i < kFixedColumns; ++i) {
      if (kSampleColumns[i].name == name) index = i;
    }
    if (index == 0) {
      have_timestamp = true;
      map.timestamp = series.columns.size();
    }
    if (index == kFixedColumns) {
      index = kFixedColumns + series.extra_columns.size();
      auto unit = series.units.find(name);
      series.extra_columns.push_back(
          {name, unit == series.units.end() ? std::string() : unit->second});
    }
    map.index.push_back(index);
    series.columns.push_back(std::move(name));
  }
  if (!have_timestamp) return Error{Msg("samples: line {}: no 'timestamp' column", line_no)};
  return std::nullopt;
}

// A data row into series.samples; a row with NUL bytes, the wrong number of fields or no
// timestamp is counted in skipped_rows, a field that does not parse in bad_fields.
void ParseDataRow(std::string_view line, const ColumnMap& map, std::string& scratch,
                  const SampleRowFilter* keep, SampleSeries& series) {
  if (line.find('\0') != std::string_view::npos) {
    ++series.skipped_rows;
    return;
  }
  const auto fields = SplitFields(line, scratch);
  if (fields.size() != map.index.size()) {
    ++series.skipped_rows;
    return;
  }
  auto when = ParseIso8601WithOffset(Trim(fields[map.timestamp]));
  if (!when) {
    ++series.skipped_rows;
    return;
  }
  Sample s;
  s.time = *when;
  s.extra.resize(series.extra_columns.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i == map.timestamp) continue;
    const std::string_view f = Trim(fields[i]);
    if (map.index[i] < kFixedColumns) {
      if (!SetFixed(s, map.index[i], f)) ++series.bad_fields;
    } else if (!f.empty()) {
      auto v = ParseNumber<double>(f);
      if (!v) ++series.bad_fields;
      s.extra[map.index[i] - kFixedColumns] = v;
    }
  }
  ++series.rows;
  if (keep && !(*keep)(series, s)) return;
  series.samples.push_back(std::move(s));
}

// The reader's state between lines, so that a file is parsed as it is read (ReadSamplesCsv
// holds one block of it, not the whole text) and a string the same way (ParseSamplesCsv).
class SamplesCsvParser {
 public:
  explicit SamplesCsvParser(const SampleRowFilter* keep = nullptr) : keep_(keep) {}

  // One line without its '\n'; an error ends the parse.
  std::optional<Error> Line(std::string_view line) {
    ++line_no_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) return std::nullopt;
    if (line.front() == '#') {
      if (have_columns_) return std::nullopt;  // a comment among the rows: ignored
      return ParseCommentLine(Trim(line.substr(1)), line_no_, series_, have_header_);
    }
    if (have_columns_) {
      ParseDataRow(line, map_, scratch_, keep_, series_);
      return std::nullopt;
    }
    if (!have_header_) {
      return Error{
          Msg("samples: not a headroom samples file (no '# headroom samples' line before "
              "the columns)")};
    }
    have_columns_ = true;
    return ParseColumnRow(line, line_no_, scratch_, series_, map_);
  }

  // `torn`: the text ended without a '\n' after its last line, which was not read.
  Result<SampleSeries> Finish(bool torn) {
    series_.torn_last_line = torn;
    if (!have_header_)
      return Error{Msg("samples: not a headroom samples file (no '# headroom samples' line)")};
    if (!have_columns_) return Error{Msg("samples: no column row after the header")};
    return std::move(series_);
  }

  void Reserve(size_t rows) { series_.samples.reserve(rows); }

 private:
  const SampleRowFilter* keep_ = nullptr;
  SampleSeries series_;
  bool have_header_ = false;
  bool have_columns_ = false;
  ColumnMap map_;
  std::string scratch_;
  size_t line_no_ = 0;
};

// The number of '\n' in the file: its rows, to reserve them before the parse (a vector that
// doubles holds 1.5x its rows at the copy). A file that grows meanwhile only costs a copy.
// Read with pread, so the descriptor's offset stays at the start.
size_t CountLines(int fd) {
  size_t lines = 0;
  char buf[1 << 16];
  off_t offset = 0;
  for (;;) {
    const ssize_t got = ::pread(fd, buf, sizeof buf, offset);
    if (got <= 0) break;
    lines += static_cast<size_t>(std::count(buf, buf + got, '\n'));
    offset += got;
  }
  return lines;
}

}  // namespace

Result<SampleSeries> ParseSamplesCsv(std::string_view text) {
  SamplesCsvParser parser;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) return parser.Finish(/*torn=*/true);  // a write cut short
    if (auto error = parser.Line(text.substr(pos, nl - pos))) return *error;
    pos = nl + 1;
  }
  return parser.Finish(/*torn=*/false);
}

// Parsed block by block: memory is the samples, not the text (explain held 4.4x
// its samples file; bench/samples_memory.py has the figures).
Result<SampleSeries> ReadSamplesCsv(const std::filesystem::path& path, size_t max_bytes) {
  return ReadSamplesCsv(path, max_bytes, nullptr);
}

Result<SampleSeries> ReadSamplesCsv(const std::filesystem::path& path, size_t max_bytes,
                                    const SampleRowFilter& keep) {
  // Opened and type-checked once (base/safe_file.h), then read from that descriptor: a FIFO
  // swapped in after a check by name cannot block the reader.
  auto file = OpenInput(path.string());
  if (!file) return file.error();
  const int fd = file->get();
  SamplesCsvParser parser(keep ? &keep : nullptr);
  if (!keep) parser.Reserve(CountLines(fd));  // a filter keeps few: no count, no reserve
  std::string pending;                        // the line the last block ended inside
  size_t total = 0;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("samples: read(" + path.string() + ")");
    if (n == 0) break;
    const size_t got = static_cast<size_t>(n);
    total += got;
    if (total > max_bytes) {
      return Error{Msg("samples: {}: larger than {} bytes", path.string(), max_bytes)};
    }
    std::string_view block(buf, got);
    for (size_t nl = block.find('\n'); nl != std::string_view::npos; nl = block.find('\n')) {
      std::optional<Error> error;
      if (pending.empty()) {
        error = parser.Line(block.substr(0, nl));
      } else {
        pending.append(block.substr(0, nl));
        error = parser.Line(pending);
        pending.clear();
      }
      if (error) return InContext(path.string(), *error);
      block.remove_prefix(nl + 1);
    }
    pending.append(block);
  }
  auto series = parser.Finish(/*torn=*/!pending.empty());
  if (!series) return InContext(path.string(), series.error());
  return series;
}

}  // namespace headroom
