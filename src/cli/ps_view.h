// ps's table for the terminal, in the user's language: the holders, their settings and
// notes, the advice beside a job (--need) and NVML's note (pool/pool_survey.h has the data
// and its JSON).
#pragma once

#include "cli/cli.h"
#include "pool/pool_survey.h"

namespace headroom {

void PrintPoolSurvey(const CliEnv& env, const PoolSurvey& survey);

}  // namespace headroom
