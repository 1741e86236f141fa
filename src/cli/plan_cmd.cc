#include "cli/cli.h"

namespace headroom {

int RunPlan(const CliEnv& env, const std::vector<std::string>&) {
  PrintError(env, "plan: not built yet");
  return kExitUsage;
}

}  // namespace headroom
