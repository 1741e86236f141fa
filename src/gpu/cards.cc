#include "gpu/cards.h"

#include <array>
#include <cctype>
#include <string>

namespace headroom {
namespace {

constexpr uint64_t kGb = 1'000'000'000ULL;

// Vendor pages: docs/sources.md "GPU memory of common cards".
constexpr std::array kCards = {
    GpuCard{"h100", "H100 80GB", 80 * kGb, "h100-sxm,h100-pcie,h100-80gb"},
    GpuCard{"h100-nvl", "H100 NVL 94GB", 94 * kGb, ""},
    GpuCard{"h200", "H200 141GB", 141 * kGb, "h200-sxm,h200-nvl"},
    GpuCard{"a100-40gb", "A100 40GB", 40 * kGb, "a100-40"},
    GpuCard{"a100-80gb", "A100 80GB", 80 * kGb, "a100,a100-80"},
    GpuCard{"l40s", "L40S 48GB", 48 * kGb, ""},
    GpuCard{"l4", "L4 24GB", 24 * kGb, ""},
    GpuCard{"rtx-3090", "GeForce RTX 3090 24GB", 24 * kGb, "3090"},
    GpuCard{"rtx-4090", "GeForce RTX 4090 24GB", 24 * kGb, "4090"},
    GpuCard{"rtx-5090", "GeForce RTX 5090 32GB", 32 * kGb, "5090"},
    GpuCard{"rtx-a6000", "RTX A6000 48GB", 48 * kGb, "a6000"},
    GpuCard{"rtx-6000-ada", "RTX 6000 Ada 48GB", 48 * kGb, "6000-ada"},
    GpuCard{"rtx-pro-6000", "RTX PRO 6000 Blackwell 96GB", 96 * kGb, "rtx-pro-6000-blackwell"},
};

// Lower case, without blanks, '-' or '_'.
std::string Folded(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == ' ' || c == '-' || c == '_' || c == '\t') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

std::span<const GpuCard> GpuCards() { return kCards; }

const GpuCard* FindGpuCard(std::string_view name) {
  const std::string wanted = Folded(name);
  if (wanted.empty()) return nullptr;
  for (const GpuCard& card : kCards) {
    if (Folded(card.key) == wanted) return &card;
    std::string_view rest = card.aliases;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      if (Folded(rest.substr(0, comma)) == wanted) return &card;
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  return nullptr;
}

}  // namespace headroom
