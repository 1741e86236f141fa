// plan --beside CAP: the trainer planned in what inference servers will leave of the pool.
//
// CAP is a fraction of the pool as vLLM's --gpu-memory-utilization means it (of the device's
// total memory: MemTotal on unified memory; vllm/v1/worker/gpu_worker.py, docs/sources.md),
// a size with a unit ("40GiB"), or a served plan "serve:MODEL:CONTEXT:CONCURRENCY[:ENGINE]"
// (plan/serve.h), each optionally named "NAME:CAP". A server not running yet is taken out of
// the budget; one that is running (sys/pool_holders.h finds it) is already out of
// MemAvailable and is not counted twice. docs/plan.md, "Beside an inference server".
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"
#include "plan/budget.h"
#include "plan/serve.h"
#include "sys/holder_caps.h"
#include "sys/pool_holders.h"

namespace headroom {

struct BesideCap {
  std::string text;    // as given
  std::string name;    // NAME: when given, else ""
  std::string engine;  // the server kind a running one is matched by (HolderKindName)
  std::optional<double> fraction;
  std::optional<uint64_t> bytes;      // a size
  std::optional<ServeRequest> serve;  // serve:MODEL:CONTEXT:CONCURRENCY[:ENGINE]
};

// One --beside value checked: a fraction in (0, 1], a size below `mem_total_bytes`, a NAME
// of 1 to 32 letters, digits, '.', '_' or '-', a serve spec with a known engine and positive
// context and concurrency. The engine: NAME when it names one ("vllm", "sglang", "ollama",
// "llama.cpp", "tgi", "tensorrt-llm"), a serve spec's, else vllm for a fraction and none
// ("") for a size. On failure nullopt and `*error` names the value.
std::optional<BesideCap> ParseBesideCap(std::string_view text, uint64_t mem_total_bytes,
                                        Message* error);

// A running server one --beside names: its pid, engine, and cap as `ps` reads it.
struct RunningServer {
  pid_t pid = 0;
  std::string engine;
  std::optional<double> fraction;
  std::optional<uint64_t> cap_bytes;
  std::string cap_source;
};

struct BesideEntry {
  BesideCap cap;
  std::optional<ServeNeed> need;  // a serve spec's
  uint64_t cap_bytes = 0;         // what the server holds at its cap
  std::optional<RunningServer> running;
  uint64_t subtracted_bytes = 0;  // taken from the budget: 0 when running
};

// The running servers among `holders` (top-level inference servers, caps parallel).
std::vector<RunningServer> RunningServers(const std::vector<PoolHolder>& holders,
                                          const std::vector<HolderCap>& caps);

// Each cap's bytes (a fraction of `pool_bytes`, a size, a serve need's held bytes), matched
// to a running server of its engine (each server matches one cap, in order), and the budget
// lowered by the caps of the servers not running (never below 0). `needs`: the serve needs,
// parallel to `caps` (nullopt for plain caps).
std::vector<BesideEntry> ApplyBeside(const std::vector<BesideCap>& caps,
                                     const std::vector<std::optional<ServeNeed>>& needs,
                                     const std::vector<RunningServer>& running, uint64_t pool_bytes,
                                     Budget* budget);

// One line per entry, for people: "vllm at 0.50 of the pool (63.80 GB): taken from the
// budget" or "... already running (pid 1111, --gpu-memory-utilization 0.5): its memory is
// out of MemAvailable already, not counted twice".
Message BesideLine(const BesideEntry& entry);

// plan --json's "beside": one object per entry.
nlohmann::json BesideToJson(const std::vector<BesideEntry>& entries);
nlohmann::json ServeNeedToJson(const ServeNeed& need);

}  // namespace headroom
