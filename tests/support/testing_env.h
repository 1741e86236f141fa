// A made-up environment for the configuration tests: the resolver and the file locator read
// variables through a GetEnvFn, never the process's own environment.
#pragma once

#include <map>
#include <string>

#include "config/settings.h"

namespace headroom::testing {

// A GetEnvFn that knows exactly `vars`: any other name is unset (nullptr).
inline GetEnvFn FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

}  // namespace headroom::testing
