// Implementation notes.
//  - Lines go through base/json_reader (strict RFC 8259, depth-capped, allocation only for
//    the strings kept), not nlohmann's DOM: the guard parses them in its loop, and a hostile
//    line must cost no more than its length.
//  - Unknown members are skipped (a newer companion may add fields without a schema bump);
//    a member of the wrong type is an error naming it. Numbers are checked for range, so a
//    record that parses is one the readers can use without checking again.
//  - CompanionTail reads with pread from the offset it has reached, opened O_NONBLOCK and
//    checked to be a regular file at each poll (the job could replace it with a FIFO).
#include "samples/companion_records.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "base/json_reader.h"

namespace headroom {
namespace {

enum class LineStatus : uint8_t { kOk, kBad, kOtherSchema };

// Strings kept from a record (a path, an error text) are cut to this many bytes.
constexpr size_t kMaxStringBytes = 4096;

std::optional<double> LiteralDouble(std::string_view literal) {
  double v = 0;
  const auto [end, ec] = std::from_chars(literal.data(), literal.data() + literal.size(), v);
  if (ec != std::errc() || end != literal.data() + literal.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

class LineParser {
 public:
  explicit LineParser(std::string_view line) : in_(line) {}

  LineStatus Parse(CompanionRecord& rec, Message& why) {
    bool have_schema = false, have_kind = false, have_pid = false, have_wall = false,
         have_mono = false;
    if (!in_.BeginObject()) return Bad(why, Msg("not a JSON object"));
    std::string key;
    while (in_.NextMember(&key)) {
      if (key == "schema") {
        std::string schema;
        if (!String(&schema)) return Bad(why, Msg("\"schema\" is not a string"));
        if (schema != kCompanionSchema) {
          why = Msg("schema {} is not {}", QuoteForMessage(schema), kCompanionSchema);
          return schema.starts_with("headroom.step/") ? LineStatus::kOtherSchema : LineStatus::kBad;
        }
        have_schema = true;
      } else if (key == "kind") {
        std::string kind;
        if (!String(&kind)) return Bad(why, Msg("\"kind\" is not a string"));
        if (kind == "start") {
          rec.kind = CompanionKind::kStart;
        } else if (kind == "step") {
          rec.kind = CompanionKind::kStep;
        } else if (kind == "save_start") {
          rec.kind = CompanionKind::kSaveStart;
        } else if (kind == "save_end") {
          rec.kind = CompanionKind::kSaveEnd;
        } else {
          return Bad(why, Msg("\"kind\" {} is not start, step, save_start or save_end",
                              QuoteForMessage(kind)));
        }
        have_kind = true;
      } else if (key == "pid") {
        std::optional<int64_t> pid;
        if (!Int(&pid) || !pid || *pid <= 0 || *pid > INT32_MAX) {
          return Bad(why, Msg("\"pid\" is not a positive integer"));
        }
        rec.pid = *pid;
        have_pid = true;
      } else if (key == "wall" || key == "mono") {
        std::optional<double> v;
        if (!Number(&v) || !v || *v < 0) {
          return Bad(why, Msg("\"{}\" is not a time in seconds", key));
        }
        (key == "wall" ? rec.wall_s : rec.mono_s) = *v;
        (key == "wall" ? have_wall : have_mono) = true;
      } else if (key == "rank" || key == "step" || key == "tokens") {
        std::optional<int64_t> v;
        if (!Int(&v) || (v && *v < 0)) {
          return Bad(why, Msg("\"{}\" is not a non-negative integer or null", key));
        }
        (key == "rank" ? rec.rank : key == "step" ? rec.step : rec.tokens) = v;
      } else if (key == "loss") {
        if (!Loss(&rec.loss)) return Bad(why, Msg("\"loss\" is not a number, nan, inf or null"));
      } else if (key == "lr" || key == "duration_s") {
        std::optional<double> v;
        if (!Number(&v) || (key == "duration_s" && v && *v < 0)) {
          return Bad(why, Msg("\"{}\" is not a number or null", key));
        }
        (key == "lr" ? rec.lr : rec.duration_s) = v;
      } else if (key == "allocated_bytes" || key == "reserved_bytes" ||
                 key == "peak_allocated_bytes" || key == "host_peak_rss_bytes") {
        std::optional<uint64_t> v;
        if (!Bytes(&v)) return Bad(why, Msg("\"{}\" is not a byte count or null", key));
        if (v && *v > kMaxRecordBytes) {
          return Bad(why, Msg("\"{}\" is out of range: more than {} bytes", key, kMaxRecordBytes));
        }
        (key == "allocated_bytes"        ? rec.allocated_bytes
         : key == "reserved_bytes"       ? rec.reserved_bytes
         : key == "peak_allocated_bytes" ? rec.peak_allocated_bytes
                                         : rec.host_peak_rss_bytes) = v;
      } else if (key == "signal") {
        std::optional<int64_t> v;
        if (!Int(&v) || (v && (*v < 1 || *v > 64))) {
          return Bad(why, Msg("\"signal\" is not a signal number (1-64) or null"));
        }
        if (v) rec.signal = static_cast<int>(*v);
      } else if (key == "request_file" || key == "ok") {
        bool b = false;
        if (in_.Peek() != JsonReader::Type::kBool || !in_.ReadBool(&b)) {
          return Bad(why, Msg("\"{}\" is not true or false", key));
        }
        (key == "ok" ? rec.ok : rec.request_file) = b;
      } else if (key == "framework" || key == "reason" || key == "path" || key == "error" ||
                 key == "source") {
        std::string* out = key == "framework" ? &rec.framework
                           : key == "reason"  ? &rec.reason
                           : key == "path"    ? &rec.path
                           : key == "error"   ? &rec.error
                                              : &rec.source;
        if (in_.Peek() == JsonReader::Type::kNull) {
          in_.ReadNull();
          out->clear();
        } else if (!String(out)) {
          return Bad(why, Msg("\"{}\" is not a string or null", key));
        }
        if (out->size() > kMaxStringBytes) out->resize(kMaxStringBytes);
      } else if (!in_.Skip()) {
        break;
      }
    }
    if (in_.failed() || !in_.Finish()) return Bad(why, Msg("not JSON: {}", in_.error()));
    if (!have_schema) return Bad(why, Msg("no \"schema\""));
    if (!have_kind) return Bad(why, Msg("no \"kind\""));
    if (!have_pid) return Bad(why, Msg("no \"pid\""));
    if (!have_wall || !have_mono) return Bad(why, Msg("no \"wall\" and \"mono\" times"));
    if (rec.kind == CompanionKind::kStep && !rec.step)
      return Bad(why, Msg("a step with no \"step\""));
    return LineStatus::kOk;
  }

 private:
  static LineStatus Bad(Message& why, Message what) {
    why = std::move(what);
    return LineStatus::kBad;
  }
  bool String(std::string* out) {
    return in_.Peek() == JsonReader::Type::kString && in_.ReadString(out);
  }
  // A number (or null: an empty optional); false on anything else.
  bool Number(std::optional<double>* out) {
    if (in_.Peek() == JsonReader::Type::kNull) return in_.ReadNull();
    std::string_view literal;
    if (in_.Peek() != JsonReader::Type::kNumber || !in_.ReadNumber(&literal)) return false;
    *out = LiteralDouble(literal);
    return out->has_value();
  }
  bool Int(std::optional<int64_t>* out) {
    if (in_.Peek() == JsonReader::Type::kNull) return in_.ReadNull();
    std::string_view literal;
    if (in_.Peek() != JsonReader::Type::kNumber || !in_.ReadNumber(&literal)) return false;
    *out = JsonInt64(literal);
    return out->has_value();
  }
  bool Bytes(std::optional<uint64_t>* out) {
    if (in_.Peek() == JsonReader::Type::kNull) return in_.ReadNull();
    std::string_view literal;
    if (in_.Peek() != JsonReader::Type::kNumber || !in_.ReadNumber(&literal)) return false;
    *out = JsonUint64(literal);
    return out->has_value();
  }
  // The companion writes a non-finite loss as "nan", "inf" or "-inf" (JSON has no NaN).
  bool Loss(std::optional<double>* out) {
    if (in_.Peek() == JsonReader::Type::kString) {
      std::string text;
      if (!in_.ReadString(&text)) return false;
      if (text == "nan") {
        *out = std::nan("");
      } else if (text == "inf") {
        *out = HUGE_VAL;
      } else if (text == "-inf") {
        *out = -HUGE_VAL;
      } else {
        return false;
      }
      return true;
    }
    return Number(out);
  }

  JsonReader in_;
};

LineStatus ParseLine(std::string_view line, CompanionRecord& rec, Message& why) {
  if (line.size() > kMaxCompanionLineBytes) {
    why = Msg("a line of {} bytes, over the {}-byte limit", line.size(), kMaxCompanionLineBytes);
    return LineStatus::kBad;
  }
  return LineParser(line).Parse(rec, why);
}

bool Blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

std::string_view CompanionKindName(CompanionKind kind) {
  switch (kind) {
    case CompanionKind::kStart:
      return "start";
    case CompanionKind::kStep:
      return "step";
    case CompanionKind::kSaveStart:
      return "save_start";
    case CompanionKind::kSaveEnd:
      return "save_end";
  }
  return "step";
}

Result<CompanionRecord> ParseCompanionRecord(std::string_view line) {
  CompanionRecord rec;
  Message why;
  if (ParseLine(line, rec, why) != LineStatus::kOk) return Error{std::move(why)};
  return rec;
}

CompanionRecords ParseCompanionRecords(std::string_view text) {
  CompanionRecords out;
  uint64_t number = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++number;
    if (Blank(line)) continue;
    CompanionRecord rec;
    Message why;
    switch (ParseLine(line, rec, why)) {
      case LineStatus::kOk:
        out.records.push_back(std::move(rec));
        break;
      case LineStatus::kOtherSchema:
        ++out.other_schema;
        break;
      case LineStatus::kBad:
        if (out.bad_lines++ == 0) {
          out.first_bad_line = number;
          out.first_error = std::move(why);
        }
        break;
    }
  }
  return out;
}

namespace {

// a + b, at most kMaxRecordBytes (each term bounded first, so the sum cannot wrap).
uint64_t BoundedSum(uint64_t a, uint64_t b) {
  return std::min(std::min(a, kMaxRecordBytes) + std::min(b, kMaxRecordBytes), kMaxRecordBytes);
}

}  // namespace

uint64_t CompanionPeak::total_bytes() const {
  return BoundedSum(allocator_peak_bytes, host_peak_bytes);
}

std::optional<CompanionPeak> PeakFromRecords(const CompanionRecords& records) {
  struct PerProcess {
    int64_t pid;
    uint64_t allocator, host;
  };
  std::vector<PerProcess> per;
  bool any = false, allocator = false;
  for (const CompanionRecord& r : records.records) {
    if (r.kind != CompanionKind::kStep) continue;
    if (!r.peak_allocated_bytes && !r.host_peak_rss_bytes) continue;
    any = true;
    auto it =
        std::find_if(per.begin(), per.end(), [&](const PerProcess& p) { return p.pid == r.pid; });
    if (it == per.end()) it = per.insert(per.end(), PerProcess{r.pid, 0, 0});
    if (r.peak_allocated_bytes) {
      allocator = true;
      it->allocator = std::max(it->allocator, *r.peak_allocated_bytes);
    }
    if (r.host_peak_rss_bytes) it->host = std::max(it->host, *r.host_peak_rss_bytes);
  }
  if (!any) return std::nullopt;
  CompanionPeak peak;
  peak.has_allocator = allocator;
  peak.processes = static_cast<int>(per.size());
  for (const auto& p : per) {
    peak.allocator_peak_bytes = BoundedSum(peak.allocator_peak_bytes, p.allocator);
    peak.host_peak_bytes = BoundedSum(peak.host_peak_bytes, p.host);
  }
  return peak;
}

std::vector<CompanionRecord> CompanionTail::Poll(size_t max_bytes) {
  std::vector<CompanionRecord> out;
  if (fd_.get() < 0)
    fd_ = FileFd(::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  struct stat st {};
  if (fd_.get() < 0 || ::fstat(fd_.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    fd_ = FileFd();
    return out;
  }
  if (static_cast<uint64_t>(st.st_size) == offset_) return out;
  if (static_cast<uint64_t>(st.st_size) < offset_) {  // truncated or replaced: start again
    offset_ = 0;
    partial_.clear();
    skipping_ = false;
  }
  char buf[16384];
  size_t budget = max_bytes;
  while (budget > 0) {
    const ssize_t n =
        ::pread(fd_.get(), buf, std::min(sizeof buf, budget), static_cast<off_t>(offset_));
    if (n <= 0) break;
    offset_ += static_cast<uint64_t>(n);
    budget -= static_cast<size_t>(n);
    std::string_view chunk(buf, static_cast<size_t>(n));
    while (!chunk.empty()) {
      const size_t nl = chunk.find('\n');
      const std::string_view piece = chunk.substr(0, nl);
      if (!skipping_) partial_.append(piece);
      if (partial_.size() > kMaxCompanionLineBytes) {
        partial_.clear();
        if (!skipping_) ++bad_lines_;
        skipping_ = true;
      }
      if (nl == std::string_view::npos) break;
      chunk.remove_prefix(nl + 1);
      if (!skipping_ && !Blank(partial_)) {
        CompanionRecord rec;
        Message why;
        if (ParseLine(partial_, rec, why) == LineStatus::kOk) {
          out.push_back(std::move(rec));
        } else {
          ++bad_lines_;
        }
      }
      partial_.clear();
      skipping_ = false;
    }
  }
  return out;
}

}  // namespace headroom
