// `headroom doctor --compare A.json B.json ...`: the env-report.json of each node of a
// multi-node run (doctor --report on each), lined up. A collective needs the same NCCL and
// torch on every rank, and the CUDA stack should match; a node whose own doctor said blocked
// blocks the run. Pure: report texts in, checks of the doctor's shape (doctor/checks.h) out.
//
// Checks, each pass / warn / fail / skip over all nodes:
//   F1 driver    the NVIDIA driver version: differing builds warn;
//   F2 CUDA      the driver's CUDA version: another major fails, another minor warns;
//   F3 torch     torch's version and its CUDA: any difference fails (c10d and the NCCL
//                bindings change between releases);
//   F4 NCCL      the NCCL torch loads (software.nccl): any difference fails (NCCL's protocol
//                is only guaranteed between equal versions); a node that loads a pip wheel
//                while another loads the system's library is named;
//   F5 nodes     each node's own verdict and G11 (distributed settings): blocked fails,
//                ready-with-warnings warns.
// A field a node's report does not have (null, or an older report) makes that check skip.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "doctor/checks.h"

namespace headroom {

// One node's report, as far as --compare reads it.
struct NodeReport {
  std::string source;  // the file it came from
  std::string host;    // "host", else the file name
  std::optional<std::string> driver_version, cuda_driver_version;
  std::optional<std::string> torch, torch_cuda;
  std::optional<std::string> nccl, nccl_wheel;
  std::string verdict;                                     // "" when absent
  std::map<std::string, std::string, std::less<>> checks;  // "G11" -> "warn: ..."
};

// Largest env-report.json --compare reads.
inline constexpr size_t kMaxEnvReportBytes = size_t{4} << 20;

// Parses an env-report.json text. Errors (one line, without the file name): not JSON, not an
// object, no integer schema_version or a newer one than doctor writes, a known field of the
// wrong type ("platform.driver_version: not a string").
Result<NodeReport> ParseEnvReport(std::string_view text, const std::string& source);

// F1..F5 over `nodes` (two or more).
std::vector<CheckResult> CompareNodes(const std::vector<NodeReport>& nodes);

// doctor --compare --json: {"schema_version": 1, "nodes": [{"source", "host"}...], "checks":
// {"F1": "pass", ...}, "check_details": [...], "verdict": ...}, in English.
nlohmann::ordered_json CompareJson(const std::vector<NodeReport>& nodes,
                                   const std::vector<CheckResult>& checks, DoctorVerdict verdict);

}  // namespace headroom
