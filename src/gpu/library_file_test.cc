#include "gpu/library_file.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/message.h"
#include "gpu/nvml.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::Slurp;
using testing::TempDir;

// The fake NVML (a real shared library) cut to `bytes`.
std::string TruncatedLibrary(const TempDir& dir, size_t bytes) {
  const std::string whole = Slurp(HEADROOM_FAKE_NVML_PATH);
  const std::string path = dir.File("libtruncated.so");
  testing::WriteFile(path, whole.substr(0, bytes));
  return path;
}

TEST(LibraryFile, ARealLibraryPasses) {
  EXPECT_FALSE(CheckLibraryFile(HEADROOM_FAKE_NVML_PATH));
  EXPECT_FALSE(CheckLibraryFile("libnvidia-ml.so.1"));  // the loader's to search
}

TEST(LibraryFile, ATruncatedLibraryIsRefusedBeforeDlopen) {
  TempDir dir("library-file");
  // 8 KiB: inside the second loaded segment (code), whatever debug sections follow them.
  ASSERT_GT(Slurp(HEADROOM_FAKE_NVML_PATH).size(), 16384u);
  const std::string path = TruncatedLibrary(dir, 8192);
  auto wrong = CheckLibraryFile(path);
  ASSERT_TRUE(wrong);
  const std::string text = EnglishText(*wrong);
  EXPECT_EQ(text.rfind(path + ": a truncated ELF file: segment ", 0), 0u) << text;
  // And the NVML loader says so instead of dying of SIGBUS inside dlopen.
  auto nvml = Nvml::Open(path);
  ASSERT_FALSE(nvml);
  EXPECT_EQ(EnglishText(nvml.error().what), "nvml: dlopen(" + path + "): " + text);
}

TEST(LibraryFile, AHeaderOnlyStubAndNonElfFilesAreNamed) {
  TempDir dir("library-file");
  const std::string stub = TruncatedLibrary(dir, 100);  // the ELF header, no program headers
  auto wrong = CheckLibraryFile(stub);
  ASSERT_TRUE(wrong);
  EXPECT_NE(EnglishText(*wrong).find("a truncated ELF file: its program headers up to byte"),
            std::string::npos);
  testing::WriteFile(dir / "text.so", "not a library\n");
  auto text = CheckLibraryFile(dir.File("text.so"));
  ASSERT_TRUE(text);
  EXPECT_EQ(EnglishText(*text), dir.File("text.so") + ": not an ELF file");
}

TEST(LibraryFile, AFifoIsRefusedWithoutWaiting) {
  TempDir dir("library-file");
  ASSERT_EQ(::mkfifo(dir.File("lib.so").c_str(), 0600), 0);
  auto wrong = CheckLibraryFile(dir.File("lib.so"));
  ASSERT_TRUE(wrong);
  EXPECT_EQ(EnglishText(*wrong), dir.File("lib.so") + ": a FIFO, not a regular file");
}

TEST(LibraryFile, HostileOffsetsDoNotWrap) {
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = 1;
  eh.e_phoff = ~uint64_t{0} - 8;  // phoff + size wraps to a small number
  const std::string header(reinterpret_cast<const char*>(&eh), sizeof eh);
  EXPECT_TRUE(CheckElfImage(header, "", 4096));
  Elf64_Phdr ph{};
  ph.p_type = PT_LOAD;
  ph.p_offset = 4096;
  ph.p_filesz = ~uint64_t{0};
  eh.e_phoff = sizeof eh;
  const std::string image = std::string(reinterpret_cast<const char*>(&eh), sizeof eh);
  const std::string table(reinterpret_cast<const char*>(&ph), sizeof ph);
  auto wrong = CheckElfImage(image, table, 8192);
  ASSERT_TRUE(wrong);
  EXPECT_NE(EnglishText(*wrong).find("segment 0"), std::string::npos);
}

}  // namespace
}  // namespace headroom
