// SetGatherEnvironment: the variables the checks read, through a getenv given as a table.
#include "doctor/gather.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace headroom {
namespace {

TEST(DoctorGather, EnvironmentIsReadThroughTheGivenGetenv) {
  const std::map<std::string, std::string> vars = {{"VIRTUAL_ENV", "/home/u/venv"},
                                                   {"CONDA_PREFIX", ""},
                                                   {"PATH", "/usr/bin:/bin"},
                                                   {"TORCH_CUDA_ARCH_LIST", "12.1"},
                                                   {"WORLD_SIZE", "2"},
                                                   {"container", "podman"},
                                                   {"HOME", "/home/u"}};
  const auto getenv = [&](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  GatherOptions o = DoctorGatherOptions();
  o.python.python_flag = "/opt/py/bin/python3";
  SetGatherEnvironment(o, getenv);
  EXPECT_EQ(o.python.python_flag, "/opt/py/bin/python3");  // the flag is the CLI's, kept
  EXPECT_EQ(o.python.virtual_env, "/home/u/venv");
  EXPECT_FALSE(o.python.conda_prefix.has_value());  // set but empty counts as unset
  EXPECT_EQ(o.python.path, "/usr/bin:/bin");
  EXPECT_EQ(o.torch_cuda_arch_list, "12.1");
  EXPECT_EQ(o.world_size, "2");
  EXPECT_FALSE(o.nnodes.has_value());  // unset
  EXPECT_EQ(o.container_env, "podman");
}

}  // namespace
}  // namespace headroom
