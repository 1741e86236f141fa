// Gathers DoctorFacts once, from the system below a SysRoot, NVML, libcuda, the Python
// environment and the config files named on the command line. Every source that fails is
// recorded as its error text in the facts (the check then says skip or info), never thrown.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/settings.h"
#include "doctor/checks.h"
#include "sys/sysroot.h"

namespace headroom {

struct GatherOptions {
  std::string nvml_lib;  // "" = libnvidia-ml.so.1
  std::string cuda_lib;  // "" = libcuda.so.1
  PythonEnvQuery python;
  std::vector<std::string> configs;
  // Environment variables, read by the CLI.
  std::optional<std::string> torch_cuda_arch_list;
  std::optional<std::string> world_size;
  std::optional<std::string> nnodes;
  std::optional<std::string> container_env;
  // G11: those of kDistributedEnvNames (doctor/distributed.h) that are set; SLURM_CONF.
  std::map<std::string, std::string, std::less<>> distributed_env;
  std::optional<std::string> slurm_conf;
  // G5: measure at all, and how much.
  bool measure_bandwidth = true;
  HostCopyOptions host_copy;
  uint64_t device_copy_bytes = 256ULL << 20;
  int device_repeats = 5;
  pid_t self = 0;  // left out of the holders
  // The user's word on the platform (config.toml [platform]), applied to what is detected.
  PlatformOverride platform;
};

// doctor's G5 defaults: 256 MiB buffers copied 5 times, on one thread per CPU (a second or
// so on GB10's 20 cores).
GatherOptions DoctorGatherOptions();

// The environment variables the checks read, through `getenv` (the CLI passes std::getenv,
// tests a table): $VIRTUAL_ENV, $CONDA_PREFIX and $PATH for the Python environment,
// TORCH_CUDA_ARCH_LIST (G7), WORLD_SIZE and NNODES (G10), container (G9). Set but empty
// counts as unset.
void SetGatherEnvironment(GatherOptions& options, const GetEnvFn& getenv);

DoctorFacts GatherFacts(const SysRoot& root, const GatherOptions& options);

}  // namespace headroom
