// guard's group and companion setup at the edge: the guard group this node joins, from the
// flags, the launcher's variables and the secret (file, environment, or made here and
// printed), and the line that says when the job's python keeps --hooks out.
#pragma once

#include <memory>

#include "cli/cli.h"
#include "guard/guard_group.h"
#include "guard/guard_request.h"

namespace headroom {

// The guard group this node joins (nullptr without --group). `lost`: a member found no
// coordinator within --group-wait (printed; the guard exits kExitGroupPeerLost). Usage
// errors are thrown as UsageError.
std::unique_ptr<GuardGroup> StartGroup(const CliEnv& env, const GuardGroupRequest& r, bool& lost);

// --hooks with a Python interpreter that will never run its sitecustomize (guard/python_flags.h):
// one line, so the user knows the job runs without the companion's hooks.
void SayWhenHooksCannotApply(const CliEnv& env, const GuardRequest& request);

}  // namespace headroom
