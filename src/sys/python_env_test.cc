#include "sys/python_env.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "testing_files.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::WriteFile;

// Paths are compared as strings: gtest's printer recurses into std::filesystem::path.
std::vector<std::string> Strings(const std::vector<fs::path>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) out.push_back(p.string());
  return out;
}

// An executable stand-in for an interpreter (never run; FindPythonEnv only checks X_OK).
void WriteExecutable(const fs::path& path, fs::perms perms = static_cast<fs::perms>(0755)) {
  WriteFile(path, "#!/bin/sh\nexit 0\n");
  fs::permissions(path, perms, fs::perm_options::replace);
}

// An environment rooted at `prefix`, as FindPythonEnv builds it.
PythonEnv EnvAtPrefix(const fs::path& prefix) {
  PythonEnv env;
  env.prefix = prefix;
  env.found_by = "--python";
  env.site_dirs = SiteDirs(prefix);
  return env;
}

// torch 2.7.0's generated torch/version.py, CUDA 12.8 wheel.
constexpr std::string_view kTorchCu128VersionPy =
    "from typing import Optional\n"
    "\n"
    "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']\n"
    "__version__ = '2.7.0+cu128'\n"
    "debug = False\n"
    "cuda: Optional[str] = '12.8'\n"
    "git_version = '134179474539648ba7dee1317959529fbd0e7f89'\n"
    "hip: Optional[str] = None\n"
    "xpu: Optional[str] = None\n";

// --- torch/version.py -----------------------------------------------------------------

TEST(PythonEnv, TorchVersionPyCudaWheel) {
  auto b = ParseTorchVersionPy(kTorchCu128VersionPy);
  ASSERT_TRUE(b) << EnglishText(b.error().what);
  EXPECT_EQ(b->version, "2.7.0+cu128");
  ASSERT_TRUE(b->cuda);
  EXPECT_EQ(*b->cuda, "12.8");
  EXPECT_FALSE(b->hip);
}

TEST(PythonEnv, TorchVersionPyDoubleQuotesAndPlainAssignment) {
  // Older torch releases wrote `cuda = '...'` without the annotation.
  auto b = ParseTorchVersionPy(
      "__version__ = \"2.5.1+cu124\"\n"
      "debug = False\n"
      "cuda = \"12.4\"\n"
      "git_version = \"a8d6afb511a69687bbb2b7e88a3cf67917e1697e\"\n"
      "hip = None\n");
  ASSERT_TRUE(b) << EnglishText(b.error().what);
  EXPECT_EQ(b->version, "2.5.1+cu124");
  ASSERT_TRUE(b->cuda);
  EXPECT_EQ(*b->cuda, "12.4");
  EXPECT_FALSE(b->hip);
}

TEST(PythonEnv, TorchVersionPyCpuBuildHasNoCuda) {
  auto b = ParseTorchVersionPy(
      "__version__ = '2.7.0+cpu'\n"
      "cuda = None\n"
      "hip = None\n");
  ASSERT_TRUE(b) << EnglishText(b.error().what);
  EXPECT_EQ(b->version, "2.7.0+cpu");
  EXPECT_FALSE(b->cuda);
  EXPECT_FALSE(b->hip);
}

TEST(PythonEnv, TorchVersionPyRocmBuild) {
  auto b = ParseTorchVersionPy(
      "from typing import Optional\n"
      "__version__ = '2.7.0+rocm6.3'\n"
      "cuda: Optional[str] = None\n"
      "hip: Optional[str] = '6.3.42131-fa1d09cbd'\n");
  ASSERT_TRUE(b) << EnglishText(b.error().what);
  EXPECT_EQ(b->version, "2.7.0+rocm6.3");
  EXPECT_FALSE(b->cuda);
  ASSERT_TRUE(b->hip);
  EXPECT_EQ(*b->hip, "6.3.42131-fa1d09cbd");
}

TEST(PythonEnv, TorchVersionPyCrlf) {
  auto b = ParseTorchVersionPy("__version__ = '2.6.0+cu126'\r\ncuda: Optional[str] = '12.6'\r\n");
  ASSERT_TRUE(b) << EnglishText(b.error().what);
  EXPECT_EQ(b->version, "2.6.0+cu126");
  ASSERT_TRUE(b->cuda);
  EXPECT_EQ(*b->cuda, "12.6");
}

TEST(PythonEnv, TorchVersionPyWithoutVersionIsAnError) {
  auto b = ParseTorchVersionPy("cuda: Optional[str] = '12.8'\nhip = None\n");
  ASSERT_FALSE(b);
  EXPECT_FALSE(EnglishText(b.error().what).empty());
  EXPECT_FALSE(ParseTorchVersionPy(""));
  // A __version__ that is not a string literal is no version.
  EXPECT_FALSE(ParseTorchVersionPy("__version__ = None\n"));
  EXPECT_FALSE(ParseTorchVersionPy("__version__ = 2.7\n"));
  EXPECT_FALSE(ParseTorchVersionPy("__version__ = '2.7.0\n"));
  EXPECT_FALSE(ParseTorchVersionPy("__version__ = '2.7.0\"\n"));
  // Mentioning __version__ is not assigning it.
  EXPECT_FALSE(ParseTorchVersionPy("__all__ = ['__version__']\n"));
}

TEST(PythonEnv, TorchVersionPyGarbageIsAnErrorNotACrash) {
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary.push_back(static_cast<char>((i * 131 + 7) & 0xFF));
  EXPECT_FALSE(ParseTorchVersionPy(binary));
  EXPECT_FALSE(ParseTorchVersionPy(std::string("\0\0\0=\0'\0'", 8)));
  EXPECT_FALSE(ParseTorchVersionPy("===\n:=:\n'\n\"\n= '\n__version__ =\n__version__ = '\n"));
}

TEST(PythonEnv, TorchVersionPyVeryLongLines) {
  // A megabyte of junk before and after the real assignment does not hide it.
  const std::string junk(1 << 20, 'x');
  const std::string equals(1 << 20, '=');
  auto b = ParseTorchVersionPy(junk + "\n" + equals + "\n__version__ = '2.7.0'\n" + junk);
  ASSERT_TRUE(b) << EnglishText(b.error().what);
  EXPECT_EQ(b->version, "2.7.0");
  // A megabyte-long line alone is no version.
  EXPECT_FALSE(ParseTorchVersionPy("__version__ = '" + junk + "'\n" + junk));
}

// --- METADATA / PKG-INFO --------------------------------------------------------------

TEST(PythonEnv, DistMetadataHeaders) {
  auto d = ParseDistMetadata(
      "Metadata-Version: 2.1\n"
      "Name: flash_attn\n"
      "Version: 2.7.4.post1\n"
      "Summary: Flash Attention: Fast and Memory-Efficient Exact Attention\n"
      "Requires-Dist: torch\n"
      "\n"
      "# FlashAttention\n");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "flash_attn");
  EXPECT_EQ(d->version, "2.7.4.post1");
}

TEST(PythonEnv, DistMetadataHeadersEndAtFirstBlankLine) {
  // The description follows the blank line; a "Version:" there is prose, not a header.
  EXPECT_FALSE(ParseDistMetadata("Name: torch\n\nVersion: 2.7.0\n"));
  auto d = ParseDistMetadata(
      "Name: torch\n"
      "Version: 2.7.0\n"
      "\n"
      "Version: 9.9.9\n"
      "Name: evil\n");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "torch");
  EXPECT_EQ(d->version, "2.7.0");
}

TEST(PythonEnv, DistMetadataCrlf) {
  auto d = ParseDistMetadata(
      "Metadata-Version: 2.1\r\nName: numpy\r\nVersion: 2.2.4\r\n\r\nVersion: 1.0\r\n");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "numpy");
  EXPECT_EQ(d->version, "2.2.4");
  // A CRLF blank line ends the headers as well.
  EXPECT_FALSE(ParseDistMetadata("Name: numpy\r\n\r\nVersion: 2.2.4\r\n"));
}

TEST(PythonEnv, DistMetadataMissingOrEmptyFields) {
  EXPECT_FALSE(ParseDistMetadata("Metadata-Version: 2.1\nVersion: 1.0\n"));
  EXPECT_FALSE(ParseDistMetadata("Metadata-Version: 2.1\nName: x\n"));
  EXPECT_FALSE(ParseDistMetadata("Name: x\nVersion:\n"));
  EXPECT_FALSE(ParseDistMetadata("Name:   \nVersion: 1.0\n"));
  EXPECT_FALSE(ParseDistMetadata(""));
  EXPECT_FALSE(ParseDistMetadata("\nName: x\nVersion: 1.0\n"));
}

TEST(PythonEnv, DistMetadataKeysAreCaseInsensitive) {
  auto d = ParseDistMetadata("NAME: Triton\nversion: 3.3.0\n");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "Triton");
  EXPECT_EQ(d->version, "3.3.0");
}

TEST(PythonEnv, DistMetadataHostileText) {
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary.push_back(static_cast<char>((i * 37 + 11) & 0xFF));
  EXPECT_FALSE(ParseDistMetadata(binary));
  const std::string huge(1 << 20, 'a');
  EXPECT_FALSE(ParseDistMetadata(huge));
  // A name too long to be one is not taken.
  EXPECT_FALSE(ParseDistMetadata("Name: " + huge + "\nVersion: 1.0\n"));
  // A huge unrelated header does not hide the real ones.
  auto d = ParseDistMetadata("Summary: " + huge + "\nName: x\nVersion: 1.0\n");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "x");
}

// --- names and versions ---------------------------------------------------------------

TEST(PythonEnv, NormalizeDistName) {
  EXPECT_EQ(NormalizeDistName("Flash_Attn"), "flash-attn");
  EXPECT_EQ(NormalizeDistName("flash-attn"), "flash-attn");
  EXPECT_EQ(NormalizeDistName("flash..attn"), "flash-attn");
  EXPECT_EQ(NormalizeDistName("FLASH-_.ATTN"), "flash-attn");
  EXPECT_EQ(NormalizeDistName("nvidia-cuda-runtime-cu12"), "nvidia-cuda-runtime-cu12");
  EXPECT_EQ(NormalizeDistName(""), "");
}

TEST(PythonEnv, ParseMajorMinor) {
  auto v = ParseMajorMinor("12.8");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->first, 12);
  EXPECT_EQ(v->second, 8);
  auto w = ParseMajorMinor("13.0");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->first, 13);
  EXPECT_EQ(w->second, 0);
  EXPECT_FALSE(ParseMajorMinor("12"));
  EXPECT_FALSE(ParseMajorMinor("12."));
  EXPECT_FALSE(ParseMajorMinor("12.8.1"));
  EXPECT_FALSE(ParseMajorMinor("a.b"));
  EXPECT_FALSE(ParseMajorMinor("-1.2"));
  EXPECT_FALSE(ParseMajorMinor("12.-1"));
  EXPECT_FALSE(ParseMajorMinor(" 12.8"));
  EXPECT_FALSE(ParseMajorMinor("12.8 "));
  EXPECT_FALSE(ParseMajorMinor(""));
  EXPECT_FALSE(ParseMajorMinor("99999999999.1"));
}

// --- finding the environment ----------------------------------------------------------

TEST(PythonEnv, PythonFlagDirectoryWinsOverEverything) {
  TempDir tmp("pyenv-flag-dir");
  fs::create_directories(tmp / "flag");
  fs::create_directories(tmp / "venv");
  fs::create_directories(tmp / "conda");
  WriteExecutable(tmp / "usr" / "bin" / "python3");
  PythonEnvQuery q;
  q.python_flag = (tmp / "flag").string();
  q.virtual_env = (tmp / "venv").string();
  q.conda_prefix = (tmp / "conda").string();
  q.path = (tmp / "usr" / "bin").string();
  auto env = FindPythonEnv(q);
  ASSERT_TRUE(env) << EnglishText(env.error().what);
  EXPECT_EQ(env->prefix.string(), (tmp / "flag").string());
  EXPECT_EQ(env->found_by, "--python");
  EXPECT_TRUE(env->interpreter.empty());
}

TEST(PythonEnv, PythonFlagInterpreterPrefixIsParentOfBin) {
  TempDir tmp("pyenv-flag-interp");
  // A venv's python3 is a link to the system's; the prefix is the venv, not the target's.
  WriteExecutable(tmp / "system" / "bin" / "python3.12");
  fs::create_directories(tmp / "venv" / "bin");
  fs::create_directories(tmp / "venv" / "lib" / "python3.12" / "site-packages");
  fs::create_symlink(tmp / "system" / "bin" / "python3.12", tmp / "venv" / "bin" / "python3");
  fs::create_directories(tmp / "other");
  PythonEnvQuery q;
  q.python_flag = (tmp / "venv" / "bin" / "python3").string();
  q.virtual_env = (tmp / "other").string();
  auto env = FindPythonEnv(q);
  ASSERT_TRUE(env) << EnglishText(env.error().what);
  EXPECT_EQ(env->prefix.string(), (tmp / "venv").string());
  EXPECT_EQ(env->found_by, "--python");
  EXPECT_EQ(env->interpreter.string(), (tmp / "venv" / "bin" / "python3").string());
  EXPECT_EQ(
      Strings(env->site_dirs),
      std::vector<std::string>{(tmp / "venv" / "lib" / "python3.12" / "site-packages").string()});
}

TEST(PythonEnv, MissingPythonFlagIsAnError) {
  TempDir tmp("pyenv-flag-missing");
  fs::create_directories(tmp / "venv");
  PythonEnvQuery q;
  q.python_flag = (tmp / "does-not-exist" / "bin" / "python3").string();
  q.virtual_env = (tmp / "venv").string();  // no fallback when --python names nothing
  auto env = FindPythonEnv(q);
  ASSERT_FALSE(env);
  EXPECT_TRUE(EnglishText(env.error().what).starts_with("--python:"))
      << EnglishText(env.error().what);
  EXPECT_NE(EnglishText(env.error().what).find("does-not-exist"), std::string::npos)
      << EnglishText(env.error().what);
}

TEST(PythonEnv, VirtualEnvBeforeCondaPrefix) {
  TempDir tmp("pyenv-venv");
  fs::create_directories(tmp / "venv");
  fs::create_directories(tmp / "conda");
  WriteExecutable(tmp / "usr" / "bin" / "python3");
  PythonEnvQuery q;
  q.virtual_env = (tmp / "venv").string();
  q.conda_prefix = (tmp / "conda").string();
  q.path = (tmp / "usr" / "bin").string();
  auto env = FindPythonEnv(q);
  ASSERT_TRUE(env) << EnglishText(env.error().what);
  EXPECT_EQ(env->prefix.string(), (tmp / "venv").string());
  EXPECT_EQ(env->found_by, "$VIRTUAL_ENV");
}

TEST(PythonEnv, CondaPrefixBeforePath) {
  TempDir tmp("pyenv-conda");
  fs::create_directories(tmp / "conda");
  WriteExecutable(tmp / "usr" / "bin" / "python3");
  PythonEnvQuery q;
  q.conda_prefix = (tmp / "conda").string();
  q.path = (tmp / "usr" / "bin").string();
  auto env = FindPythonEnv(q);
  ASSERT_TRUE(env) << EnglishText(env.error().what);
  EXPECT_EQ(env->prefix.string(), (tmp / "conda").string());
  EXPECT_EQ(env->found_by, "$CONDA_PREFIX");
}

TEST(PythonEnv, Python3OnPath) {
  TempDir tmp("pyenv-path");
  // The first directory's python3 cannot be executed, so the search goes on.
  WriteExecutable(tmp / "noexec" / "python3", static_cast<fs::perms>(0644));
  WriteExecutable(tmp / "usr" / "bin" / "python3");
  fs::create_directories(tmp / "usr" / "lib" / "python3" / "dist-packages");
  PythonEnvQuery q;
  q.path = (tmp / "missing").string() + "::" + (tmp / "noexec").string() + ":" +
           (tmp / "usr" / "bin").string();
  auto env = FindPythonEnv(q);
  ASSERT_TRUE(env) << EnglishText(env.error().what);
  EXPECT_EQ(env->prefix.string(), (tmp / "usr").string());
  EXPECT_EQ(env->found_by, "python3 on PATH");
  EXPECT_EQ(env->interpreter.string(), (tmp / "usr" / "bin" / "python3").string());
  EXPECT_EQ(Strings(env->site_dirs),
            std::vector<std::string>{(tmp / "usr" / "lib" / "python3" / "dist-packages").string()});
}

TEST(PythonEnv, NothingFoundIsAnError) {
  TempDir tmp("pyenv-none");
  fs::create_directories(tmp / "empty");
  PythonEnvQuery q;
  q.path = (tmp / "empty").string() + ":" + (tmp / "missing").string();
  EXPECT_FALSE(FindPythonEnv(q));
  EXPECT_FALSE(FindPythonEnv(PythonEnvQuery{}));
}

// --- site directories and distributions -----------------------------------------------

TEST(PythonEnv, SiteDirsInSearchOrder) {
  TempDir tmp("pyenv-sitedirs");
  const fs::path& prefix = tmp.path();
  fs::create_directories(prefix / "lib" / "python3.12" / "site-packages");
  fs::create_directories(prefix / "lib" / "python3.11" / "site-packages");
  fs::create_directories(prefix / "lib" / "python3" / "dist-packages");
  fs::create_directories(prefix / "lib" / "python3.10" / "other");  // no site directory
  WriteFile(prefix / "lib" / "python3.13", "a file, not a directory");
  EXPECT_EQ(Strings(SiteDirs(prefix)),
            (std::vector<std::string>{(prefix / "lib" / "python3.11" / "site-packages").string(),
                                      (prefix / "lib" / "python3.12" / "site-packages").string(),
                                      (prefix / "lib" / "python3" / "dist-packages").string()}));
  EXPECT_TRUE(SiteDirs(prefix / "missing").empty());
}

TEST(PythonEnv, FindDistributionDistInfo) {
  TempDir tmp("pyenv-dist");
  const fs::path site = tmp / "lib" / "python3.12" / "site-packages";
  const fs::path metadata = site / "flash_attn-2.7.4.post1.dist-info" / "METADATA";
  WriteFile(metadata,
            "Metadata-Version: 2.1\nName: flash_attn\nVersion: 2.7.4.post1\n\nVersion: 0.0.1\n");
  WriteFile(site / "flash_attn" / "__init__.py", "__version__ = '2.7.4.post1'\n");
  WriteFile(site / "torch-2.7.0+cu128.dist-info" / "METADATA",
            "Name: torch\nVersion: 2.7.0+cu128\n");
  const PythonEnv env = EnvAtPrefix(tmp.path());
  ASSERT_EQ(env.site_dirs.size(), 1u);

  for (const char* asked : {"flash-attn", "flash_attn", "Flash-Attn"}) {
    auto d = FindDistribution(env, asked);
    ASSERT_TRUE(d) << asked;
    EXPECT_EQ(d->name, "flash_attn");
    EXPECT_EQ(d->version, "2.7.4.post1");
    EXPECT_EQ(d->metadata.string(), metadata.string());
  }
  auto torch = FindDistribution(env, "torch");
  ASSERT_TRUE(torch);
  EXPECT_EQ(torch->version, "2.7.0+cu128");
  EXPECT_FALSE(FindDistribution(env, "flash"));
  EXPECT_FALSE(FindDistribution(env, "xformers"));
}

TEST(PythonEnv, FindDistributionEggInfo) {
  TempDir tmp("pyenv-egg");
  const fs::path site = tmp / "lib" / "python3" / "dist-packages";
  const fs::path pkg_info = site / "apex-0.1-py3.12.egg-info" / "PKG-INFO";
  WriteFile(pkg_info, "Metadata-Version: 2.1\nName: apex\nVersion: 0.1\n");
  const PythonEnv env = EnvAtPrefix(tmp.path());
  auto d = FindDistribution(env, "apex");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name, "apex");
  EXPECT_EQ(d->version, "0.1");
  EXPECT_EQ(d->metadata.string(), pkg_info.string());
}

TEST(PythonEnv, FindDistributionNameMustAgreeWithMetadata) {
  TempDir tmp("pyenv-disagree");
  const fs::path site = tmp / "lib" / "python3.12" / "site-packages";
  WriteFile(site / "flash_attn-2.7.4.dist-info" / "METADATA",
            "Name: something-else\nVersion: 2.7.4\n");
  const PythonEnv env = EnvAtPrefix(tmp.path());
  EXPECT_FALSE(FindDistribution(env, "flash-attn"));
  EXPECT_FALSE(FindDistribution(env, "something-else"));
}

TEST(PythonEnv, FindDistributionFirstSiteDirWins) {
  TempDir tmp("pyenv-first");
  WriteFile(tmp / "lib" / "python3.12" / "site-packages" / "numpy-2.2.4.dist-info" / "METADATA",
            "Name: numpy\nVersion: 2.2.4\n");
  WriteFile(tmp / "lib" / "python3" / "dist-packages" / "numpy-1.26.4.dist-info" / "METADATA",
            "Name: numpy\nVersion: 1.26.4\n");
  const PythonEnv env = EnvAtPrefix(tmp.path());
  ASSERT_EQ(env.site_dirs.size(), 2u);
  auto d = FindDistribution(env, "numpy");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->version, "2.2.4");
}

TEST(PythonEnv, FindTorchBuild) {
  TempDir tmp("pyenv-torch");
  fs::create_directories(tmp / "lib" / "python3.12" / "site-packages");
  const PythonEnv without = EnvAtPrefix(tmp.path());
  EXPECT_FALSE(FindTorchBuild(without).has_value());

  const fs::path file = tmp / "lib" / "python3.12" / "site-packages" / "torch" / "version.py";
  WriteFile(file, kTorchCu128VersionPy);
  const PythonEnv with = EnvAtPrefix(tmp.path());
  auto b = FindTorchBuild(with);
  ASSERT_TRUE(b.has_value());
  ASSERT_TRUE(*b) << EnglishText(b->error().what);
  EXPECT_EQ((*b)->version, "2.7.0+cu128");
  ASSERT_TRUE((*b)->cuda);
  EXPECT_EQ(*(*b)->cuda, "12.8");
  EXPECT_EQ((*b)->file.string(), file.string());
}

TEST(PythonEnv, FindTorchBuildWithoutVersionIsAnError) {
  TempDir tmp("pyenv-torch-bad");
  const fs::path file = tmp / "lib" / "python3.12" / "site-packages" / "torch" / "version.py";
  WriteFile(file, "# not torch's\ncuda = '12.8'\n");
  const PythonEnv env = EnvAtPrefix(tmp.path());
  auto b = FindTorchBuild(env);
  ASSERT_TRUE(b.has_value());
  ASSERT_FALSE(*b);
  // The message names the file (docs/style.md rule 9).
  EXPECT_NE(EnglishText(b->error().what).find("version.py"), std::string::npos)
      << EnglishText(b->error().what);
}

}  // namespace
}  // namespace headroom
