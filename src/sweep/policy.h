// The sweep's defaults, where a flag does not say: the limit a trial's peak may reach, the
// margin the fit keeps below it, when the pool counts as recovered between trials, and how
// much MemAvailable a sweep needs before it starts. Pure functions of MemTotal and the
// other levels (the flags in docs/sweep.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "base/result.h"
#include "sys/pool_levels.h"  // DefaultSweepLimitBytes: the limit is one of the pool's levels

namespace headroom {

// 3 % of the limit, at least 256 MiB: run-to-run noise of a trainer's peak plus what the
// fit cannot know.
uint64_t DefaultSweepMarginBytes(uint64_t limit_bytes);

// Recovered between trials: within 2 % of MemTotal of the pre-sweep MemAvailable, at least
// 512 MiB.
uint64_t DefaultSettleToleranceBytes(uint64_t mem_total_bytes);

// Room to start: the limit plus the guard's kill level, at most MemTotal.
uint64_t DefaultRequireAvailableBytes(uint64_t limit_bytes, uint64_t kill_level_bytes,
                                      uint64_t mem_total_bytes);

// The limit: --limit's bytes when given (`given_bytes`), else `default_bytes` (the pool's
// levels' sweep_limit, sys/pool_levels.h: DefaultSweepLimitBytes with the levels in force);
// more than MemTotal is an error naming --limit.
Result<uint64_t> SweepLimitBytes(std::optional<uint64_t> given_bytes, uint64_t mem_total_bytes,
                                 uint64_t default_bytes);

// Where trial logs go: --logs DIR when given, else sweeps/ beside the journal.
std::filesystem::path SweepLogDir(const std::string& logs_flag,
                                  const std::filesystem::path& journal_path);

}  // namespace headroom
