// Byte sizes and parameter counts: parsing what users type and printing with honest units.
//
// Units (the brief's rule): GB = 1e9 bytes, GiB = 2^30 bytes, and every printed figure says
// which. Parsing: "16G" and "16GiB" are binary (the habit of `free -h`, `ulimit`, Slurm and
// Docker: a bare G means GiB), "100GB" is decimal, "1.5T" is 1.5 TiB, a bare number is
// bytes. Parameter counts: "70B" = 70e9, "350M" = 350e6, "1.5e9", "8030261248".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace headroom {

inline constexpr uint64_t kKiB = 1024ULL;
inline constexpr uint64_t kMiB = 1024ULL * kKiB;
inline constexpr uint64_t kGiB = 1024ULL * kMiB;
inline constexpr uint64_t kTiB = 1024ULL * kGiB;
inline constexpr uint64_t kGB = 1000ULL * 1000ULL * 1000ULL;

// Parses a size such as "16G", "16GiB", "100GB", "1.5T", "512M", "4096". Negative, zero
// when `allow_zero` is false, NaN, overflow past 2^63 and trailing garbage are errors whose
// message names the text and the problem (the caller adds the flag name).
Result<uint64_t> ParseBytes(std::string_view text, bool allow_zero = false);

// Parses a parameter count: "70B", "1.5e9", "350M", "8K", "8030261248". Must be >= 1.
Result<uint64_t> ParseParamCount(std::string_view text);

// Parses a strictly positive integer flag value ("4", not "4.5", "-1", "0", "1e3").
Result<int64_t> ParsePositiveInt(std::string_view text);

// "115.23 GiB" (binary, two decimals).
std::string FormatGiB(uint64_t bytes);
// "123.70 GB" (decimal, two decimals).
std::string FormatGB(uint64_t bytes);
// Both units: "40.12 GB (37.36 GiB)".
std::string FormatBoth(uint64_t bytes);
// A parameter count for people: "8.03B", "494M", "1.57M", "12.3K".
std::string FormatParamCount(uint64_t params);

}  // namespace headroom
