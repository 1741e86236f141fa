// The memory cap a pool holder was started with, read from its arguments and (where
// readable) its environment: vLLM --gpu-memory-utilization, SGLang --mem-fraction-static,
// TGI --cuda-memory-fraction / CUDA_MEMORY_FRACTION, a torch job under `headroom guard
// --torch-cap` (HEADROOM_TORCH_CAP_BYTES); and the settings that size Ollama and llama.cpp.
//
// None of these fractions is a hard cap on unified memory: vLLM's startup profiling and
// CUDA-graph capture, SGLang's autotune, go past them (public reports:
// vllm#46307, sglang#35860). The notes say so; the advice still uses them, as the best
// figure there is for a server already past its startup.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/message.h"
#include "sys/pool_holders.h"

namespace headroom {

// A setting shown beside the holder: "--ctx-size" = "8192" (from "argv"), or
// "OLLAMA_NUM_PARALLEL" = "4" (from "environ").
struct HolderSetting {
  std::string name;
  std::string value;
  std::string source;  // "argv", "environ", "default"
};

struct HolderCap {
  // A fraction of the pool (MemTotal on unified memory) the holder sizes itself to.
  std::optional<double> pool_fraction;
  // A cap in bytes (the guard's torch cap).
  std::optional<uint64_t> cap_bytes;
  // Where the cap came from: "--gpu-memory-utilization", "CUDA_MEMORY_FRACTION",
  // "vLLM default", "HEADROOM_TORCH_CAP_BYTES".
  std::string source;
  // llama.cpp: model and KV cache are allocated at load and do not grow, so what it holds
  // now is its size.
  bool fixed_after_load = false;
  // llama.cpp with --n-gpu-layers 0: everything is host memory, visible in its RSS.
  bool cpu_only = false;
  std::vector<HolderSetting> settings;
  std::vector<Message> notes;  // for people
};

// The value of a long or short flag: "--flag value", "--flag=value"; the last one wins (as
// argparse and clap do). `names` are the spellings, e.g. {"--ctx-size", "-c"}.
std::optional<std::string> FlagValue(const std::vector<std::string>& words,
                                     const std::vector<std::string>& names);
// Whether a value-less flag ("--no-mmap") is present.
bool HasFlag(const std::vector<std::string>& words, const std::vector<std::string>& names);

// A fraction in (0, 1] from text ("0.5", "0.50"); nullopt otherwise.
std::optional<double> ParseFraction(const std::string& text);

// The cap of one holder from its command words (CommandWords(argv)) and environment
// (nullopt: unreadable, which the notes say).
HolderCap ParseHolderCap(HolderKind kind, const std::vector<std::string>& words,
                         const std::optional<std::map<std::string, std::string>>& environ);

// The caps of `holders`, in order. A part (a server's worker) has no flags of its own, so its
// cap is empty: its holder's is the one that counts.
std::vector<HolderCap> HolderCaps(const std::vector<PoolHolder>& holders);

}  // namespace headroom
