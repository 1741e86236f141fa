// Implementation notes: only 64-bit ELF of this machine's byte order is checked (the only kind
// dlopen maps here); offsets are compared against the size without adding first where a sum
// could wrap (a hostile e_phoff near 2^64). The file is read with pread on the descriptor
// OpenInput checked, so the file checked is the file read.
#include "gpu/library_file.h"

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cstring>

#include "base/result.h"
#include "base/safe_file.h"

namespace headroom {
namespace {

constexpr unsigned char kNativeData =
    std::endian::native == std::endian::little ? ELFDATA2LSB : ELFDATA2MSB;

// off + len within size, without the sum wrapping.
bool Within(uint64_t off, uint64_t len, uint64_t size) { return off <= size && len <= size - off; }

Message Truncated(std::string_view what, uint64_t end, uint64_t size) {
  // TRANSLATORS: {0} is "its program headers" or "segment N" (untranslated), {1} and {2}
  // byte counts.
  return Msg("a truncated ELF file: {0} up to byte {1}, beyond its {2} bytes", std::string(what),
             end, size);
}

}  // namespace

std::optional<Message> CheckElfImage(std::string_view header, std::string_view program_headers,
                                     uint64_t file_size) {
  if (header.size() < EI_NIDENT || std::memcmp(header.data(), ELFMAG, SELFMAG) != 0)
    return Msg("not an ELF file");
  if (static_cast<unsigned char>(header[EI_CLASS]) != ELFCLASS64 ||
      static_cast<unsigned char>(header[EI_DATA]) != kNativeData)
    return std::nullopt;  // dlopen names the wrong class or byte order itself
  Elf64_Ehdr eh{};
  if (header.size() < sizeof eh) return Truncated("its ELF header", sizeof eh, file_size);
  std::memcpy(&eh, header.data(), sizeof eh);
  if (eh.e_phnum == 0 || eh.e_phentsize != sizeof(Elf64_Phdr)) return std::nullopt;  // dlopen's
  const uint64_t table_bytes = uint64_t{eh.e_phnum} * eh.e_phentsize;
  if (!Within(eh.e_phoff, table_bytes, file_size) || program_headers.size() < table_bytes) {
    const uint64_t end = eh.e_phoff > file_size ? eh.e_phoff : eh.e_phoff + table_bytes;
    return Truncated("its program headers", end, file_size);
  }
  for (uint16_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    std::memcpy(&ph, program_headers.data() + uint64_t{i} * sizeof ph, sizeof ph);
    if (ph.p_filesz == 0 || Within(ph.p_offset, ph.p_filesz, file_size)) continue;
    const uint64_t end = ph.p_offset > file_size ? ph.p_offset : ph.p_offset + ph.p_filesz;
    return Truncated("segment " + std::to_string(i), end, file_size);
  }
  return std::nullopt;
}

std::optional<Message> CheckLibraryFile(const std::string& path) {
  if (path.find('/') == std::string::npos) return std::nullopt;  // the loader searches for it
  auto fd = OpenInput(path);
  if (!fd) return fd.error().what;
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return ErrnoError("fstat(" + path + ")").what;
  const auto size = static_cast<uint64_t>(st.st_size);
  std::string header(sizeof(Elf64_Ehdr), '\0');
  const ssize_t got = ::pread(fd->get(), header.data(), header.size(), 0);
  if (got < 0) return ErrnoError("read(" + path + ")").what;
  header.resize(static_cast<size_t>(got));
  std::string table;
  if (header.size() == sizeof(Elf64_Ehdr)) {
    Elf64_Ehdr eh{};
    std::memcpy(&eh, header.data(), sizeof eh);
    const uint64_t bytes = uint64_t{eh.e_phnum} * eh.e_phentsize;  // at most 4 MiB
    if (Within(eh.e_phoff, bytes, size)) {
      table.resize(bytes);
      const ssize_t n =
          ::pread(fd->get(), table.data(), table.size(), static_cast<off_t>(eh.e_phoff));
      table.resize(n < 0 ? 0 : static_cast<size_t>(n));
    }
  }
  if (auto wrong = CheckElfImage(header, table, size)) return InContext(path, Error{*wrong}).what;
  return std::nullopt;
}

}  // namespace headroom
