#include "sweep/policy.h"

#include <algorithm>

#include "base/bytes.h"

namespace headroom {
namespace {

constexpr double kMarginShare = 0.03;
constexpr uint64_t kMinMarginBytes = 256 * kMiB;
constexpr uint64_t kMinSettleToleranceBytes = 512 * kMiB;

}  // namespace

uint64_t DefaultSweepMarginBytes(uint64_t limit_bytes) {
  return std::max(kMinMarginBytes,
                  static_cast<uint64_t>(kMarginShare * static_cast<double>(limit_bytes)));
}

uint64_t DefaultSettleToleranceBytes(uint64_t mem_total_bytes) {
  return std::max<uint64_t>(kMinSettleToleranceBytes, mem_total_bytes / 50);
}

uint64_t DefaultRequireAvailableBytes(uint64_t limit_bytes, uint64_t kill_level_bytes,
                                      uint64_t mem_total_bytes) {
  return std::min(mem_total_bytes, limit_bytes + kill_level_bytes);
}

Result<uint64_t> SweepLimitBytes(std::optional<uint64_t> given_bytes, uint64_t mem_total_bytes,
                                 uint64_t default_bytes) {
  const uint64_t limit = given_bytes ? *given_bytes : default_bytes;
  if (limit > mem_total_bytes) {
    return Error{Msg("--limit: {} is more than MemTotal {}", GB(limit), GB(mem_total_bytes))};
  }
  return limit;
}

std::filesystem::path SweepLogDir(const std::string& logs_flag,
                                  const std::filesystem::path& journal_path) {
  return logs_flag.empty() ? journal_path.parent_path() / "sweeps"
                           : std::filesystem::path(logs_flag);
}

}  // namespace headroom
