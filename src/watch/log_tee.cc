#include "watch/log_tee.h"

namespace headroom {

void LogTee::Emit(std::string* out) {
  if (pending_.empty()) return;
  out->append(FormatUtcIso8601(pending_arrival_));
  out->push_back(' ');
  out->append(pending_);
  out->push_back('\n');
  pending_.clear();
}

void LogTee::Feed(std::string_view bytes, WallTime arrival, std::string* out) {
  while (!bytes.empty()) {
    const size_t end = bytes.find_first_of("\r\n");
    const std::string_view piece = bytes.substr(0, end);
    size_t used = 0;
    while (used < piece.size()) {
      if (pending_.empty()) pending_arrival_ = arrival;
      const size_t room = kMaxSegmentBytes - pending_.size();
      const size_t n = std::min(room, piece.size() - used);
      pending_.append(piece.substr(used, n));
      used += n;
      if (pending_.size() >= kMaxSegmentBytes) Emit(out);
    }
    if (end == std::string_view::npos) break;
    Emit(out);  // the terminator ends the segment (an empty one writes nothing)
    bytes.remove_prefix(end + 1);
  }
}

void LogTee::Finish(std::string* out) { Emit(out); }

}  // namespace headroom
