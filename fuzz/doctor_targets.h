// The body of the doctor inputs fuzz target (fuzz/doctor_inputs_fuzz.cc), shared with
// tests/fuzz_corpus_test.cc, which replays fuzz/corpus/doctor_inputs/ in every build.
// Returns false when an invariant breaks (see doctor_inputs_fuzz.cc for the list).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "doctor/distributed.h"
#include "doctor/fleet.h"
#include "doctor/parallel_config.h"
#include "sys/container.h"
#include "sys/loader_libs.h"
#include "sys/python_env.h"

namespace headroom::fuzz {

inline bool DoctorInputsHold(std::string_view text) {
  const size_t size = text.size();

  if (auto torch = headroom::ParseTorchVersionPy(text)) {
    // A version was found: it came from a non-empty string literal on one line.
    if (torch->version.find('\n') != std::string::npos) return false;
  }

  if (auto dist = headroom::ParseDistMetadata(text)) {
    if (dist->name.empty() || dist->name.size() > 256) return false;
    if (dist->version.empty() || dist->version.size() > 256) return false;
  }

  for (const auto& s : headroom::ScanParallelSettings(text)) {
    if (s.value < 0 || s.value > 999'999'999) return false;
    if (s.line < 1 || s.line > size + 1) return false;
    if (s.key.empty() || s.key.size() > 64) return false;
  }

  std::string line;
  const std::string runtime = headroom::RuntimeFromCgroup(text, &line);
  if (!runtime.empty() && line.size() > 200) return false;
  (void)headroom::RootIsOverlay(text);

  const std::string normalized = headroom::NormalizeDistName(text);
  if (normalized.find_first_of("_.") != std::string::npos) return false;
  if (normalized.find("--") != std::string::npos) return false;
  if (normalized.size() > size) return false;

  if (auto mm = headroom::ParseMajorMinor(text)) {
    if (mm->first < 0 || mm->second < 0) return false;
  }

  // doctor --compare's env-report.json reader and G11's slurm.conf and library names.
  if (auto node = headroom::ParseEnvReport(text, "fuzz.json")) {
    if (node->host.empty()) return false;  // the file name stands in for a missing host
  }
  if (auto kill = headroom::ParseKillOnBadExit(text)) {
    if (text.find('=') == std::string_view::npos) return false;
  }
  const std::string nccl = headroom::LibraryFileVersion(text, "libnccl.so");
  if (!nccl.empty() && (!text.starts_with("libnccl.so.") ||
                        nccl.find_first_not_of("0123456789.") != std::string::npos))
    return false;

  const int major = headroom::LibraryMajor(text, "libcudart.so");
  if (major < -1 || major > 1000) return false;
  if (major >= 0 && !text.starts_with("libcudart.so.")) return false;
  return true;
}

}  // namespace headroom::fuzz
