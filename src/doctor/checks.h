// `headroom doctor`: eleven preflight checks (G1-G11) over facts gathered once.
//
// The checks are pure functions of DoctorFacts, so each verdict is a unit test with literal
// facts; doctor/gather.h fills the facts from a SysRoot, NVML, libcuda, the Python
// environment and config files, and the CLI tests run the whole path on fixture trees.
//
// Verdicts: pass (checked, fine), warn (checked, worth acting on), fail (checked, the run
// will break: blocks), skip (applies here but could not be checked: counts as a warning),
// info (nothing to judge: not applicable here, or a fact shown for the record).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"
#include "doctor/bandwidth.h"
#include "doctor/distributed.h"
#include "doctor/parallel_config.h"
#include "gpu/gpu.h"
#include "gpu/platform.h"
#include "sys/container.h"
#include "sys/holder_caps.h"
#include "sys/hwmon.h"
#include "sys/loader_libs.h"
#include "sys/meminfo.h"
#include "sys/pool_holders.h"
#include "sys/python_env.h"

namespace headroom {

enum class CheckVerdict { kPass, kWarn, kFail, kSkip, kInfo };
std::string_view CheckVerdictName(CheckVerdict v);  // "pass", "warn", "fail", "skip", "info"

// The words are message values (base/message.h): ReportJson renders them in English for
// env-report.json, the terminal translates them. Made once; nothing runs the checks again.
struct CheckResult {
  std::string id;  // "G1"
  Message title;   // "CUDA ABI"
  CheckVerdict verdict = CheckVerdict::kInfo;
  Message summary;               // one line: "torch CUDA 12.8 vs driver CUDA 13.0: major mismatch"
  std::vector<Message> details;  // further lines: evidence and what to do
};

// The distributions G9 lists and G2 looks for, in display order.
inline constexpr std::string_view kReportedDistributions[] = {"torch", "triton", "xformers",
                                                              "transformers", "flash-attn"};

struct ConfigFacts {
  std::string path;
  std::vector<ParallelSetting> settings;
  std::string error;  // unreadable: why
};

struct WorkloadFacts {
  std::string description;  // as given: "qlora llama-3.1-70b seq 8192"
  // "llama-3.1-70b qlora, batch 1, seq 8192: peak 45.10 GiB ...": English in env-report.json,
  // translated on the terminal.
  Message plan_line;
  uint64_t peak_bytes = 0;
  uint64_t budget_bytes = 0;
  std::string verdict;  // plan's Name(Verdict): "fits", "tight", "does not fit" (compared, never
                        // translated)
  std::vector<Message> advice;  // plan's advice (Advice::text) when it does not fit or is tight
  // --from FILE in the workload: the file (made absolute), its format (Name(RunFormat)) and
  // the keys it has that the plan does not model, shown beside the plan line, never dropped;
  // `from_note` is plan/run_config.h NotModelledNote. from_file is "" without --from.
  std::string from_file, from_format;
  std::vector<std::string> not_modelled;
  std::optional<Message> from_note;
};

struct BandwidthFacts {
  std::optional<CopyMeasurement> host;
  std::string host_error;
  std::optional<CopyMeasurement> device;
  std::string device_error;  // libcuda missing, no device, a failed call
};

struct DoctorFacts {
  // Platform.
  std::string arch;  // "aarch64", "x86_64"
  std::vector<GpuReading> gpus;
  std::string gpu_error;  // NVML could not be loaded or initialised: why ("" when it was)
  PlatformProfile platform;
  std::optional<std::string> kernel_driver;  // first line of /proc/driver/nvidia/version
  // Memory.
  std::optional<MemInfo> meminfo;
  std::string meminfo_error;
  // The Python environment.
  std::optional<PythonEnv> python;
  std::string python_error;
  std::optional<TorchBuild> torch;  // nullopt: not installed, or torch_error says why not read
  std::string torch_error;
  std::map<std::string, Distribution, std::less<>> distributions;  // found ones, by the names above
  std::vector<std::string> env_cudart;  // libcudart files inside the environment (pip wheels)
  // The loader.
  std::map<int, std::vector<SharedLibFile>> cudart;  // registered libcudart.so.N, by major
  // Temperatures without a GPU: the hottest hwmon or thermal-zone reading.
  std::optional<std::string> hottest_sensor;
  std::optional<double> hottest_c;
  // Bandwidth; nullopt when not measured (--no-bandwidth).
  std::optional<BandwidthFacts> bandwidth;
  // Contention.
  std::vector<PoolHolder> holders;
  std::vector<HolderCap> caps;  // parallel to holders
  // Environment variables the checks read (the CLI reads them).
  std::optional<std::string> torch_cuda_arch_list;
  std::optional<std::string> world_size;
  std::optional<std::string> nnodes;
  // Container.
  ContainerInfo container;
  // Configs given with --config.
  std::vector<ConfigFacts> configs;
  // --workload, planned.
  std::optional<WorkloadFacts> workload;
  // G11: NCCL, Ray, Slurm and the environment variables of a distributed run.
  DistributedFacts distributed;
  std::string host;  // the node's name (env-report.json, doctor --compare)
  // The memory guards running (doctor/memory_guards.h): "earlyoom", "headroom guardian", ...
  std::vector<std::string> memory_guards;
};

CheckResult CheckCudaAbi(const DoctorFacts& f);      // G1
CheckResult CheckFlashAttn(const DoctorFacts& f);    // G2
CheckResult CheckUmaHeadroom(const DoctorFacts& f);  // G3
CheckResult CheckThermal(const DoctorFacts& f);      // G4
CheckResult CheckBandwidth(const DoctorFacts& f);    // G5
CheckResult CheckContention(const DoctorFacts& f);   // G6
CheckResult CheckPrecision(const DoctorFacts& f);    // G7
CheckResult CheckPlaybooks(const DoctorFacts& f);    // G8
CheckResult CheckContainer(const DoctorFacts& f);    // G9
CheckResult CheckMultiNode(const DoctorFacts& f);    // G10
// G11 CheckDistributed is in doctor/distributed.h.

// G1..G11 in order.
std::vector<CheckResult> RunChecks(const DoctorFacts& f);

// Page cache above this share of MemTotal is a G3 warning.
inline constexpr double kLargePageCacheFraction = 0.10;
// GPU temperature from which G4 warns.
inline constexpr int kHotGpuC = 85;

enum class DoctorVerdict { kReady, kReadyWithWarnings, kBlocked };
std::string_view DoctorVerdictName(DoctorVerdict v);  // "ready", "ready-with-warnings", "blocked"
// blocked: any fail, or the workload does not fit; ready-with-warnings: any warn or skip, or
// the workload is tight; else ready.
DoctorVerdict OverallVerdict(const std::vector<CheckResult>& checks,
                             const std::optional<WorkloadFacts>& workload);
// The exit status for a verdict: 0 ready, 1 ready-with-warnings, 2 blocked.
int ExitStatusFor(DoctorVerdict v);

// The platform identity line: "aarch64; NVIDIA GB10 (compute capability 12.1); driver
// 580.95.05, CUDA 13.0; GB10: yes".
Message PlatformLine(const DoctorFacts& f);

// The "checks" ({"G1": "pass", "G3": "warn: ..."}) and "check_details" members of a report,
// in English.
void ChecksJson(const std::vector<CheckResult>& checks, nlohmann::ordered_json& short_checks,
                nlohmann::ordered_json& details);

// env-report.json (docs/doctor.md): schema_version, platform, checks {"G1": "pass",
// "G3": "warn: ..."}, check_details, headroom_gb, verdict. Always English: the checks'
// message values rendered by EnglishText.
nlohmann::ordered_json ReportJson(const DoctorFacts& f, const std::vector<CheckResult>& checks,
                                  DoctorVerdict verdict);
// ReportJson as the file's text (env-report.json and --json): indented by two spaces, bytes
// that are not UTF-8 replaced, one newline at the end.
std::string ReportJsonText(const DoctorFacts& f, const std::vector<CheckResult>& checks,
                           DoctorVerdict verdict);

}  // namespace headroom
