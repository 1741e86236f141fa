// Runs the nvml_probe tool (tests/tools/nvml_probe.cc) against the fake libnvidia-ml, so the
// program meant for a one-off run on real hardware is known to work before that run.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace headroom {
namespace {

struct ProbeRun {
  int status = -1;
  std::string output;  // stdout and stderr together
};

ProbeRun RunProbe(const std::string& args) {
  ProbeRun run;
  const std::string command = std::string(HEADROOM_NVML_PROBE) + " " + args + " 2>&1";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) run.output.append(buffer, n);
  const int status = ::pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

TEST(NvmlProbe, PrintsEveryReadingOfTheFakeGb10) {
  const auto script = std::filesystem::temp_directory_path() /
                      ("headroom-probe-" + std::to_string(::getpid()) + ".txt");
  std::ofstream(script) << "scenario gb10\n";
  ::setenv("HEADROOM_FAKE_NVML_SCRIPT", script.c_str(), 1);
  const ProbeRun run = RunProbe(std::string("--nvml-lib ") + HEADROOM_FAKE_NVML_PATH);
  ::unsetenv("HEADROOM_FAKE_NVML_SCRIPT");
  std::filesystem::remove(script);

  EXPECT_EQ(run.status, 0) << run.output;
  for (const char* expected : {
           "devices: 1",
           "NVIDIA GB10",
           "symbol nvmlDeviceGetMemoryInfo_v2",
           "clock_event_reasons        0x0 (none)",
           "memory_total_bytes         n/a",
           "unavailable: nvmlDeviceGetMemoryInfo: not supported (nvml error 3)",
           "pid 4242 used_bytes 67036512256",
           "platform: gb10, memory from /proc/meminfo",
       }) {
    EXPECT_NE(run.output.find(expected), std::string::npos) << expected << "\n" << run.output;
  }
}

TEST(NvmlProbe, MissingLibraryIsOneLineAndStatusOne) {
  const ProbeRun run = RunProbe("--nvml-lib /nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(run.status, 1);
  EXPECT_TRUE(run.output.starts_with("headroom: nvml: dlopen(/nonexistent/libnvidia-ml.so.1): "))
      << run.output;
  EXPECT_EQ(run.output.find('\n'), run.output.size() - 1) << run.output;
}

}  // namespace
}  // namespace headroom
