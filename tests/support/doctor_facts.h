// Test helper (tests only): literal doctor facts for the checks' unit tests, a GB10 machine
// and its parts, shared by src/doctor/checks_test.cc and src/cli/translated_results_test.cc.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "doctor/checks.h"

namespace headroom::testing {

inline GpuReading Gpu(const char* name, int cuda, int cc_major, int cc_minor) {
  GpuReading g;
  g.name = name;
  g.cuda_driver_version = cuda;
  g.compute_capability_major = cc_major;
  g.compute_capability_minor = cc_minor;
  return g;
}

inline DoctorFacts Gb10Facts() {
  DoctorFacts f;
  f.arch = "aarch64";
  f.gpus = {Gpu("NVIDIA GB10", 13000, 12, 1)};
  f.platform = DetectPlatform(f.gpus);
  f.python = PythonEnv{"/venv", "--python", {}, {}};
  return f;
}

inline TorchBuild Torch(const char* version, std::optional<std::string> cuda) {
  TorchBuild t;
  t.version = version;
  t.cuda = std::move(cuda);
  t.file = "/venv/lib/python3.12/site-packages/torch/version.py";
  return t;
}

}  // namespace headroom::testing
