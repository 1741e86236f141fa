// The guardian's CLI tests' shared steps (tests/cli/guardian*_test.cc): its arguments with the
// fake NVML and an events file, levels MemAvailable is already below, the balloon's command
// line, and bounded waits for a process to hold its memory and for an event.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "sys/processes.h"
#include "sys/sysroot.h"
#include "testing_files.h"
#include "testing_memory.h"

namespace headroom::testing {

inline const std::string kGuardianBalloon = HEADROOM_BALLOON;

inline std::vector<std::string> Balloon(std::vector<std::string> extra) {
  std::vector<std::string> a{kGuardianBalloon, "--timeout", "60s"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// Waits (bounded) until `pid` holds `bytes` of RSS or of a memfd (status VmRSS, or fd sizes
// as the guardian reads them: the balloon's progress is not needed).
inline void WaitHeld(pid_t pid, uint64_t kib) {
  for (int i = 0; i < 1000; ++i) {
    auto status = SysRoot("/").ReadFile("proc/" + std::to_string(pid) + "/status");
    // Not the forked copy of this test before exec: under ASan its RSS alone can pass `kib`.
    if (status && status->find("Name:\theadroom_test\n") == std::string::npos) {
      const auto at = status->find("VmRSS:");
      if (at != std::string::npos && std::stoull(status->substr(at + 6)) >= kib) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// The events of --events FILE, once one of type `type` is there (bounded: 15 s).
inline std::vector<nlohmann::json> WaitEvent(const std::string& path, const std::string& type) {
  for (int i = 0; i < 1500; ++i) {
    std::vector<nlohmann::json> out;
    std::ifstream in(path);
    std::string line;
    bool found = false;
    while (std::getline(in, line)) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded()) continue;
      found = found || j["type"] == type;
      out.push_back(j);
    }
    if (found) return out;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return {};
}

inline nlohmann::json First(const std::vector<nlohmann::json>& events, const std::string& type) {
  for (const auto& e : events)
    if (e["type"] == type) return e;
  return {};
}

inline std::string Mib(uint64_t bytes) { return std::to_string(bytes >> 20) + "MiB"; }

// A level MemAvailable is already below: the guardian acts at its first reading. Levels stay
// under MemTotal (a level at or above it is refused, docs/guard.md "Levels"): on a quiet machine
// MemAvailable + 1 GiB can be more than MemTotal.
inline std::vector<std::string> CrossedLevels() {
  const uint64_t now = AvailableNow();
  const uint64_t kill = testing::CrossedLevelBytes();
  const uint64_t warn = std::min(now + (2ULL << 30), TotalNow() - (64ULL << 20));
  EXPECT_LT(now, kill) << "MemAvailable is within 128 MiB of MemTotal: no level crosses it";
  return {"--min-available", Mib(kill), "--warn-available", Mib(warn)};
}

// Waits (up to 5 s) until the guardian started as `pid` is the lean worker `headroom guardian`
// execs (its comm cut to 15 bytes) and sleeps in its wait between readings; false if it never
// is.
inline bool WaitGuardianWaiting(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    auto stat = ReadProcStat(SysRoot("/"), pid);
    if (stat && stat->comm == "headroom-guardi" && stat->state == 'S') return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

inline std::vector<std::string> GuardianArgs(const TempDir& dir, std::vector<std::string> extra) {
  std::vector<std::string> a{
      HEADROOM_BINARY,          "guardian",   "--no-journal",         "--events",
      dir.File("events.jsonl"), "--nvml-lib", HEADROOM_FAKE_NVML_PATH};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

}  // namespace headroom::testing
