// Fuzz target for the outside text `headroom doctor` reads: torch/version.py, a
// distribution's METADATA, training and serving configs (tensor-parallel settings),
// /proc/1/cgroup and /proc/1/mountinfo, distribution names, "MAJOR.MINOR" versions and
// shared-library file names, env-report.json (doctor --compare) and slurm.conf. Invariants: no
// crash; a parallel setting has a value in [0, 999999999] (at most 9 digits), a 1-based line and a
// key of 1 to 64 characters; a parsed METADATA has a name and a version of 1 to 256 characters; a
// normalized distribution name has no '_', '.' or "--"; a library major is -1 or in [0, 1000]; a
// parsed env-report.json has a host; a library file version is digits and dots.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "doctor_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!headroom::fuzz::DoctorInputsHold(
          std::string_view(reinterpret_cast<const char*>(data), size)))
    std::abort();
  return 0;
}
