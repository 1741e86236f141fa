// Internal to explain/: the recognisers of the built-in log formats and the number readers
// they share. Each Parse* takes one segment with the arrival prefix and launcher tags
// already removed and a default-constructed *r, returns false quickly when the segment is not
// its format, and on a match fills the fields its format carries (the caller sets line, tags,
// arrival time and stream). They write *r in place, so a failed try may leave fields set: the
// caller resets *r before trying another format. None allocates.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include "explain/step_record.h"

namespace headroom::step_log {

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsSpace(char c) { return c == ' ' || c == '\t'; }
inline bool IsAsciiLetter(char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }

inline std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// The whole of `s` as a decimal integer in [0, INT64_MAX]: digits only, no sign, no space.
std::optional<int64_t> ToCount(std::string_view s);

// The whole of `s` as a double (std::from_chars: decimal or e-notation, "nan", "inf",
// "infinity" in any case, a leading '-'; also a leading '+'). nullopt for anything else and
// for values past the range of a double ("1e309"), which from_chars reports and we refuse.
std::optional<double> ToDouble(std::string_view s);

// A finite value > 0, the only kind a rate or a duration may take.
inline std::optional<double> Positive(std::optional<double> v) {
  if (v && std::isfinite(*v) && *v > 0) return v;
  return std::nullopt;
}

// A tqdm count or rate: a number with an optional SI prefix (k M G T P E Z Y, tqdm's
// format_sizeof), "1.23k" -> 1230. nullopt unless the whole of `s` is one.
std::optional<double> ToScaled(std::string_view s);

// "MM:SS" or "H:MM:SS" (tqdm's format_interval; hours may pass 24; the first field has at
// most 10 digits), as seconds.
std::optional<double> ToClockSeconds(std::string_view s);

// 2200-01-01T00:00:00Z in Unix seconds: a WallTime counts nanoseconds in an int64, which
// ends in April 2262, so later times (and a year 5000 typo) must be refused, not converted.
inline constexpr double kMaxUnixSeconds = 7258118400.0;

// Unix seconds as a WallTime, rounded to the microsecond (a double holds 1.7e9 s to about
// 0.2 us, so truncating would turn "...400.25" into "...400.249999"); nullopt outside
// [0, kMaxUnixSeconds).
inline std::optional<WallTime> UnixTime(double seconds) {
  if (!(seconds >= 0 && seconds < kMaxUnixSeconds)) return std::nullopt;
  const auto us = std::chrono::microseconds(std::llround(seconds * 1e6));
  return WallTime(std::chrono::duration_cast<WallTime::duration>(us));
}

// For StepRecord::stream: a multiply-xorshift mix of one 64-bit word (the finaliser of
// MurmurHash3 after an xor), a few instructions where byte-wise FNV-1a took a loop of 8.
inline uint64_t HashMix(uint64_t h, uint64_t v) {
  h = (h ^ v) * 0xFF51AFD7ED558CCDULL;
  return h ^ (h >> 32);
}
inline constexpr uint64_t kHashSeed = 0xCBF29CE484222325ULL;  // FNV-1a's offset basis

// The ASCII letters of `s`, hashed: the identity of a tqdm bar's description with its
// changing numbers ("Epoch 3", "1|25|Loss: 1.2") and the bar itself left out.
uint64_t HashLetters(uint64_t h, std::string_view s);

// The formats (explain/tqdm_line.cc, explain/dict_lines.cc, explain/metric_lines.cc).
bool ParseTqdm(std::string_view s, StepRecord* r, uint64_t* label_hash);
bool ParseTorchtuneProgress(std::string_view s, StepRecord* r);  // "1|25|Loss: 1.23" alone
bool ParseHfDict(std::string_view s, StepRecord* r);
bool ParseJsonLine(std::string_view s, StepRecord* r);
bool ParseMegatron(std::string_view s, StepRecord* r);
bool ParseTorchtuneStep(std::string_view s, StepRecord* r);

// Reads "{epoch}|{global_step}|Loss: {loss}" at the start of `s` (torchtune's tqdm
// description); returns the bytes it took, 0 when `s` does not start with one.
size_t ReadTorchtuneDescription(std::string_view s, StepRecord* r);

}  // namespace headroom::step_log
