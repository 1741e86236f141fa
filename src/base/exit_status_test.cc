// base/exit_status.h is the one table of exit statuses, and docs/cli.md lists the same one.
#include "base/exit_status.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "testing_files.h"

namespace headroom {
namespace {

using testing::Slurp;

TEST(ExitStatus, DocsTableListsEveryStatusOfTheHeader) {
  const std::string header = Slurp(std::string(HEADROOM_SOURCE_DIR) + "/src/base/exit_status.h");
  const std::string docs = Slurp(std::string(HEADROOM_SOURCE_DIR) + "/docs/cli.md");
  ASSERT_FALSE(header.empty());
  ASSERT_FALSE(docs.empty());
  // The statuses every command shares (doctor's own are the paragraph below the table).
  std::set<int> shared, doctor;
  const std::regex constant(R"(inline constexpr int (kExit\w+) = (\d+);)");
  for (auto it = std::sregex_iterator(header.begin(), header.end(), constant);
       it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    (name.rfind("kExitDoctor", 0) == 0 ? doctor : shared).insert(std::stoi((*it)[2]));
  }
  EXPECT_EQ(shared,
            (std::set<int>{kExitOk, kExitNegative, kExitUsage, kExitRefused, kExitSweepUntried,
                           kExitGuardKilled, kExitGroupPeerMemory, kExitGroupPeerFailed,
                           kExitGroupPeerLost, kExitSweepInterrupted, kExitInternal}));
  EXPECT_EQ(doctor, (std::set<int>{kExitDoctorReady, kExitDoctorWarnings, kExitDoctorBlocked,
                                   kExitDoctorUsage}));
  std::set<int> documented;
  const std::regex row(R"(\n\| (\d+) \|)");
  for (auto it = std::sregex_iterator(docs.begin(), docs.end(), row); it != std::sregex_iterator();
       ++it) {
    documented.insert(std::stoi((*it)[1]));
  }
  EXPECT_EQ(documented, shared);
  std::string prose = docs;  // doctor's sentence may wrap
  for (char& c : prose) c = c == '\n' ? ' ' : c;
  EXPECT_NE(prose.find("**0** ready, **1** ready with warnings, **2** blocked, **3** usage error"),
            std::string::npos);
}

}  // namespace
}  // namespace headroom
