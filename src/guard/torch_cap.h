// --torch-cap: a catchable OOM before the pool runs out, where the job is PyTorch.
//
// The guard puts a directory holding a small sitecustomize.py first on the job's
// PYTHONPATH. Once the job imports torch, it calls torch.cuda.set_per_process_memory_fraction
// so that the caching allocator raises torch.OutOfMemoryError (which the training script can
// catch, checkpoint and exit) before MemAvailable reaches the guard's kill level. The
// fraction is (MemAvailable at start - kill level) / the device's total memory. A
// sitecustomize the job already had is found further along sys.path and run first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace headroom {

struct TorchCap {
  std::string dir;               // holds sitecustomize.py; removed by Remove()
  std::vector<std::string> env;  // PYTHONPATH=..., HEADROOM_TORCH_CAP_BYTES=...
  void Remove() const;
};

// The same sitecustomize also carries `guard --hooks` (HEADROOM_HOOKS=1 in the job's
// environment: it imports the companion, python/headroom/_hooks.py); with a cap of 0 it sets
// no fraction.
//
// Writes the hook under `tmp_dir` and returns the environment the job needs.
// `existing_pythonpath` is the job's PYTHONPATH (may be empty).
Result<TorchCap> InstallTorchCap(const std::string& tmp_dir, uint64_t cap_bytes,
                                 const std::string& existing_pythonpath);

}  // namespace headroom
