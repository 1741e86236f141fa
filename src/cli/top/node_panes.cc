#include "cli/top/node_panes.h"

#include <fmt/format.h>

#include "base/bytes.h"
#include "base/text.h"
#include "cli/i18n.h"
#include "cli/message_text.h"

namespace headroom {
namespace {

std::string Indented(const std::string& label, const std::string& text) {
  return "  " + label + " " + text + "\n";
}

}  // namespace

std::string NodePaneText(const NodeUrl& url, const Result<NodeMetrics>& read) {
  // The URL is the user's, the platform label the peer's: both shown, never obeyed.
  const std::string url_text = EscapeControls(url.text);
  if (!read) {
    return TrFormat("node {}: unreachable: {}", url_text, TranslatedText(read.error().what)) + "\n";
  }
  const NodeMetrics& m = *read;
  std::string out = m.platform.empty()
                        ? TrFormat("node {}", url_text)
                        : TrFormat("node {} ({})", url_text, EscapeControls(m.platform));
  out += "\n";
  if (m.mem_available_bytes && m.mem_total_bytes && *m.mem_total_bytes > 0) {
    out +=
        Indented(Tr("memory:"), TrFormat("MemAvailable {} of {} ({:.0f}%)",
                                         FormatGiB(static_cast<uint64_t>(*m.mem_available_bytes)),
                                         FormatGiB(static_cast<uint64_t>(*m.mem_total_bytes)),
                                         100 * *m.mem_available_bytes / *m.mem_total_bytes));
  } else {
    out += Indented(Tr("memory:"), Tr("not on the page"));
  }
  if (m.psi_some_avg10_ratio)
    out += Indented(Tr("pressure:"),
                    TrFormat("PSI some avg10 {:.1f}%", 100 * *m.psi_some_avg10_ratio));
  if (m.gpu_temperature_c || m.gpu_power_w) {
    std::string gpu;
    if (m.gpu_temperature_c) gpu += fmt::format("{:.0f} °C", *m.gpu_temperature_c);
    if (m.gpu_power_w) gpu += (gpu.empty() ? "" : ", ") + fmt::format("{:.1f} W", *m.gpu_power_w);
    if (m.gpu_utilization_ratio)
      gpu += (gpu.empty() ? "" : ", ") + fmt::format("{:.0f}%", 100 * *m.gpu_utilization_ratio);
    out += Indented(Tr("GPU:"), gpu);
  }
  if (m.guard_runs)
    out += Indented(Tr("guards:"), TrFormat("{:.0f} runs, {:.0f} ended for memory", *m.guard_runs,
                                            m.guard_kills.value_or(0)));
  return out;
}

}  // namespace headroom
