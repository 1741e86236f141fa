#include "sys/loader_libs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "testing_files.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::WriteFile;

std::vector<std::string> Paths(const std::vector<SharedLibFile>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.path);
  return out;
}

TEST(LoaderLibs, LibraryMajor) {
  EXPECT_EQ(LibraryMajor("libcudart.so.12", "libcudart.so"), 12);
  EXPECT_EQ(LibraryMajor("libcudart.so.12.8.90", "libcudart.so"), 12);
  EXPECT_EQ(LibraryMajor("libcudart.so.13.0.48", "libcudart.so"), 13);
  EXPECT_EQ(LibraryMajor("libcudart.so.0", "libcudart.so"), 0);
  EXPECT_EQ(LibraryMajor("libcudart.so", "libcudart.so"), -1);
  EXPECT_EQ(LibraryMajor("libcudart.so.", "libcudart.so"), -1);
  EXPECT_EQ(LibraryMajor("libcudart.so.x", "libcudart.so"), -1);
  EXPECT_EQ(LibraryMajor("libcudart.so.12abc", "libcudart.so"), -1);
  EXPECT_EQ(LibraryMajor("libcudart.so.-1", "libcudart.so"), -1);
  EXPECT_EQ(LibraryMajor("libcudart.so.99999999999", "libcudart.so"), -1);
  EXPECT_EQ(LibraryMajor("libcudart_static.a", "libcudart.so"), -1);
  // Another library whose name starts with the stem is not this one.
  EXPECT_EQ(LibraryMajor("libcudart.so_12", "libcudart.so"), -1);
  EXPECT_EQ(LibraryMajor("libcudart.sox.12", "libcudart.so"), -1);
  EXPECT_EQ(LibraryMajor("libcudnn.so.9", "libcudart.so"), -1);
  EXPECT_EQ(LibraryMajor("", "libcudart.so"), -1);
}

TEST(LoaderLibs, LoaderDirectoriesFollowIncludes) {
  TempDir tmp("loader-conf");
  WriteFile(tmp / "etc" / "ld.so.conf",
            "# libc default configuration\n"
            "include /etc/ld.so.conf.d/*.conf\n"
            "\n"
            "include local.conf\n"
            "/opt/direct/lib  # a trailing comment\n"
            "   /usr/local/cuda/lib64/   \n"
            "relative/dir\n"
            "# /commented/out\n");
  WriteFile(tmp / "etc" / "ld.so.conf.d" / "cuda-12-8.conf",
            "/usr/local/cuda-12.8/targets/sbsa-linux/lib\n");
  // Includes itself: the walk ends at the depth limit and lists its directory once.
  WriteFile(tmp / "etc" / "ld.so.conf.d" / "loop.conf",
            "include /etc/ld.so.conf.d/loop.conf\n/opt/loop/lib\n");
  WriteFile(tmp / "etc" / "ld.so.conf.d" / "README", "/not/a/conf/file\n");
  // Relative include: taken from etc/.
  WriteFile(tmp / "etc" / "local.conf", "/opt/local/lib\n/opt/direct/lib\n");
  fs::create_directories(tmp / "usr" / "lib" / "aarch64-linux-gnu");

  const std::vector<std::string> expected = {
      "/usr/local/cuda-12.8/targets/sbsa-linux/lib",
      "/opt/loop/lib",
      "/opt/local/lib",
      "/opt/direct/lib",
      "/usr/local/cuda/lib64",
      "/lib",
      "/usr/lib",
      "/lib64",
      "/usr/lib64",
      "/usr/lib/aarch64-linux-gnu",
  };
  EXPECT_EQ(LoaderDirectories(SysRoot(tmp.path())), expected);
}

TEST(LoaderLibs, MutuallyIncludingConfsTerminate) {
  TempDir tmp("loader-cycle");
  WriteFile(tmp / "etc" / "ld.so.conf", "include ld.so.conf.d/*.conf\n");
  // Every file includes every file: the walk is bounded by depth and file count.
  WriteFile(tmp / "etc" / "ld.so.conf.d" / "a.conf", "include /etc/ld.so.conf.d/*.conf\n/opt/a\n");
  WriteFile(tmp / "etc" / "ld.so.conf.d" / "b.conf", "include /etc/ld.so.conf.d/*.conf\n/opt/b\n");
  WriteFile(tmp / "etc" / "ld.so.conf.d" / "c.conf", "include /etc/ld.so.conf.d/*.conf\n/opt/c\n");
  const auto dirs = LoaderDirectories(SysRoot(tmp.path()));
  for (const char* d : {"/opt/a", "/opt/b", "/opt/c", "/lib", "/usr/lib"}) {
    EXPECT_EQ(std::count(dirs.begin(), dirs.end(), std::string(d)), 1) << d;
  }
}

TEST(LoaderLibs, DefaultDirectoriesWithoutConfig) {
  TempDir tmp("loader-empty");
  const std::vector<std::string> expected = {"/lib", "/usr/lib", "/lib64", "/usr/lib64"};
  EXPECT_EQ(LoaderDirectories(SysRoot(tmp.path())), expected);
}

TEST(LoaderLibs, FindLibraryMajorsGroupsBySoname) {
  TempDir tmp("loader-find");
  const fs::path cuda12 = tmp / "usr" / "local" / "cuda-12.8" / "lib64";
  const fs::path cuda13 = tmp / "usr" / "local" / "cuda-13.0" / "lib64";
  WriteFile(cuda12 / "libcudart.so.12.8.90", "");
  WriteFile(cuda12 / "libcudart.so.12", "");
  WriteFile(cuda12 / "libcudart.so", "");
  WriteFile(cuda12 / "libcudart_static.a", "");
  WriteFile(cuda12 / "libcublas.so.12", "");
  WriteFile(cuda13 / "libcudart.so.13.0.48", "");
  // The soname link is what the loader registers: symlinks count.
  fs::create_symlink("libcudart.so.13.0.48", cuda13 / "libcudart.so.13");

  const std::vector<std::string> dirs = {"/usr/local/cuda-13.0/lib64", "/usr/local/cuda-12.8/lib64",
                                         "/does/not/exist"};
  const auto found = FindLibraryMajors(SysRoot(tmp.path()), dirs, "libcudart.so");
  ASSERT_EQ(found.size(), 2u);
  ASSERT_TRUE(found.contains(12));
  ASSERT_TRUE(found.contains(13));
  EXPECT_EQ(Paths(found.at(12)),
            (std::vector<std::string>{"/usr/local/cuda-12.8/lib64/libcudart.so.12",
                                      "/usr/local/cuda-12.8/lib64/libcudart.so.12.8.90"}));
  EXPECT_EQ(Paths(found.at(13)),
            (std::vector<std::string>{"/usr/local/cuda-13.0/lib64/libcudart.so.13",
                                      "/usr/local/cuda-13.0/lib64/libcudart.so.13.0.48"}));
  for (const auto& [major, files] : found) {
    for (const auto& f : files) EXPECT_EQ(f.major, major) << f.path;
  }
  EXPECT_TRUE(FindLibraryMajors(SysRoot(tmp.path()), dirs, "libcudnn.so").empty());
  EXPECT_TRUE(FindLibraryMajors(SysRoot(tmp.path()), {}, "libcudart.so").empty());
}

}  // namespace
}  // namespace headroom
