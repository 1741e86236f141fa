#include "cli/doctor_view.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "base/display_width.h"
#include "base/text.h"
#include "cli/cli.h"
#include "cli/i18n.h"
#include "cli/labels.h"
#include "cli/message_text.h"

namespace headroom {
namespace {

struct Counts {
  int fails = 0, warns = 0, skips = 0;
};

Counts PrintCheckLines(const CliEnv& env, const std::vector<CheckResult>& checks, bool verbose) {
  Counts n;
  for (const auto& c : checks) {
    // Padded by display width: a translated verdict is two CJK characters, four columns.
    std::fprintf(env.out, "%s %s %s: %s\n", PadToWidth(c.id, 4).c_str(),
                 PadToWidth(CheckVerdictLabel(c.verdict), 4).c_str(),
                 TranslatedText(c.title).c_str(), TranslatedText(c.summary).c_str());
    const bool show = verbose || c.verdict == CheckVerdict::kFail ||
                      c.verdict == CheckVerdict::kWarn || c.verdict == CheckVerdict::kSkip;
    if (show) {
      for (const auto& d : c.details)
        std::fprintf(env.out, "          %s\n", TranslatedText(d).c_str());
    }
    n.fails += c.verdict == CheckVerdict::kFail;
    n.warns += c.verdict == CheckVerdict::kWarn;
    n.skips += c.verdict == CheckVerdict::kSkip;
  }
  return n;
}

Counts PrintChecks(const CliEnv& env, const DoctorFacts& f, const std::vector<CheckResult>& checks,
                   bool verbose) {
  std::fprintf(env.out, "%s\n", TrFormat("platform: {}", TranslatedText(PlatformLine(f))).c_str());
  if (f.kernel_driver)
    std::fprintf(env.out, "%s\n", TrFormat("kernel module: {}", *f.kernel_driver).c_str());
  std::fputc('\n', env.out);
  return PrintCheckLines(env, checks, verbose);
}

void PrintDoctorVerdict(const CliEnv& env, DoctorVerdict verdict, const Counts& n, bool verbose) {
  // TRANSLATORS: doctor's last line: the overall verdict, then how many checks failed,
  // warned and were skipped.
  std::fprintf(
      env.out, "\n%s\n",
      (verbose
           ? TrFormat("verdict: {} ({} fail, {} warn, {} skip)", DoctorVerdictLabel(verdict),
                      n.fails, n.warns, n.skips)
           : TrFormat(
                 "verdict: {} ({} fail, {} warn, {} skip); --verbose shows every check's details",
                 DoctorVerdictLabel(verdict), n.fails, n.warns, n.skips))
          .c_str());
}

void PrintWorkload(const CliEnv& env, const WorkloadFacts& w) {
  std::fprintf(env.out, "\n%s\n  %s\n", TrFormat("workload: {}", w.description).c_str(),
               TranslatedText(w.plan_line).c_str());
  if (w.from_note) std::fprintf(env.out, "  %s\n", TranslatedText(*w.from_note).c_str());
  const double h = (static_cast<double>(w.budget_bytes) - static_cast<double>(w.peak_bytes)) / 1e9;
  // TRANSLATORS: headroom here is the memory left over, not the program's name.
  std::fprintf(
      env.out, "  %s\n",
      TrFormat("headroom: {:.2f} GB (GB = 1e9 bytes; budget minus the plan's peak)", h).c_str());
  for (const auto& a : w.advice) {
    std::fprintf(env.out, "  %s\n", TrFormat("advice: {}", TranslatedText(a)).c_str());
  }
}

}  // namespace

void PrintDoctorReport(const CliEnv& env, const DoctorFacts& f,
                       const std::vector<CheckResult>& checks, DoctorVerdict verdict, bool verbose,
                       const std::string& report_path) {
  const Counts n = PrintChecks(env, f, checks, verbose);
  if (f.workload) PrintWorkload(env, *f.workload);
  PrintDoctorVerdict(env, verdict, n, verbose);
  if (!report_path.empty())
    std::fprintf(env.out, "%s\n", TrFormat("report: {}", report_path).c_str());
}

void PrintCompareReport(const CliEnv& env, const std::vector<NodeReport>& nodes,
                        const std::vector<CheckResult>& checks, DoctorVerdict verdict,
                        bool verbose) {
  for (const auto& node : nodes)
    std::fprintf(
        env.out, "%s\n",
        TrFormat("node: {} ({})", EscapeControls(node.host), EscapeControls(node.source)).c_str());
  std::fputc('\n', env.out);
  PrintDoctorVerdict(env, verdict, PrintCheckLines(env, checks, verbose), verbose);
}

void PrintLinkReport(const CliEnv& env, int rank, int world, const std::vector<CheckResult>& checks,
                     DoctorVerdict verdict, bool verbose) {
  std::fprintf(env.out, "%s\n\n", TrFormat("link: rank {} of {}", rank, world).c_str());
  PrintDoctorVerdict(env, verdict, PrintCheckLines(env, checks, verbose), verbose);
}

void PrintBandwidthNotice(const CliEnv& env) {
  if (!isatty(fileno(env.err))) return;
  std::fprintf(env.err, "%s\n",
               Tr("measuring copy bandwidth for G5 (about a second; --no-bandwidth skips it)..."));
}

}  // namespace headroom
