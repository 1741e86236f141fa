// A shared library named by path (--nvml-lib, --cuda-lib) checked before dlopen sees it.
//
// dlopen maps a library's segments as its program headers describe them; a file cut short (a
// partial copy, a full disk) maps pages past its end, and the first touch of one kills the
// process with SIGBUS inside the loader, where no error can be returned. So the file is
// opened as an input (a regular file only: a FIFO would hang dlopen's open), its ELF header
// read, and every program header and loaded segment checked to lie within the file's size.
// A file that is not 64-bit ELF of this machine's byte order is left to dlopen, whose error
// names it ("wrong ELF class", "invalid ELF header") without touching the segments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/message.h"

namespace headroom {

// What is wrong with an ELF image of `file_size` bytes whose first bytes are `header` (at
// least the ELF header; the program header table too when it is to be checked) and whose
// program header table is `program_headers` (the bytes at e_phoff, e_phnum * e_phentsize of
// them, or fewer when the file ends sooner); nullopt when nothing is.
std::optional<Message> CheckElfImage(std::string_view header, std::string_view program_headers,
                                     uint64_t file_size);

// The checks above on the file `path` (a name without '/' is the loader's to search and is
// not checked); nullopt when dlopen may be given it.
std::optional<Message> CheckLibraryFile(const std::string& path);

}  // namespace headroom
