// Which pool holders can stay beside a job of a given size, and which should stop first: a
// pure function of the holders, their caps, the job's need and MemTotal.
//
// The rule, with its arithmetic printed for every holder (docs/ps.md):
//   budget = MemTotal - reserve, reserve = the guard's default kill level (the larger of
//            4 GiB and 8% of MemTotal), the free memory a guarded job must keep;
//   a holder's size = max(its cap, what its process tree holds now), where the cap is
//            fraction x MemTotal or the cap in bytes, and "holds" is PSS (else RSS) plus
//            NVML's GPU memory (CUDA pages on unified memory appear in no RSS);
//   uncapped holders stop (a trainer or a torch process grows to what it can get: one heavy
//            job at a time); llama.cpp keeps its load-time size when that size is known;
//   capped holders are kept smallest first while kept + size + need <= budget.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/message.h"
#include "sys/holder_caps.h"
#include "sys/pool_holders.h"

namespace headroom {

enum class HolderAction { kKeep, kStop, kPartOf };
std::string_view HolderActionName(HolderAction action);  // "keep", "stop", "part-of" (ps --json)

// `arithmetic` and `summary` are message values (base/message.h): English in ps --json and
// doctor's env-report.json, translated on the terminal.

struct HolderAdvice {
  pid_t pid = 0;
  HolderAction action = HolderAction::kStop;
  std::optional<pid_t> part_of;        // kPartOf: the holder whose advice applies
  uint64_t held_bytes = 0;             // the tree's PSS/RSS + GPU memory now
  std::optional<uint64_t> size_bytes;  // what the advice counted; nullopt when unknown
  Message arithmetic;                  // "vllm cap 0.50 x 121.69 GiB = 60.85 GiB; + need ..."
  std::string stop_command;            // kStop: printed for the user, never run; "" if none
};

struct PoolAdvice {
  uint64_t mem_total_bytes = 0;
  uint64_t need_bytes = 0;
  uint64_t reserve_bytes = 0;
  uint64_t budget_bytes = 0;          // mem_total - reserve
  uint64_t kept_bytes = 0;            // sum of the kept holders' sizes
  bool fits = false;                  // nothing must stop, and kept + need <= budget
  std::vector<HolderAdvice> holders;  // one per holder, in the holders' order
  Message summary;
};

// What a holder's process tree holds now (itself and the holders that are part of it).
uint64_t HeldBytes(const PoolHolder& holder);

// `caps` is parallel to `holders`. `reserve_bytes`: the kill level the user configured
// ([guard] kill_level); nullopt for the guard's default.
PoolAdvice AdviseBesideJob(const std::vector<PoolHolder>& holders,
                           const std::vector<HolderCap>& caps, uint64_t need_bytes,
                           uint64_t mem_total_bytes,
                           std::optional<uint64_t> reserve_bytes = std::nullopt);

}  // namespace headroom
