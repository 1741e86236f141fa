#include "doctor/bandwidth.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstring>
#include <system_error>
#include <thread>

#include "base/message.h"

namespace headroom {
namespace {

double Gbps(uint64_t bytes, double seconds) {
  return seconds > 0 ? 2.0 * static_cast<double>(bytes) / seconds / 1e9 : 0;
}

// An anonymous mapping, unmapped on every path; not touched here (the copying threads touch
// their own slices first).
class Buffer {
 public:
  explicit Buffer(size_t bytes) : bytes_(bytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    data_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  }
  ~Buffer() {
    if (data_ != nullptr) ::munmap(data_, bytes_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  char* data() const { return data_; }

 private:
  size_t bytes_;
  char* data_ = nullptr;
};

}  // namespace

void Summarize(CopyMeasurement& m) {
  if (m.seconds.empty()) return;
  std::vector<double> sorted = m.seconds;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  m.median_gbps = Gbps(m.bytes, median);
  m.best_gbps = Gbps(m.bytes, sorted.front());
  m.worst_gbps = Gbps(m.bytes, sorted.back());
}

Result<CopyMeasurement> MeasureHostCopy(const HostCopyOptions& options) {
  if (options.threads < 1 || options.threads > 1024 || options.repeats < 1 ||
      options.bytes < 4096) {
    return Error{"host copy: needs 1 to 1024 threads, at least 1 repeat and 4096 bytes"};
  }
  const size_t bytes = static_cast<size_t>(options.bytes);
  Buffer src(bytes), dst(bytes);
  if (src.data() == nullptr || dst.data() == nullptr) {
    return ErrnoError(fmt::format("host copy: mmap of 2 x {} bytes", bytes));
  }
  const int threads = options.threads;
  // Slices on 4 KiB boundaries, the last one taking the rest.
  const size_t slice = (bytes / static_cast<size_t>(threads)) & ~size_t{4095};
  CopyMeasurement m;
  m.what = MsgPlural("host memory ({} thread)", "host memory ({} threads)",
                     static_cast<uint64_t>(threads), threads);
  m.bytes = bytes;
  m.threads = threads;
  std::chrono::steady_clock::time_point start;
  std::barrier sync(threads + 1);
  std::vector<std::jthread> workers;
  // Set when a thread cannot be made (RLIMIT_NPROC, a cgroup's pids.max): the ones started
  // end after the first barrier, which the missing ones and this thread leave.
  std::atomic<bool> abandoned{false};
  for (int t = 0; t < threads; ++t) {
    const size_t begin = slice * static_cast<size_t>(t);
    const size_t length = t == threads - 1 ? bytes - begin : slice;
    auto work = [&, begin, length] {
      std::memset(src.data() + begin, 0x5a, length);  // first touch by the copying thread
      std::memset(dst.data() + begin, 0, length);
      sync.arrive_and_wait();
      if (abandoned) return;
      for (int r = -1; r < options.repeats; ++r) {  // r = -1: the warm-up
        sync.arrive_and_wait();                     // start together
        std::memcpy(dst.data() + begin, src.data() + begin, length);
        sync.arrive_and_wait();  // all done
      }
    };
    try {
      workers.emplace_back(work);
    } catch (const std::system_error& e) {
      abandoned = true;
      for (int missing = threads - t; missing > 0; --missing) sync.arrive_and_drop();
      sync.arrive_and_drop();  // this thread's arrival: the started ones pass and end
      workers.clear();         // join
      return ErrnoError(Msg("host copy: cannot start thread {} of {}", t + 1, threads),
                        e.code().value());
    }
  }
  sync.arrive_and_wait();  // every slice touched
  for (int r = -1; r < options.repeats; ++r) {
    start = std::chrono::steady_clock::now();
    sync.arrive_and_wait();
    sync.arrive_and_wait();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r >= 0) m.seconds.push_back(s);
  }
  workers.clear();  // join
  Summarize(m);
  return m;
}

Result<CopyMeasurement> MeasureDeviceCopy(const CudaDriver& cuda, int index, uint64_t bytes,
                                          int repeats) {
  if (repeats < 1 || bytes < 4096)
    return Error{"device copy: needs at least 1 repeat and 4096 bytes"};
  auto info = cuda.Device(index);
  if (!info) return info.error();
  CopyMeasurement m;
  m.what = Msg("device {}: {}", index, info->name);
  m.bytes = bytes;
  auto timed =
      cuda.TimeDeviceCopies(index, bytes, repeats, [&](double s) { m.seconds.push_back(s); });
  if (!timed) return timed.error();
  Summarize(m);
  return m;
}

Gb10Band CompareWithGb10(double gbps) {
  if (gbps < kGb10MeasuredLowGbps * kGb10SlowFraction) return Gb10Band::kBelow;
  if (gbps <= kGb10MeasuredHighGbps) return Gb10Band::kWithin;
  return Gb10Band::kAbove;
}

Message DescribeCopy(const CopyMeasurement& m) {
  return MsgPlural("{:.1f} GB/s median (fastest {:.1f}, slowest {:.1f}; {} repeat of {:.2f} GB)",
                   "{:.1f} GB/s median (fastest {:.1f}, slowest {:.1f}; {} repeats of {:.2f} GB)",
                   m.seconds.size(), m.median_gbps, m.best_gbps, m.worst_gbps, m.seconds.size(),
                   static_cast<double>(m.bytes) / 1e9);
}

Message Gb10BandText(const CopyMeasurement& m) {
  switch (CompareWithGb10(m.median_gbps)) {
    case Gb10Band::kBelow:
      return Msg(
          "below GB10's measured {:.0f}-{:.0f} GB/s (the {:.0f} GB/s spec is not reached by "
          "copies)",
          kGb10MeasuredLowGbps, kGb10MeasuredHighGbps, kGb10SpecGbps);
    case Gb10Band::kWithin:
      return Msg(
          "within GB10's measured {:.0f}-{:.0f} GB/s (the {:.0f} GB/s spec is not reached by "
          "copies)",
          kGb10MeasuredLowGbps, kGb10MeasuredHighGbps, kGb10SpecGbps);
    case Gb10Band::kAbove:
      return Msg(
          "above GB10's measured {:.0f}-{:.0f} GB/s (the {:.0f} GB/s spec is not reached by "
          "copies)",
          kGb10MeasuredLowGbps, kGb10MeasuredHighGbps, kGb10SpecGbps);
  }
  return {};
}

namespace {

CopyOutcome Outcome(Result<CopyMeasurement> m) {
  if (m) return {std::move(*m), {}};
  return {std::nullopt, m.error().what};
}

nlohmann::ordered_json OutcomeJson(const CopyOutcome& o) {
  if (!o.copy) return {{"error", EnglishText(o.error)}};
  const CopyMeasurement& m = *o.copy;
  return {{"what", EnglishText(m.what)},  {"bytes", m.bytes},
          {"threads", m.threads},         {"seconds", m.seconds},
          {"median_gbps", m.median_gbps}, {"best_gbps", m.best_gbps},
          {"worst_gbps", m.worst_gbps}};
}

}  // namespace

BandwidthReport MeasureBandwidth(const BandwidthOptions& o) {
  BandwidthReport r;
  if (o.host) r.host = Outcome(MeasureHostCopy(o.host_copy));
  if (!o.device) return r;
  auto cuda = CudaDriver::Open(o.cuda_lib);
  if (!cuda) {
    r.device_error = cuda.error().what;
  } else if ((*cuda)->device_count() == 0) {
    r.device_error = Msg("cuda: no device");
  } else {
    for (int i = 0; i < (*cuda)->device_count(); ++i) {
      DeviceCopy d{i, Outcome(MeasureDeviceCopy(**cuda, i, o.device_bytes, o.repeats))};
      const auto info = (*cuda)->Device(i);
      d.gb10 = d.outcome.copy && info && info->name.find("GB10") != std::string::npos;
      r.devices.push_back(std::move(d));
    }
  }
  return r;
}

nlohmann::ordered_json BandwidthToJson(const BandwidthReport& r) {
  using Json = nlohmann::ordered_json;
  Json out = {{"schema_version", 1}, {"unit", "GB/s, GB = 1e9 bytes, bytes read + bytes written"}};
  if (r.host) out["host"] = OutcomeJson(*r.host);
  if (!r.devices.empty()) {
    out["device"] = Json::array();
    for (const auto& d : r.devices) {
      Json j = OutcomeJson(d.outcome);
      if (!d.outcome.copy) {
        out["device"].push_back({{"index", d.index}, {"error", j["error"]}});
        continue;
      }
      j["index"] = d.index;
      j["gb10_band"] = d.gb10 ? Json(EnglishText(Gb10BandText(*d.outcome.copy))) : Json(nullptr);
      out["device"].push_back(j);
    }
  }
  if (!r.device_error.empty()) out["device_error"] = EnglishText(r.device_error);
  return out;
}

HostCopySize CapHostCopyBytes(uint64_t requested, uint64_t available_bytes) {
  if (available_bytes > 0 && requested > available_bytes / 8) return {available_bytes / 8, true};
  return {requested, false};
}

bool BandwidthFailed(const BandwidthReport& report, bool device_only) {
  if (report.host && !report.host->copy) return true;
  for (const auto& d : report.devices) {
    if (!d.outcome.copy) return true;
  }
  return device_only && !report.device_error.empty();
}

}  // namespace headroom
