// headroom: keeps long ML training jobs alive on unified-memory machines.
// main holds the table of subcommands (docs/style.md rule 14); cli/cli.cc runs it, and is the
// only place that names the real system root.
#include "cli/cli.h"
#include "cli/i18n.h"  // N_

namespace headroom {
namespace {

constexpr Subcommand kSubcommands[] = {
    {"plan", N_("will this model, method, batch and packing fit in the memory pool?"),
     DefinePlanFlags, RunPlan},
    {"guard", N_("run a job so that running out of memory kills the job, never the machine"),
     DefineGuardFlags, RunGuardCommand},
    {"guardian",
     N_("guard the whole machine: end the one job that holds the pool when memory runs out"),
     DefineGuardianFlags, RunGuardianCommand},
    {"sweep", N_("find the largest batch or packing that fits, one guarded trial at a time"),
     DefineSweepFlags, RunSweepCommand},
    {"watch", N_("sample temperature, power, clocks and memory into a durable CSV, beside a job"),
     DefineWatchFlags, RunWatchCommand},
    {"explain", N_("find where a run slowed down and say why, from its log and watch's samples"),
     DefineExplainFlags, RunExplainCommand},
    {"doctor",
     N_("preflight before a long run: checks G1-G11 of known failure modes, with a verdict"),
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

}  // namespace
}  // namespace headroom

int main(int argc, char** argv) { return headroom::RunCli(headroom::kSubcommands, argc, argv); }
