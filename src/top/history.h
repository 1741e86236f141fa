// The readings `headroom top` draws as short graphs, one point per sample, in a ring of
// fixed capacity: the newest `capacity` points are kept and the oldest dropped, so memory
// stays bounded however long top runs (600 points: ten minutes at the default 1 s, a
// minute at 100 ms; a graph is never wider than a terminal, so more would not be drawn).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "base/wall_time.h"
#include "samples/sampler.h"

namespace headroom {

inline constexpr size_t kDefaultHistoryPoints = 600;

// The graphed part of a Sample, in the units the graphs are scaled in.
struct HistoryPoint {
  WallTime time{};
  std::optional<double> available_bytes;  // MemAvailable
  std::optional<double> used_bytes;       // MemTotal - MemAvailable
  std::optional<double> psi_some_pct;     // memory some avg10
  std::optional<double> temperature_c;
  std::optional<double> power_w;
  std::optional<double> sm_clock_mhz;
  std::optional<double> cpu_util_pct;
  std::optional<double> gpu_util_pct;
  std::optional<double> gpu_memory_used_bytes;  // NVML, discrete GPUs only
};

HistoryPoint PointFromSample(const Sample& s);

enum class Metric {
  kAvailable,
  kUsed,
  kPsiSome,
  kTemperature,
  kPower,
  kSmClock,
  kCpuUtil,
  kGpuUtil,
  kGpuMemoryUsed,
};

std::optional<double> MetricOf(const HistoryPoint& p, Metric metric);

class History {
 public:
  // `capacity` of at least 1 (0 is taken as 1).
  explicit History(size_t capacity = kDefaultHistoryPoints);

  void Push(const HistoryPoint& point);
  size_t size() const { return size_; }
  size_t capacity() const { return ring_.size(); }
  bool empty() const { return size_ == 0; }
  // The i-th point, 0 the oldest kept.
  const HistoryPoint& at(size_t i) const;
  const HistoryPoint& newest() const { return at(size_ - 1); }

  // The newest `n` values of `metric`, oldest first; fewer when fewer points are kept.
  std::vector<std::optional<double>> Last(Metric metric, size_t n) const;

 private:
  std::vector<HistoryPoint> ring_;
  size_t next_ = 0;  // where the next point goes
  size_t size_ = 0;
};

}  // namespace headroom
