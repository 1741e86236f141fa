// The body of the ELF image fuzz target (fuzz/elf_image_fuzz.cc), shared with
// tests/fuzz_corpus_test.cc, which replays fuzz/corpus/elf_image/ in every build. The input
// is a file's first bytes: the first 64 are the ELF header, the rest the program header
// table. Returns false when an invariant breaks: CheckElfImage's answer, at any claimed file
// size, is nothing or one non-empty line.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/message.h"
#include "gpu/library_file.h"

namespace headroom::fuzz {

inline bool ElfImageHolds(std::string_view bytes) {
  const size_t header = std::min<size_t>(bytes.size(), 64);
  for (const uint64_t size : {uint64_t{bytes.size()}, uint64_t{0}, ~uint64_t{0}}) {
    const auto wrong = CheckElfImage(bytes.substr(0, header), bytes.substr(header), size);
    if (!wrong) continue;
    const std::string text = EnglishText(*wrong);
    if (text.empty() || text.find('\n') != std::string::npos) return false;
  }
  return true;
}

}  // namespace headroom::fuzz
