// LogTee: a job's output stream cut into segments at every '\n' and '\r', each written to the
// `headroom watch --log` file as one line with the time it arrived:
//
//   2026-11-29T10:00:00.123Z <the segment's bytes>\n
//
// This is version 1 of the arrival prefix that `headroom explain` reads (kArrivalPrefix in
// explain/step_log.h): FormatUtcIso8601(arrival), one space, the segment, '\n'; a '\r' that
// ended the segment becomes that '\n'. tqdm writing to a pipe ends each update with '\r'
// (and starts it with one), so splitting on both is what gives every update its own time.
//
// The arrival of a segment is the arrival of its FIRST byte: tqdm writes "\r<bar>" in one
// go, so the terminator of one update arrives with the next one, a whole update later.
// Empty segments (the "\r\n" pair, tqdm's leading '\r') are not written: they carry no text
// and no time worth keeping. A segment longer than kMaxSegmentBytes is written in pieces of
// that size (explain drops a segment that long anyway); the pending buffer stays bounded.
// Pure: the caller reads the pipe, passes the bytes through and writes what comes out.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/wall_time.h"

namespace headroom {

class LogTee {
 public:
  static constexpr size_t kMaxSegmentBytes = 64 * 1024;

  // Appends to *out the stamped lines of the segments that `bytes` completes. `arrival` is
  // when `bytes` were read.
  void Feed(std::string_view bytes, WallTime arrival, std::string* out);
  // End of the stream: a last segment without a terminator is written too.
  void Finish(std::string* out);

  bool pending() const { return !pending_.empty(); }

 private:
  void Emit(std::string* out);

  std::string pending_;  // the current segment's bytes so far
  WallTime pending_arrival_{};
};

}  // namespace headroom
