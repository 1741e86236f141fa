// Implementation notes. A vector of `capacity` points written round-robin: one allocation
// at construction, none per sample. Points are kept as doubles in the graphs' units (W, not
// mW) so a sparkline reads them without knowing the Sample's integer types.
#include "top/history.h"

#include <algorithm>

namespace headroom {
namespace {

template <typename T>
std::optional<double> AsDouble(const std::optional<T>& v) {
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

}  // namespace

HistoryPoint PointFromSample(const Sample& s) {
  HistoryPoint p;
  p.time = s.time;
  p.available_bytes = AsDouble(s.mem_available_bytes);
  if (s.mem_total_bytes && s.mem_available_bytes && *s.mem_total_bytes >= *s.mem_available_bytes) {
    p.used_bytes = static_cast<double>(*s.mem_total_bytes - *s.mem_available_bytes);
  }
  p.psi_some_pct = s.psi_some_avg10_pct;
  p.temperature_c = AsDouble(s.temperature_c);
  if (s.power_mw) p.power_w = static_cast<double>(*s.power_mw) / 1000.0;
  p.sm_clock_mhz = AsDouble(s.sm_clock_mhz);
  p.cpu_util_pct = s.cpu_util_pct;
  p.gpu_util_pct = AsDouble(s.gpu_utilization_pct);
  p.gpu_memory_used_bytes = AsDouble(s.gpu_memory_used_bytes);
  return p;
}

std::optional<double> MetricOf(const HistoryPoint& p, Metric metric) {
  switch (metric) {
    case Metric::kAvailable:
      return p.available_bytes;
    case Metric::kUsed:
      return p.used_bytes;
    case Metric::kPsiSome:
      return p.psi_some_pct;
    case Metric::kTemperature:
      return p.temperature_c;
    case Metric::kPower:
      return p.power_w;
    case Metric::kSmClock:
      return p.sm_clock_mhz;
    case Metric::kCpuUtil:
      return p.cpu_util_pct;
    case Metric::kGpuUtil:
      return p.gpu_util_pct;
    case Metric::kGpuMemoryUsed:
      return p.gpu_memory_used_bytes;
  }
  return std::nullopt;
}

History::History(size_t capacity) : ring_(std::max<size_t>(capacity, 1)) {}

void History::Push(const HistoryPoint& point) {
  ring_[next_] = point;
  next_ = (next_ + 1) % ring_.size();
  size_ = std::min(size_ + 1, ring_.size());
}

const HistoryPoint& History::at(size_t i) const {
  // The oldest kept point sits where the next one will go once the ring is full.
  const size_t oldest = size_ == ring_.size() ? next_ : 0;
  return ring_[(oldest + i) % ring_.size()];
}

std::vector<std::optional<double>> History::Last(Metric metric, size_t n) const {
  const size_t take = std::min(n, size_);
  std::vector<std::optional<double>> out;
  out.reserve(take);
  for (size_t i = size_ - take; i < size_; ++i) out.push_back(MetricOf(at(i), metric));
  return out;
}

}  // namespace headroom
