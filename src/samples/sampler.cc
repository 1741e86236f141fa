// Implementation notes.
//  - Kernel files are opened once (O_RDONLY | O_CLOEXEC) and re-read with pread(fd, ..., 0):
//    procfs and sysfs regenerate the text on every read at offset 0, so one open serves the
//    whole run and a sample costs one syscall per file, not three.
//  - /proc/stat: only its first line is needed, so only the first 1 KiB is read; the rest
//    (per-CPU lines, a long "intr" line) can be tens of KiB on a big machine.
//  - Sensor channels are found once, at construction (ReadHwmon, ReadThermalZones); a sensor
//    that appears later (a driver loaded mid-run) is not picked up, so the columns stay fixed
//    for the life of the file. A channel that stops answering reads as n/a.
//  - The GPU reading goes through GpuBackend::ReadDevice, one call per metric; its cost is
//    the driver's (bench/sampler_cost.cc measures it against the fake library).
#include "samples/sampler.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <map>
#include <set>

#include "sys/hwmon.h"
#include "sys/meminfo.h"
#include "sys/psi.h"

namespace headroom {

struct Sampler::KeptFile {
  int fd = -1;
  size_t max_bytes = 0;  // read at most this much (the file's useful part)
  ~KeptFile() {
    if (fd >= 0) ::close(fd);
  }
  // The file's text from offset 0 into `buffer`; false when the read fails.
  bool Read(std::string& buffer) const {
    buffer.resize(max_bytes);
    size_t got = 0;
    while (got < max_bytes) {
      const ssize_t n = ::pread(fd, buffer.data() + got, max_bytes - got, static_cast<off_t>(got));
      if (n < 0) return false;
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    buffer.resize(got);
    return true;
  }
};

// What an extra column's file holds.
enum class ChannelKind { kMillidegrees, kMicrowatts, kMicrojoules, kBool };

struct Sampler::Channel {
  std::unique_ptr<KeptFile> file;
  ChannelKind kind = ChannelKind::kMillidegrees;
};

namespace {

// A column-name part: [A-Za-z0-9_-] kept, anything else '_' (names go into CSV headers).
std::string NamePart(std::string_view text) {
  std::string out;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    out += ok ? c : '_';
  }
  return out.empty() ? "unnamed" : out;
}

}  // namespace

std::unique_ptr<Sampler::KeptFile> Sampler::OpenKept(const SysRoot& root,
                                                     const std::string& relative,
                                                     size_t max_bytes) {
  const int fd = OpenKernelFile(root.Path(relative));  // a regular file only, never waits
  if (fd < 0) return nullptr;
  auto f = std::make_unique<Sampler::KeptFile>();
  f->fd = fd;
  f->max_bytes = max_bytes;
  return f;
}

std::optional<CpuTimes> ParseProcStatCpu(std::string_view text) {
  if (!text.starts_with("cpu ")) return std::nullopt;
  const size_t nl = text.find('\n');
  std::string_view line = text.substr(4, nl == std::string_view::npos ? text.size() - 4 : nl - 4);
  uint64_t v[8] = {};
  size_t n = 0;
  while (n < 8) {
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (line.empty()) break;
    const auto [ptr, ec] = std::from_chars(line.data(), line.data() + line.size(), v[n]);
    if (ec != std::errc()) return std::nullopt;
    line.remove_prefix(static_cast<size_t>(ptr - line.data()));
    if (!line.empty() && line.front() != ' ') return std::nullopt;
    ++n;
  }
  if (n < 4) return std::nullopt;
  // user nice system idle [iowait irq softirq steal]; guest is already in user.
  CpuTimes t;
  t.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  t.idle = v[3] + v[4];
  return t;
}

std::optional<double> CpuUtilPercent(const CpuTimes& before, const CpuTimes& after) {
  if (after.busy < before.busy || after.idle < before.idle) return std::nullopt;
  const uint64_t busy = after.busy - before.busy, idle = after.idle - before.idle;
  if (busy + idle == 0) return std::nullopt;
  return 100.0 * static_cast<double>(busy) / static_cast<double>(busy + idle);
}

Sampler::Sampler(const SysRoot& root, std::unique_ptr<GpuBackend> gpu) : gpu_(std::move(gpu)) {
  buffer_.reserve(8192);
  if (gpu_ && gpu_->device_count() == 0) {
    notes_.push_back("nvml: no GPU device; GPU columns are empty");
    gpu_.reset();
  }
  if (gpu_) {
    const auto readings = SampleAllDevices(*gpu_);
    platform_ = DetectPlatform(readings);
    for (const auto& r : readings) {
      if (r.name && *r.name == platform_.gpu_name) {
        gpu_index_ = r.index;
        break;
      }
    }
    if (readings.size() > 1) {
      notes_.push_back(fmt::format("{} GPUs: sampling device {} ({})", readings.size(), gpu_index_,
                                   platform_.gpu_name));
    }
  }
  meminfo_ = OpenKept(root, "proc/meminfo", 16 * 1024);
  if (!meminfo_) notes_.push_back("proc/meminfo: cannot open; mem.* columns are empty");
  psi_ = OpenKept(root, "proc/pressure/memory", 512);
  if (!psi_) notes_.push_back("proc/pressure/memory: not available; psi.* columns are empty");
  stat_ = OpenKept(root, "proc/stat", 1024);
  if (!stat_) notes_.push_back("proc/stat: cannot open; cpu.util is empty");
  if (stat_ && stat_->Read(buffer_)) last_cpu_ = ParseProcStatCpu(buffer_);

  // Sensor channels. A device name shared by several hwmon devices (two nvme drives) gets
  // the hwmon id appended so column names stay unique.
  const auto devices = ReadHwmon(root);
  std::map<std::string, int> name_count;
  for (const auto& d : devices) ++name_count[d.name];
  std::set<std::string> used;
  auto add = [&](std::string name, std::string unit, const std::string& dir,
                 const std::string& file, ChannelKind kind) {
    if (channels_.size() >= 256 || used.count(name)) return;
    auto kept = OpenKept(root, dir + "/" + file, 64);
    if (!kept) kept = OpenKept(root, dir + "/device/" + file, 64);
    if (!kept) return;
    used.insert(name);
    channels_.push_back({std::move(kept), kind});
    extra_columns_.push_back({std::move(name), std::move(unit)});
  };
  for (const auto& d : devices) {
    const std::string dev = NamePart(d.name.empty() || name_count[d.name] > 1
                                         ? (d.name.empty() ? d.id : d.name + "_" + d.id)
                                         : d.name);
    const std::string dir = "sys/class/hwmon/" + d.id;
    auto label = [](const std::string& l, const char* kind, int ch) {
      return l.empty() ? fmt::format("{}{}", kind, ch) : NamePart(l);
    };
    for (const auto& t : d.temps) {
      add(fmt::format("hwmon.{}.{}.temp", dev, label(t.label, "temp", t.channel)), "C", dir,
          fmt::format("temp{}_input", t.channel), ChannelKind::kMillidegrees);
    }
    for (const auto& p : d.powers) {
      const std::string base = fmt::format("hwmon.{}.{}", dev, label(p.label, "power", p.channel));
      if (p.input_uw) {
        add(base + ".power", "W", dir, fmt::format("power{}_input", p.channel),
            ChannelKind::kMicrowatts);
      } else if (p.average_uw) {
        add(base + ".power", "W", dir, fmt::format("power{}_average", p.channel),
            ChannelKind::kMicrowatts);
      }
      if (p.cap_uw) {
        add(base + ".power_cap", "W", dir, fmt::format("power{}_cap", p.channel),
            ChannelKind::kMicrowatts);
      }
    }
    for (const auto& e : d.energies) {
      add(fmt::format("hwmon.{}.{}.energy", dev, label(e.label, "energy", e.channel)), "J", dir,
          fmt::format("energy{}_input", e.channel), ChannelKind::kMicrojoules);
    }
    if (d.prochot)
      add(fmt::format("hwmon.{}.prochot", dev), "bool", dir, "prochot", ChannelKind::kBool);
  }
  for (const auto& z : ReadThermalZones(root)) {
    std::string name = "thermal." + NamePart(z.type.empty() ? z.id : z.type);
    if (used.count(name)) name += "_" + z.id;
    add(name, "C", "sys/class/thermal/" + z.id, "temp", ChannelKind::kMillidegrees);
  }
}

Sampler::~Sampler() = default;

void Sampler::ReadGpu(Sample& s) {
  if (!gpu_) return;
  GpuReading r = gpu_->ReadDevice(gpu_index_);
  s.temperature_c = r.temperature_c;
  s.power_mw = r.power_mw;
  s.sm_clock_mhz = r.sm_clock_mhz;
  s.mem_clock_mhz = r.mem_clock_mhz;
  s.clock_event_reasons = r.clock_event_reasons;
  s.gpu_utilization_pct = r.gpu_utilization_pct;
  s.energy_mj = r.energy_mj;
  s.gpu_memory_total_bytes = r.memory_total_bytes;
  s.gpu_memory_used_bytes = r.memory_used_bytes;
  if (r.processes) {
    std::vector<uint32_t> pids;
    pids.reserve(r.processes->size());
    for (const auto& p : *r.processes) pids.push_back(p.pid);
    s.gpu_pids = std::move(pids);
  }
  s.gpu_lost = r.gpu_lost;
}

void Sampler::ReadHost(Sample& s) {
  if (meminfo_ && meminfo_->Read(buffer_)) {
    const MemInfo info = ParseMemInfo(buffer_);
    s.mem_total_bytes = info.total_bytes();
    s.mem_available_bytes = info.available_bytes();
    s.mem_cached_bytes = info.cached_bytes();
    s.mem_free_bytes = info.free_bytes();
    const auto swap_total = info.swap_total_bytes(), swap_free = info.swap_free_bytes();
    if (swap_total && swap_free && *swap_total >= *swap_free)
      s.swap_used_bytes = *swap_total - *swap_free;
  }
  if (psi_ && psi_->Read(buffer_)) {
    if (auto psi = ParsePsi(buffer_)) {
      s.psi_some_avg10_pct = psi->some.avg10;
      if (psi->full) s.psi_full_avg10_pct = psi->full->avg10;
    }
  }
  if (stat_ && stat_->Read(buffer_)) {
    const auto now = ParseProcStatCpu(buffer_);
    if (now && last_cpu_) s.cpu_util_pct = CpuUtilPercent(*last_cpu_, *now);
    if (now) last_cpu_ = now;
  }
  s.extra.resize(channels_.size());
  for (size_t i = 0; i < channels_.size(); ++i) {
    const Channel& c = channels_[i];
    if (!c.file->Read(buffer_)) continue;
    switch (c.kind) {
      case ChannelKind::kMillidegrees:
        s.extra[i] = ParseMillidegreesC(buffer_);
        break;
      case ChannelKind::kMicrowatts:
      case ChannelKind::kMicrojoules:
        if (auto v = ParseSysfsUnsigned(buffer_)) s.extra[i] = static_cast<double>(*v) / 1e6;
        break;
      case ChannelKind::kBool:
        if (auto v = ParseSysfsInteger(buffer_)) s.extra[i] = *v != 0 ? 1.0 : 0.0;
        break;
    }
  }
}

Sample Sampler::Read(WallTime now) {
  Sample s;
  s.time = now;
  ReadGpu(s);
  ReadHost(s);
  return s;
}

}  // namespace headroom
