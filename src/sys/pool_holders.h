// Pool holders: the processes that hold the unified memory pool, or will grab it, beside a
// training job: inference servers (vLLM, SGLang, Ollama, llama.cpp, TGI, TensorRT-LLM),
// trainers and launchers (TRL, Axolotl, torchrun, accelerate, DeepSpeed), Ray workers,
// Python with torch loaded, and whatever NVML lists as a GPU user.
//
// Detection reads the command line, not the process name alone: servers run as `python3`,
// and a setproctitle'd worker ("VLLM::EngineCore", "ray::RayWorkerWrapper") only says what
// it is in argv[0]. It matches the program, never a word anywhere in the line, so
// `tail -f vllm.log` is not a vLLM server. See docs/ps.md for the table of rules.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/gpu.h"
#include "sys/process_survey.h"
#include "sys/sysroot.h"

namespace headroom {

enum class HolderKind {
  kVllm,
  kSglang,
  kOllama,
  kLlamaCpp,
  kTgi,
  kTensorRtLlm,
  kTrl,
  kAxolotl,
  kTorchrun,
  kAccelerate,
  kDeepspeed,
  kRayWorker,
  kPythonTorch,  // python with libtorch mapped, matched by nothing above
  kGpuProcess,   // listed by NVML, matched by nothing above
};

// "vllm", "llama.cpp", "python (torch loaded)", ...: the names FindLeftovers always printed.
std::string_view HolderKindName(HolderKind kind);

// What a command line says it is, from argv alone; nullopt for anything else (including a
// bare python, which needs its maps to tell). `looks_like_python` is set when argv[0] is a
// Python interpreter, so the caller knows whether to read maps.
std::optional<HolderKind> ClassifyCommand(const std::vector<std::string>& argv,
                                          bool* looks_like_python = nullptr);

// argv split on blanks: setproctitle and `exec -a` put a whole command line into one
// argument ("vllm serve m --gpu-memory-utilization 0.9"). Flag values that matter here are
// numbers, which hold no blanks.
std::vector<std::string> CommandWords(const std::vector<std::string>& argv);

struct PoolHolder {
  ProcessFacts facts;
  HolderKind kind = HolderKind::kGpuProcess;
  std::string user;                   // name from etc/passwd, else the uid, else "?"
  std::optional<uint64_t> gpu_bytes;  // NVML's used memory, summed over devices
  bool in_gpu_list = false;           // NVML listed this pid
  bool in_proc = true;                // false: NVML pid with no proc/PID (other namespace)
  // The topmost holder among this one's ancestors: a vLLM EngineCore under `vllm serve`, a
  // torch worker under torchrun. Its memory counts with that holder's, and its cap is that
  // holder's (workers carry no flags of their own).
  std::optional<pid_t> part_of;
};

// One scan of proc/ below `root`, plus NVML's compute processes (`gpu`: nullopt when NVML
// was not available). `self` (the caller's pid) is left out. Ordered by pid.
std::vector<PoolHolder> FindPoolHolders(const SysRoot& root,
                                        const std::optional<std::vector<GpuProcess>>& gpu,
                                        pid_t self);

// The command a person would type to stop a holder, printed, never run: `systemctl stop
// NAME` for a system service (cgroup .../NAME.service), `systemctl --user stop NAME` for a
// user service, `docker stop ID` for a container, else `kill -TERM PID`.
std::string StopCommand(const PoolHolder& holder);

// argv joined for display, control bytes as '?', and the values of flags that carry
// secrets (--api-key, --hf-token, ...) shown as "***".
std::string DisplayCommand(const ProcessFacts& facts);

}  // namespace headroom
