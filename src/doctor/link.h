// `headroom doctor --peer`, `--peer-listen` and `--peer-group`: the link between nodes
// measured with a real all-reduce, and whether the ranks agree on what decides which
// collectives run (docs/doctor.md "The link between nodes"). The measurement is the link
// probe's (python/headroom/link_probe.py, run by doctor/link_probe.h); this file reads its
// answer and judges it. Pure: the probe's JSON in, checks of the doctor's shape out.
//
// Checks:
//   L1 link   the all-reduce's bus bandwidth against the expected figure: pass at 80 % of
//             it or more, fail under a quarter (the ConnectX-7 fault's 3 of 21 GB/s), warn
//             between. Without --peer-expect the figure is the two-Spark link's NCCL
//             (about 21 GB/s over a 24.5 GB/s RDMA link, docs/sources.md "Link"); gloo has
//             no reference figure there and is info.
//   L2 ranks  torch, torch's CUDA, NCCL and nvcc on PATH differ: fail (a collective that only
//             some ranks enter waits for its timeout); an environment variable that decides
//             memory or NCCL's choices differs: warn. Each difference names the node.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "doctor/checks.h"

namespace headroom {

// The two-Spark link's figures (docs/sources.md "Link"): NCCL's all-reduce bus bandwidth on
// a healthy ConnectX-7 pair, the RDMA figure ib_write_bw reads on the same link, and what
// NCCL falls to in the faulty state that only a power cycle clears.
inline constexpr double kSparkLinkNcclGBps = 21.0;
inline constexpr double kSparkLinkRdmaGBps = 24.5;
inline constexpr double kSparkLinkFaultGBps = 3.0;
// L1 passes at this share of the expected figure and fails under kLinkFailShare.
inline constexpr double kLinkPassShare = 0.8;
inline constexpr double kLinkFailShare = 0.25;

// One rank's facts, as the probe gathered them in the job's Python.
struct RankFacts {
  int rank = 0;
  std::string host;
  std::string torch, torch_cuda, nccl;                  // "" when the build has none
  std::string nvcc;                                     // "yes" / "no": nvcc on PATH
  std::map<std::string, std::string, std::less<>> env;  // the variables that are set
};

struct LinkProbeResult {
  bool ok = false;
  std::string stage, error;  // when not ok: "gate", "rendezvous", "collective", "import"
  int rank = 0, world = 0;
  std::string backend;           // "nccl" or "gloo"
  uint64_t size_bytes = 0;       // the all-reduced tensor
  std::vector<double> seconds;   // one per repeat, the slowest rank's
  std::vector<RankFacts> ranks;  // rank 0 first; only this rank's when the nodes never met
};

// The probe's stdout. Error: not JSON, or a member of the wrong type, named.
Result<LinkProbeResult> ParseLinkProbe(std::string_view text);

// algbw = bytes / seconds, busbw = algbw * 2 (n - 1) / n (nccl-tests' all-reduce convention,
// docs/sources.md "Link"), in GB/s (1e9 bytes).
double AllReduceBusGBps(uint64_t bytes, double seconds, int ranks);

struct LinkFigures {
  double busbw_median = 0, busbw_fastest = 0, busbw_slowest = 0, algbw_median = 0;
};
// From the repeats; all zero when there are none.
LinkFigures FiguresOf(const LinkProbeResult& r);

struct RankDifference {
  std::string what;       // "torch", "torch CUDA", "NCCL", "nvcc on PATH", or the variable's name
  bool blocking = false;  // a version or nvcc: fail; a variable: warn
  int rank = 0;           // the rank that differs from rank 0
  std::string host, value, rank0_host, rank0_value;  // "unset" for a variable not set
};

// Every rank against rank 0, in rank order, the versions first, then the variables by name.
std::vector<RankDifference> RankDifferences(const std::vector<RankFacts>& ranks);

// `expected_gbps`: --peer-expect, or nullopt for the two-Spark figure.
CheckResult CheckLink(const LinkProbeResult& r, std::optional<double> expected_gbps);  // L1
CheckResult CheckRanks(const std::vector<RankFacts>& ranks);                           // L2

// doctor --peer --json: {"schema_version": 1, "ok", "error": {"stage", "message"} | null,
// "backend", "world", "size_bytes", "seconds", "busbw_gbps" (median), "busbw_fastest_gbps",
// "busbw_slowest_gbps", "algbw_gbps", "expected_gbps", "gb": "1e9 bytes", "ranks": [...],
// "differences": [...], "checks", "check_details", "verdict"}, in English.
nlohmann::ordered_json LinkJson(const LinkProbeResult& r, std::optional<double> expected_gbps,
                                const std::vector<CheckResult>& checks, DoctorVerdict verdict);

}  // namespace headroom
