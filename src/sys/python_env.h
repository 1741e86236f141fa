// The Python environment a training job will run in, read without running Python: where
// its site-packages are, which distributions are installed (from *.dist-info/METADATA or
// *.egg-info/PKG-INFO), and what torch/version.py says torch was built against.
//
// Not importing torch is the point: `import torch` takes seconds, can itself fail with the
// very ABI error `doctor` wants to explain (libcudart.so.12 not found), and initialises CUDA.
//
// Environment variables are the CLI's to read (docs/architecture.md): the caller passes their
// values in PythonEnvQuery.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace headroom {

struct PythonEnvQuery {
  std::string python_flag;                  // --python: an interpreter or an environment's prefix
  std::optional<std::string> virtual_env;   // $VIRTUAL_ENV
  std::optional<std::string> conda_prefix;  // $CONDA_PREFIX
  std::optional<std::string> path;          // $PATH, searched for python3
};

struct PythonEnv {
  std::filesystem::path prefix;  // /home/u/venv, /opt/conda/envs/x, /usr
  std::string found_by;          // "--python", "$VIRTUAL_ENV", "$CONDA_PREFIX", "python3 on PATH"
  std::filesystem::path interpreter;  // empty when only a prefix was given
  // The directories distributions are installed into, in search order; may be empty (then
  // nothing is installed as far as this scan can tell).
  std::vector<std::filesystem::path> site_dirs;
};

// The environment: --python, else $VIRTUAL_ENV, else $CONDA_PREFIX, else python3 on $PATH.
// --python may name an interpreter (PREFIX/bin/python3, not resolved through symlinks: a
// venv's python is a link to the system's) or a prefix directory. An error when --python
// names nothing, when python3 on PATH is a pyenv/asdf shim (a script that picks the
// interpreter when run), or when no environment is found at all.
Result<PythonEnv> FindPythonEnv(const PythonEnvQuery& query);

// The site directories below `prefix`: lib/python3*/site-packages, lib/python3*/dist-packages,
// lib64/python3*/site-packages, local/lib/python3*/dist-packages, lib/python3/dist-packages,
// the ones that exist, sorted within each pattern.
std::vector<std::filesystem::path> SiteDirs(const std::filesystem::path& prefix);

// A distribution's normalized name (PEP 503): lower case, runs of '-', '_' and '.' as one '-'.
std::string NormalizeDistName(std::string_view name);

struct Distribution {
  std::string name;                // as METADATA spells it ("flash_attn")
  std::string version;             // "2.7.4.post1"
  std::filesystem::path metadata;  // the METADATA or PKG-INFO file read
};

// The "Name:" and "Version:" headers of a METADATA / PKG-INFO text (RFC 822 style; headers
// end at the first blank line). nullopt when either is missing or empty. Hostile text
// (binary, huge lines) gives nullopt, never a crash.
std::optional<Distribution> ParseDistMetadata(std::string_view text);

// Finds an installed distribution by name (normalized on both sides) in the environment's
// site directories: NAME-VERSION.dist-info/METADATA or NAME-VERSION.egg-info/PKG-INFO. The
// first site directory that has it wins.
std::optional<Distribution> FindDistribution(const PythonEnv& env, std::string_view name);

// What torch/version.py says.
struct TorchBuild {
  std::string version;              // __version__: "2.7.0+cu128"
  std::optional<std::string> cuda;  // cuda: "12.8"; nullopt for a CPU or ROCm build
  std::optional<std::string> hip;   // hip: "6.3.42131"; nullopt unless a ROCm build
  std::filesystem::path file;
};

// Parses the assignments torch's build writes into version.py:
//   __version__ = '2.7.0+cu128'
//   cuda: Optional[str] = '12.8'
//   hip: Optional[str] = None
// Single or double quotes; None means absent. An error when there is no __version__.
Result<TorchBuild> ParseTorchVersionPy(std::string_view text);

// Finds torch/version.py in the site directories and parses it; nullopt when torch is not
// installed there; an error when the file is there but unreadable or not torch's.
std::optional<Result<TorchBuild>> FindTorchBuild(const PythonEnv& env);

// "12.8" -> {12, 8}; nullopt for anything else.
std::optional<std::pair<int, int>> ParseMajorMinor(std::string_view text);

}  // namespace headroom
