// Implementation notes: the splitter finds line ends with memchr ('\n', then '\r' within the
// line), which glibc runs 16-32 bytes at a time on x86-64 and aarch64 alike, and hands each
// segment to Segment() without copying; only a segment cut by the end of a Feed is copied
// into pending_. Segment() strips the prefixes, then tries the formats by the segment's first
// and last bytes, so a noise line costs two memchr calls and a handful of byte compares:
//   '{' + '\''     HF dict         '{' + '"'       JSON line
//   "Step "        torchtune step  '[' or 'i'      Megatron
//   last byte ']'  tqdm bar        a digit         torchtune description alone
#include "explain/step_log.h"

#include <algorithm>
#include <cstring>

#include "explain/log_formats.h"
#include "explain/log_time.h"

namespace headroom {
namespace {

using step_log::IsDigit;
using step_log::IsSpace;

// The arrival prefix: an ISO 8601 time with a zone and a 'T', then one space. Returns the
// bytes it took (0: none).
size_t ReadArrivalPrefix(std::string_view s, WallTime* t) {
  if (s.size() < 21 || !IsDigit(s[0]) || s[4] != '-' || s[10] != 'T') return 0;
  const std::optional<LogTimestamp> ts = ParseLogTimestamp(s);
  if (!ts || !ts->has_zone || ts->length >= s.size() || s[ts->length] != ' ') return 0;
  *t = ts->time;
  return ts->length + 1;
}

// A rank number of a launcher tag: small, or it is not a rank.
std::optional<int> ReadRank(std::string_view digits) {
  const std::optional<int64_t> v = step_log::ToCount(digits);
  if (!v || *v > 1'000'000) return std::nullopt;
  return static_cast<int>(*v);
}

// One launcher tag (or an ANSI colour code, which Ray puts around its tag) at the start of
// `s`; returns the bytes it took (0: none). Tags, from the launchers' sources:
//   torchrun (torch.distributed.elastic, --tee or log_dir): "[default0]:", newer "[rank0]:"
//   OpenMPI --tag-output (mpirun, deepspeed's MPI runner): "[1,0]<stdout>:" (job, rank)
//   Ray: "(RayTrainWorker pid=1234)" or "(Name pid=1234, ip=10.0.0.1)", then a space
size_t ReadTag(std::string_view s, std::optional<int>* rank, std::optional<int64_t>* pid) {
  if (s.size() < 3) return 0;
  if (s[0] == '\x1b' && s[1] == '[') {  // SGR: ESC [ digits/';' m
    size_t p = 2;
    while (p < s.size() && p < 16 && (IsDigit(s[p]) || s[p] == ';')) ++p;
    return p < s.size() && s[p] == 'm' ? p + 1 : 0;
  }
  if (s[0] == '[') {
    const size_t close = s.substr(0, 24).find(']');
    if (close == std::string_view::npos) return 0;
    const std::string_view inside = s.substr(1, close - 1);
    const std::string_view after = s.substr(close + 1);
    for (std::string_view word : {std::string_view("default"), std::string_view("rank")}) {
      if (inside.starts_with(word) && after.starts_with(":")) {
        if (auto r = ReadRank(inside.substr(word.size()))) {
          *rank = r;
          return close + 2;
        }
      }
    }
    const size_t comma = inside.find(',');
    if (comma != std::string_view::npos && step_log::ToCount(inside.substr(0, comma)) &&
        (after.starts_with("<stdout>:") || after.starts_with("<stderr>:"))) {
      if (auto r = ReadRank(inside.substr(comma + 1))) {
        *rank = r;
        return close + 10;
      }
    }
    return 0;
  }
  if (s[0] == '(') {
    const size_t close = s.substr(0, 160).find(')');
    if (close == std::string_view::npos) return 0;
    std::string_view inside = s.substr(1, close - 1);
    // An optional actor name (one word), then "pid=N", then optional ", key=value" items.
    const size_t at = inside.find("pid=");
    if (at == std::string_view::npos || (at > 0 && inside[at - 1] != ' ')) return 0;
    if (inside.substr(0, at > 0 ? at - 1 : 0).find(' ') != std::string_view::npos) return 0;
    inside.remove_prefix(at + 4);
    const std::optional<int64_t> v = step_log::ToCount(inside.substr(0, inside.find(',')));
    if (!v) return 0;
    *pid = v;
    return close + 1 + (close + 1 < s.size() && s[close + 1] == ' ' ? 1 : 0);
  }
  return 0;
}

// Ray's log deduplication appends " [repeated 3x across cluster]" to a line it folded.
std::string_view StripRayRepeat(std::string_view s) {
  if (!s.ends_with(" across cluster]")) return s;
  const size_t at = s.rfind(" [repeated ");
  return at == std::string_view::npos ? s : s.substr(0, at);
}

}  // namespace

std::string_view StepLogFormatName(StepLogFormat format) {
  switch (format) {
    case StepLogFormat::kTqdm:
      return "tqdm";
    case StepLogFormat::kTorchtuneProgress:
      return "torchtune-progress";
    case StepLogFormat::kTorchtuneStep:
      return "torchtune-step";
    case StepLogFormat::kHfDict:
      return "hf-dict";
    case StepLogFormat::kMegatron:
      return "megatron";
    case StepLogFormat::kJsonLines:
      return "jsonl";
    case StepLogFormat::kUserPattern:
      return "regex";
    case StepLogFormat::kCompanion:
      return "headroom-step";
  }
  return "unknown";
}

StepLogParser::StepLogParser(StepLogOptions options) : options_(options) {}

void StepLogParser::Segment(std::string_view s, std::vector<StepRecord>* out) {
  WallTime arrival{};
  const size_t prefix = ReadArrivalPrefix(s, &arrival);
  const bool has_arrival = prefix > 0;
  s.remove_prefix(prefix);

  // Launcher tags apply to the whole physical line, so a tag on the first segment is kept
  // for the '\r' segments after it.
  std::optional<int> rank;
  std::optional<int64_t> pid;
  for (int i = 0; i < 6 && !s.empty() && (s[0] == '[' || s[0] == '(' || s[0] == '\x1b'); ++i) {
    const size_t used = ReadTag(s, &rank, &pid);
    if (used == 0) break;
    s.remove_prefix(used);
  }
  if (line_start_) {
    line_rank_ = rank;
    line_worker_pid_ = pid;
  } else {
    if (!rank) rank = line_rank_;
    if (!pid) pid = line_worker_pid_;
  }

  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  s = StripRayRepeat(s);
  const std::string_view body = step_log::TrimSpace(s);
  if (body.empty()) return;
  const char first = body[0];
  const bool maybe_tqdm = body.back() == ']';
  if (options_.pattern == nullptr && first != '{' && first != 'S' && first != '[' && first != 'i' &&
      !maybe_tqdm && !IsDigit(first)) {
    return;  // no format starts or ends so: most noise lines stop here
  }

  // Parsed in place at the end of *out, so a record is written once and never copied.
  StepRecord& r = out->emplace_back();
  uint64_t label_hash = 0;
  bool found = false;
  bool tried = false;  // a failed try may leave fields behind: reset before the next
  auto retry = [&] {
    if (tried) r = StepRecord{};
    tried = true;
  };
  if (options_.pattern != nullptr) {
    found = options_.pattern->Match(body, &r);
  } else {
    if (first == '{' && body.size() > 1) {
      retry();
      found = body[1] == '\'' ? step_log::ParseHfDict(body, &r)
                              : body[1] == '"' && step_log::ParseJsonLine(body, &r);
    } else if (first == 'S') {
      retry();
      found = step_log::ParseTorchtuneStep(body, &r);
    } else if (first == '[' || first == 'i') {
      retry();
      found = step_log::ParseMegatron(body, &r);
    }
    if (!found && maybe_tqdm) {
      retry();
      found = step_log::ParseTqdm(s, &r, &label_hash);
    }
    if (!found && IsDigit(first)) {
      retry();
      found = step_log::ParseTorchtuneProgress(body, &r);
    }
  }
  if (!found) {
    out->pop_back();
    return;
  }

  r.line = line_ + 1;
  r.rank = rank;
  r.worker_pid = pid;
  if (has_arrival) {
    r.arrival_time = arrival;
    if (!r.time) {
      r.time = arrival;
      r.time_source = StepTimeSource::kArrival;
    }
  }
  uint64_t h = step_log::HashMix(step_log::kHashSeed, static_cast<uint64_t>(r.format));
  h = step_log::HashMix(h, rank ? static_cast<uint64_t>(*rank) + 1 : 0);
  h = step_log::HashMix(h, pid ? static_cast<uint64_t>(*pid) + 1 : 0);
  h = step_log::HashMix(h, r.total_steps ? static_cast<uint64_t>(*r.total_steps) : 0);
  r.stream = step_log::HashMix(h, label_hash);
}

void StepLogParser::EndSegment(std::string_view s, bool newline, std::vector<StepRecord>* out) {
  if (discarding_) {
    discarding_ = false;  // the rest of a segment already counted in dropped_
  } else if (!pending_.empty()) {
    if (pending_.size() + s.size() > kMaxSegmentBytes) {
      ++dropped_;
    } else {
      pending_.append(s);
      Segment(pending_, out);
    }
  } else if (s.size() > kMaxSegmentBytes) {
    ++dropped_;
  } else {
    Segment(s, out);
  }
  pending_.clear();
  line_start_ = newline;
  if (newline) ++line_;
}

void StepLogParser::Feed(std::string_view bytes, std::vector<StepRecord>* out) {
  const char* const data = bytes.data();
  const size_t size = bytes.size();
  size_t pos = 0;
  while (pos < size) {
    const void* nl = std::memchr(data + pos, '\n', size - pos);
    const size_t line_end = nl ? static_cast<const char*>(nl) - data : size;
    while (true) {
      const void* cr = std::memchr(data + pos, '\r', line_end - pos);
      const size_t end = cr ? static_cast<const char*>(cr) - data : line_end;
      if (cr == nullptr && nl == nullptr) {
        // No terminator yet: keep the tail for the next Feed, unless it is already too long.
        const std::string_view tail(data + pos, size - pos);
        if (!discarding_ && pending_.size() + tail.size() > kMaxSegmentBytes) {
          pending_.clear();
          discarding_ = true;
          ++dropped_;
        } else if (!discarding_) {
          pending_.append(tail);
        }
        return;
      }
      EndSegment(std::string_view(data + pos, end - pos), cr == nullptr, out);
      pos = end + 1;
      if (cr == nullptr) break;
    }
  }
}

void StepLogParser::Finish(std::vector<StepRecord>* out) {
  if (!discarding_ && !pending_.empty()) Segment(pending_, out);
  pending_.clear();
  discarding_ = false;
  line_start_ = true;
}

std::vector<StepRecord> ParseStepLog(std::string_view text, StepLogOptions options) {
  std::vector<StepRecord> records;
  // Growing by doubling touches about twice the final memory (each move writes fresh pages),
  // which on the build VM cost more than the parse itself. A reserve for one record per 128
  // bytes (tqdm updates, the densest format, are about 100) costs nothing until touched;
  // capped at 4M records (768 MB of address space) so a huge log does not ask for it all.
  records.reserve(std::min<size_t>(text.size() / 128, size_t{4} << 20));
  StepLogParser parser(options);
  parser.Feed(text, &records);
  parser.Finish(&records);
  return records;
}

}  // namespace headroom
