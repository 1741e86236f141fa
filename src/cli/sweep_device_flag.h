// sweep's device limit (docs/sweep.md "On a discrete GPU"): --device-limit SIZE, or
// --platform discrete with --limit SIZE. A size with its unit (base/mem_level.h): no bare
// number, no zero, and no percentage (the device's size is not MemTotal). Errors are
// UsageError naming the flag (exit 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace headroom {

// The device's limit in bytes, or nullopt when the sweep is judged by the host's pool (no
// --device-limit, --platform unified or not given).
std::optional<uint64_t> SweepDeviceLimit(const std::string& device_limit, const std::string& limit,
                                         const std::string& platform);

}  // namespace headroom
