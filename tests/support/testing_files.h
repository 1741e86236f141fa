// Test helpers (tests only): reading a file whole, paths in the source tree, a temporary folder, a
// file writer, and safetensors files built at run time. Data sections are made with ftruncate, so a
// "16 GB" checkpoint is a sparse file that costs no disk and proves that readers never touch tensor
// data.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "sys/sysroot.h"

namespace headroom::testing {

// A path in the source tree (HEADROOM_SOURCE_DIR, set by the build), as a string.
inline std::string SourcePath(std::string_view relative) {
  return std::string(HEADROOM_SOURCE_DIR) + "/" + std::string(relative);
}

// The whole of a file, as bytes; "" when it cannot be opened.
inline std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Whether `part` occurs in `text`.
inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A fixture: tests/fixtures/<relative> (a /proc and /sys tree, a log, a config file).
inline std::string FixturePath(std::string_view relative) {
  return SourcePath("tests/fixtures/" + std::string(relative));
}

// The fixtures folder, ending in '/': kFixtures + "gb10-idle".
inline const std::string kFixtures = FixturePath("");

// A fixture machine's tree as a SysRoot: FixtureRoot("gb10-idle").
inline SysRoot FixtureRoot(std::string_view name) { return SysRoot(FixturePath(name)); }

// A field of a fixture machine's /proc/meminfo ("MemAvailable"), in bytes; 0 when absent.
inline uint64_t FixtureMeminfoBytes(const std::string& tree, const std::string& field) {
  std::ifstream in(kFixtures + tree + "/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1)) * 1024;
  }
  return 0;
}

// A fresh folder under the system's temporary directory, "headroom-TAG-PID-N", removed with
// everything in it when the object goes. The one temporary folder of the tests: unit tests
// use path() and operator/, the CLI tests File() (a string, for an argument list).
class TempDir {
 public:
  explicit TempDir(std::string_view tag = "test") {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("headroom-" + std::string(tag) + "-" + std::to_string(::getpid()) + "-" +
             std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    // A test may take its own write permission away (a read-only journal's folder).
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }
  std::string File(std::string_view name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void WriteFile(const std::filesystem::path& path, std::string_view bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The 8-byte little-endian length prefix of a safetensors file.
inline std::string LengthPrefix(uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out;
}

// Writes prefix + header, then extends the file to hold `data_bytes` more (sparse zeros).
inline void WriteSafetensors(const std::filesystem::path& path, std::string_view header,
                             uint64_t data_bytes) {
  WriteFile(path, LengthPrefix(header.size()) + std::string(header));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    (void)!::ftruncate(fd, static_cast<off_t>(8 + header.size() + data_bytes));
    ::close(fd);
  }
}

}  // namespace headroom::testing
