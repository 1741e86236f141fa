#include "cli/bandwidth_view.h"

#include <cstdio>
#include <string>

#include "base/bytes.h"
#include "cli/i18n.h"
#include "cli/message_text.h"

namespace headroom {

void PrintHostCopyLowered(const CliEnv& env, uint64_t host_bytes, uint64_t available_bytes) {
  std::fprintf(env.out, "%s\n",
               TrFormat("--size lowered to {} (1/8 of MemAvailable {})", FormatGiB(host_bytes),
                        FormatGiB(available_bytes))
                   .c_str());
}

void PrintBandwidthReport(const CliEnv& env, const BandwidthReport& r, bool device_only) {
  if (r.host && r.host->copy) {
    const CopyMeasurement& m = *r.host->copy;
    std::fprintf(
        env.out, "%s\n",
        TrFormat("host copy, {}: {}", TranslatedText(m.what), TranslatedText(DescribeCopy(m)))
            .c_str());
  }
  for (const auto& d : r.devices) {
    if (!d.outcome.copy) continue;
    const CopyMeasurement& m = *d.outcome.copy;
    std::fprintf(
        env.out, "%s\n",
        TrFormat("device copy, {}: {}", TranslatedText(m.what), TranslatedText(DescribeCopy(m)))
            .c_str());
    if (d.gb10) std::fprintf(env.out, "  %s\n", TranslatedText(Gb10BandText(m)).c_str());
  }
  if (!r.device_error.empty() && !device_only) {
    std::fprintf(
        env.out, "%s\n",
        TrFormat("device copy: not measured ({})", TranslatedText(r.device_error)).c_str());
  }
  std::fprintf(env.out, "%s\n", Tr("GB/s: GB = 1e9 bytes, counting bytes read + bytes written"));
}

void PrintBandwidthFailures(const CliEnv& env, const BandwidthReport& r, bool device_only) {
  if (r.host && !r.host->copy) PrintError(env, "bandwidth: " + TranslatedText(r.host->error));
  for (const auto& d : r.devices) {
    if (!d.outcome.copy) PrintError(env, "bandwidth: " + TranslatedText(d.outcome.error));
  }
  if (!r.device_error.empty() && device_only)
    PrintError(env, "bandwidth: " + TranslatedText(r.device_error));
}

}  // namespace headroom
