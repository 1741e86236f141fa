#include "cli/doctor_compare.h"

#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include "base/safe_file.h"
#include "cli/doctor_view.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "doctor/fleet.h"

namespace headroom {

int RunDoctorCompare(const CliEnv& env, const std::vector<std::string>& paths, bool json,
                     bool verbose, bool gather_flags) {
  if (gather_flags)
    throw UsageError{Tr("--compare reads reports: --workload, --report and --config do not apply")};
  if (paths.size() < 2)
    throw UsageError{
        Tr("--compare: give two or more env-report.json files (doctor --report on each node)")};
  std::vector<NodeReport> nodes;
  for (const auto& path : paths) {
    auto text = ReadInputFile(path, kMaxEnvReportBytes);
    if (!text) throw UsageError{"--compare: " + TranslatedText(text.error().what)};
    auto node = ParseEnvReport(*text, path);
    if (!node)
      throw UsageError{fmt::format("--compare: {}: {}", path, TranslatedText(node.error().what))};
    nodes.push_back(std::move(*node));
  }
  const auto checks = CompareNodes(nodes);
  const DoctorVerdict verdict = OverallVerdict(checks, std::nullopt);
  if (json) {
    std::fputs((CompareJson(nodes, checks, verdict).dump(2) + "\n").c_str(), env.out);
  } else {
    PrintCompareReport(env, nodes, checks, verdict, verbose);
  }
  return ExitStatusFor(verdict);
}

}  // namespace headroom
