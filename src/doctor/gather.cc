#include "doctor/gather.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "base/message.h"
#include "base/text.h"
#include "doctor/distributed.h"
#include "doctor/memory_guards.h"
#include "gpu/nvml.h"
#include "sys/hwmon.h"
#include "sys/loader_libs.h"
#include "sys/machine_arch.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;

constexpr size_t kConfigMaxBytes = 4 << 20;

// libcudart files pip wheels put inside the environment: SITE/nvidia/*/lib/libcudart.so.N.
std::vector<std::string> EnvCudaRuntimes(const PythonEnv& env) {
  std::vector<std::string> out;
  for (const auto& site : env.site_dirs) {
    std::error_code ec;
    fs::directory_iterator it(site / "nvidia", ec);
    size_t seen = 0;
    for (; !ec && it != fs::directory_iterator() && seen < 1000; it.increment(ec), ++seen) {
      std::error_code ec2;
      fs::directory_iterator lib(it->path() / "lib", ec2);
      for (size_t n = 0; !ec2 && lib != fs::directory_iterator() && n < 1000;
           lib.increment(ec2), ++n) {
        if (LibraryMajor(lib->path().filename().string(), "libcudart.so") >= 0)
          out.push_back(lib->path().string());
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void GatherPython(const GatherOptions& o, DoctorFacts& f) {
  auto env = FindPythonEnv(o.python);
  if (!env) {
    f.python_error = EnglishText(env.error().what);
    return;
  }
  f.python = *env;
  if (auto torch = FindTorchBuild(*env)) {
    if (*torch) {
      f.torch = **torch;
    } else {
      f.torch_error = EnglishText(torch->error().what);
    }
  }
  for (auto name : kReportedDistributions) {
    if (auto d = FindDistribution(*env, name)) f.distributions.emplace(std::string(name), *d);
  }
  f.env_cudart = EnvCudaRuntimes(*env);
  for (const char* name : {"nvidia-nccl-cu13", "nvidia-nccl-cu12", "nvidia-nccl-cu11"}) {
    if (auto d = FindDistribution(*env, name)) {
      f.distributed.nccl_wheel = d->version;
      f.distributed.nccl_wheel_name = name;
      break;
    }
  }
  if (auto ray = FindDistribution(*env, "ray")) f.distributed.ray = ray->version;
}

// G11's facts from the system: the registered libnccl.so.2 (its fullest file name gives the
// version) and slurm.conf's KillOnBadExit ($SLURM_CONF, else Debian's and Slurm's own paths).
void GatherDistributed(const SysRoot& root, const GatherOptions& o, DoctorFacts& f) {
  DistributedFacts& d = f.distributed;
  d.env = o.distributed_env;
  if (auto name = root.ReadFile("proc/sys/kernel/hostname", 4096))
    f.host = std::string(TrimBlanks(*name));
  const auto nccl = FindLibraryMajors(root, LoaderDirectories(root), "libnccl.so");
  for (const auto& [major, files] : nccl) {
    for (const auto& file : files) {
      const std::string name = fs::path(file.path).filename().string();
      const std::string version = LibraryFileVersion(name, "libnccl.so");
      if (!version.empty() && (!d.nccl_system || version.size() > d.nccl_system->size())) {
        d.nccl_system = version;
        d.nccl_system_path = file.path;
      }
    }
  }
  std::vector<std::string> candidates;
  if (o.slurm_conf) candidates.push_back(*o.slurm_conf);
  candidates.insert(candidates.end(), {"/etc/slurm/slurm.conf", "/etc/slurm-llnl/slurm.conf"});
  for (const auto& path : candidates) {
    const fs::path on_root = root.Path(std::string_view(path).substr(path.starts_with('/')));
    std::error_code ec;
    if (!fs::exists(on_root, ec)) continue;
    d.slurm.path = path;
    if (auto text = ReadFileCapped(on_root, kConfigMaxBytes)) {
      d.slurm.kill_on_bad_exit = ParseKillOnBadExit(*text);
    } else {
      d.slurm.error = EnglishText(text.error().what);
    }
    break;
  }
}

void GatherGpu(const SysRoot& root, const GatherOptions& o, DoctorFacts& f) {
  if (auto v = root.ReadFile("proc/driver/nvidia/version", 64 * 1024)) {
    const std::string_view text = *v;
    f.kernel_driver = std::string(TrimBlanks(text.substr(0, text.find('\n'))));
  }
  auto nvml = Nvml::Open(o.nvml_lib);
  if (!nvml) {
    f.gpu_error = EnglishText(nvml.error().what);
  } else {
    f.gpus = SampleAllDevices(**nvml);
  }
  f.platform = ApplyPlatformOverride(DetectPlatform(f.gpus), o.platform);
}

void GatherTemperatures(const SysRoot& root, DoctorFacts& f) {
  auto consider = [&](const std::string& name, const std::optional<double>& c) {
    if (c && (!f.hottest_c || *c > *f.hottest_c)) {
      f.hottest_c = c;
      f.hottest_sensor = name;
    }
  };
  for (const auto& dev : ReadHwmon(root)) {
    for (const auto& t : dev.temps) {
      consider(dev.name + (t.label.empty() ? "" : " " + t.label) + " (" + dev.id + ")", t.celsius);
    }
  }
  for (const auto& z : ReadThermalZones(root)) consider(z.type + " (" + z.id + ")", z.celsius);
}

void GatherBandwidth(const GatherOptions& o, DoctorFacts& f) {
  BandwidthFacts b;
  HostCopyOptions host = o.host_copy;
  // Never more than 1/8 of what is available for the two buffers.
  if (f.meminfo) {
    if (auto a = f.meminfo->EstimatedAvailable())
      host.bytes = std::min<uint64_t>(host.bytes, a->bytes / 16);
  }
  host.bytes = std::max<uint64_t>(host.bytes, 4096);
  if (auto m = MeasureHostCopy(host)) {
    b.host = *m;
  } else {
    b.host_error = EnglishText(m.error().what);
  }
  if (f.gpus.empty() && o.cuda_lib.empty()) {
    b.device_error = "no GPU";
  } else if (auto cuda = CudaDriver::Open(o.cuda_lib); !cuda) {
    b.device_error = EnglishText(cuda.error().what);
  } else if ((*cuda)->device_count() == 0) {
    b.device_error = "cuda: no device";
  } else if (auto m = MeasureDeviceCopy(**cuda, 0, o.device_copy_bytes, o.device_repeats)) {
    b.device = *m;
  } else {
    b.device_error = EnglishText(m.error().what);
  }
  f.bandwidth = b;
}

void GatherHolders(const SysRoot& root, const GatherOptions& o, DoctorFacts& f) {
  std::optional<std::vector<GpuProcess>> gpu;
  if (f.gpu_error.empty()) {
    gpu.emplace();
    for (const auto& r : f.gpus) {
      if (r.processes) gpu->insert(gpu->end(), r.processes->begin(), r.processes->end());
    }
  }
  f.holders = FindPoolHolders(root, gpu, o.self);
  f.caps = HolderCaps(f.holders);
  f.memory_guards = FindMemoryGuards(root);
}

}  // namespace

DoctorFacts GatherFacts(const SysRoot& root, const GatherOptions& o) {
  // Facts are data: their error texts go into env-report.json as they are, so they are
  // rendered in English (EnglishText); the checks' own words around them are messages.
  DoctorFacts f;
  f.arch = MachineArch(root);
  if (auto m = ReadMemInfo(root)) {
    f.meminfo = *m;
  } else {
    f.meminfo_error = EnglishText(m.error().what);
  }
  GatherGpu(root, o, f);
  GatherPython(o, f);
  f.cudart = FindLibraryMajors(root, LoaderDirectories(root), "libcudart.so");
  GatherTemperatures(root, f);
  if (o.measure_bandwidth) GatherBandwidth(o, f);
  GatherHolders(root, o, f);
  f.torch_cuda_arch_list = o.torch_cuda_arch_list;
  f.world_size = o.world_size;
  f.nnodes = o.nnodes;
  f.container = DetectContainer(root, o.container_env);
  GatherDistributed(root, o, f);
  for (const auto& path : o.configs) {
    ConfigFacts c;
    c.path = path;
    if (auto text = ReadFileCapped(path, kConfigMaxBytes)) {
      c.settings = ScanParallelSettings(*text);
    } else {
      c.error = EnglishText(text.error().what);
    }
    f.configs.push_back(std::move(c));
  }
  return f;
}

GatherOptions DoctorGatherOptions() {
  GatherOptions o;
  o.host_copy.bytes = 256ULL << 20;
  o.host_copy.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  o.host_copy.repeats = 5;
  return o;
}

void SetGatherEnvironment(GatherOptions& o, const GetEnvFn& getenv) {
  const auto env = [&](const char* name) {
    const char* v = getenv(name);
    return v != nullptr && *v != '\0' ? std::optional<std::string>(v) : std::nullopt;
  };
  o.python.virtual_env = env("VIRTUAL_ENV");
  o.python.conda_prefix = env("CONDA_PREFIX");
  o.python.path = env("PATH");
  o.torch_cuda_arch_list = env("TORCH_CUDA_ARCH_LIST");
  o.world_size = env("WORLD_SIZE");
  o.nnodes = env("NNODES");
  o.container_env = env("container");
  for (std::string_view name : kDistributedEnvNames) {
    const std::string key(name);
    if (auto v = env(key.c_str())) o.distributed_env.emplace(key, *v);
  }
  o.slurm_conf = env("SLURM_CONF");
}

}  // namespace headroom
