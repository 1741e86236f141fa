#include "cli/report_view.h"

#include <cstdio>

#include "cli/i18n.h"

namespace headroom {

void PrintReportWritten(const CliEnv& env, const std::string& out_path, size_t page_bytes,
                        const nlohmann::ordered_json& data, bool with_log) {
  const auto& sampling = data["sampling"];
  const double megabytes = static_cast<double>(page_bytes) / 1e6;
  const std::string rows = sampling["rows"].dump(), buckets = sampling["buckets"].dump();
  const double bucket_s = sampling["bucket_s"].get<double>();
  const size_t events = data["events"].size();
  std::fprintf(
      env.out, "%s\n",
      (!with_log
           ? TrFormat("wrote {} ({:.2f} MB): {} rows in {} buckets of {:.3g} s, {} events",
                      out_path, megabytes, rows, buckets, bucket_s, events)
           : TrFormat("wrote {} ({:.2f} MB): {} rows in {} buckets of {:.3g} s, {} events, {} "
                      "slowdowns",
                      out_path, megabytes, rows, buckets, bucket_s, events,
                      data["slowdowns"].size()))
          .c_str());
}

}  // namespace headroom
