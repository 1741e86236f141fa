// headroom: keeps long ML training jobs alive on unified-memory machines.
// main holds the table of subcommands (docs/style.md rule 14) and is the only place that names
// the real system root.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/i18n.h"
#include "base/version.h"
#include "cli/cli.h"

namespace headroom {
namespace {

constexpr Subcommand kSubcommands[] = {
    {"plan", N_("will this model, method, batch and packing fit in the memory pool?"),
     DefinePlanFlags, RunPlan},
    {"guard", N_("run a job so that running out of memory kills the job, never the machine"),
     DefineGuardFlags, RunGuardCommand},
    {"sweep", N_("find the largest batch or packing that fits, one guarded trial at a time"),
     DefineSweepFlags, RunSweepCommand},
    {"watch", N_("sample temperature, power, clocks and memory into a durable CSV, beside a job"),
     DefineWatchFlags, RunWatchCommand},
    {"explain", N_("find where a run slowed down and say why, from its log and watch's samples"),
     DefineExplainFlags, RunExplainCommand},
    {"doctor",
     N_("preflight before a long run: checks G1-G10 of known failure modes, with a verdict"),
     DefineDoctorFlags, RunDoctorCommand},
    {"bandwidth", N_("measure host and GPU memory copy bandwidth (GB/s, bytes read + written)"),
     DefineBandwidthFlags, RunBandwidthCommand},
    {"ps", N_("who else holds the memory pool: servers, trainers, GPU processes, their caps"),
     DefinePsFlags, RunPsCommand},
    {"top", N_("a live view: pool, pressure, GPU, the processes holding the pool, guards, events"),
     DefineTopFlags, RunTopCommand},
    {"ladder", N_("walk an OOM through its remedies in order, one job at a time, recorded"),
     DefineLadderFlags, RunLadderCommand},
    {"report",
     N_("draw a run as one self-contained HTML page: memory, power, clocks, step rate, events"),
     DefineReportFlags, RunReportCommand},
    {"export",
     N_("serve memory, pressure, GPU and guard metrics to Prometheus on /metrics (loopback)"),
     DefineExportFlags, RunExportCommand},
    {"history", N_("list recent guarded runs and sweeps from the journal"), DefineHistoryFlags,
     RunHistory},
    {"config",
     N_("show the configuration: each setting's value and where it came from (config.toml, "
        "environment)"),
     DefineConfigFlags, RunConfigCommand},
};

// Where the message catalogs are: beside the binary in a build tree (build/locale), or
// ../share/locale from an installed bin/ (PREFIX/share/locale). Relative to the binary, so an
// installed tree can be moved and a build tree needs no install step.
std::string FindLocaleDir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const std::filesystem::path dir = exe.parent_path();
  for (const auto& candidate : {dir / "locale", dir.parent_path() / "share" / "locale"}) {
    if (std::filesystem::is_directory(candidate, ec)) return candidate.string();
  }
  return {};
}

void PrintUsage(std::FILE* out) {
  std::fprintf(out, "%s\n\n%s\n\n%s\n",
               TrFormat("headroom {}: keeps long ML training jobs alive on unified-memory machines",
                        std::string(HeadroomVersion()))
                   .c_str(),
               // TRANSLATORS: keep "headroom <command> [options]" and "--help" as they are.
               Tr("usage: headroom <command> [options]   (headroom help <command>, or headroom "
                  "<command> --help)"),
               Tr("commands:"));
  for (const auto& c : kSubcommands) {
    // The summaries are NUL-terminated literals (N_ above), translated here.
    std::fprintf(out, "  %-10s %s\n", std::string(c.name).c_str(), Tr(c.summary.data()));
  }
  std::fprintf(out, "\n%s\n",
               Tr("exit status: 0 success, 1 a negative answer (e.g. does not fit), 2 usage or "
                  "input error"));
}

}  // namespace
}  // namespace headroom

int main(int argc, char** argv) {
  using namespace headroom;
  if (const std::string dir = FindLocaleDir(); !dir.empty()) InitMessages(dir);
  if (argc < 2) {
    PrintUsage(stderr);
    return kExitUsage;
  }
  const std::string_view first = argv[1];
  if (first == "--help" || first == "-h") {
    const CliEnv env{"/", stdout, stderr, LoadConfig(std::getenv)};
    PrintUsage(stdout);
    for (const auto& e : env.config.errors) PrintError(env, e);
    return kExitOk;
  }
  if (first == "help") {
    const CliEnv env{"/", stdout, stderr, LoadConfig(std::getenv)};
    return RunHelpCommand(env, kSubcommands, std::vector<std::string>(argv + 2, argv + argc),
                          PrintUsage);
  }
  if (first == "--version" || first == "-V") {
    std::printf("headroom %s (git %s)\n", std::string(HeadroomVersion()).c_str(),
                std::string(GitRevision()).c_str());
    return kExitOk;
  }
  for (const auto& c : kSubcommands) {
    if (c.name == first)
      return RunSubcommand(c, "/", std::vector<std::string>(argv + 2, argv + argc));
  }
  const CliEnv env{"/", stdout, stderr, {}};
  PrintError(env, TrFormat("unknown command '{}' (see headroom --help)", first));
  return kExitUsage;
}
