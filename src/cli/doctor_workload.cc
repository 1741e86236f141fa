// doctor --workload (cli/doctor_workload.h): parsed by plan's definitions, planned once.
#include "cli/doctor_workload.h"

#include <optional>
#include <string>

#include "cli/plan_args.h"
#include "plan/run_config.h"

namespace headroom {

WorkloadFacts PlanDoctorWorkload(const CliEnv& env, const std::string& workload,
                                 const SysRoot& root) {
  std::optional<FromFile> from;
  const PlanRequest request = ParseWorkloadRequest(workload, &from);
  WorkloadFacts planned =
      PlanWorkloadFacts(workload, ResolveRequest(request, "--workload", root.root().string(), env));
  if (from) {
    planned.from_file = from->path;
    planned.from_format = std::string(Name(from->config.format));
    planned.not_modelled = from->config.not_modelled;
    planned.from_note = NotModelledNote(from->config, from->path);
  }
  return planned;
}

}  // namespace headroom
