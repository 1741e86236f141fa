// The body of the guard group's message fuzz target (src/group/group_message.h), shared by
// fuzz/group_message_fuzz.cc and tests/fuzz_corpus_test.cc. Returns false when an invariant
// breaks: a frame decodes only if it re-encodes to the same bytes (so nothing outside the
// authenticated layout is accepted), errors are one line, and FrameLength agrees with the
// bounds.
#pragma once

#include <string_view>

#include "fuzz_targets.h"
#include "group/group_message.h"

namespace headroom::fuzz {

// The seeds in fuzz/corpus/group_message/ are framed under this secret and job id.
inline constexpr std::string_view kGroupFuzzSecret = "fuzz-secret-0123456789";
inline constexpr std::string_view kGroupFuzzJob = "job-1";

inline bool GroupMessageHolds(std::string_view bytes) {
  const auto length = group::FrameLength(bytes);
  if (!length) {
    if (!OneLine(length.error(), "group message: ")) return false;
  } else if (*length && (**length < group::kMinFrameBytes || **length > group::kMaxFrameBytes)) {
    return false;
  }
  const auto decoded = group::DecodeMessage(bytes, kGroupFuzzSecret, kGroupFuzzJob);
  if (!decoded) return OneLine(decoded.error(), "group message: ");
  const auto again = group::EncodeMessage(*decoded, kGroupFuzzSecret);
  return again && *again == bytes;
}

}  // namespace headroom::fuzz
