// doctor --compare's reader and comparison on literal reports: hostile files are one error,
// and each check names the node that differs.
#include "doctor/fleet.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

std::string Report(std::string_view host, std::string_view driver, std::string_view cuda,
                   std::string_view torch, std::string_view nccl, std::string_view verdict) {
  return std::string(R"({"schema_version": 1, "host": ")") + std::string(host) +
         R"(", "platform": {"driver_version": ")" + std::string(driver) +
         R"(", "cuda_driver_version": ")" + std::string(cuda) + R"("}, "software": {"torch": ")" +
         std::string(torch) + R"(", "torch_cuda": "13.0", "nccl": ")" + std::string(nccl) +
         R"(", "nccl_wheel": null}, "checks": {"G11": "pass"}, "verdict": ")" +
         std::string(verdict) + R"("})";
}

NodeReport Node(const std::string& text) {
  auto n = ParseEnvReport(text, "/reports/n.json");
  EXPECT_TRUE(n.ok()) << (n.ok() ? "" : EnglishText(n.error().what));
  return n.ok() ? *n : NodeReport{};
}

std::string ParseError(std::string_view text) {
  auto n = ParseEnvReport(text, "x.json");
  return n.ok() ? "parsed" : EnglishText(n.error().what);
}

TEST(DoctorFleet, ReadsTheFieldsItCompares) {
  const NodeReport n = Node(Report("spark-1", "580.95.05", "13.0", "2.9.0", "2.28.3", "ready"));
  EXPECT_EQ(n.host, "spark-1");
  EXPECT_EQ(n.driver_version, "580.95.05");
  EXPECT_EQ(n.cuda_driver_version, "13.0");
  EXPECT_EQ(n.torch, "2.9.0");
  EXPECT_EQ(n.torch_cuda, "13.0");
  EXPECT_EQ(n.nccl, "2.28.3");
  EXPECT_EQ(n.nccl_wheel, std::nullopt);
  EXPECT_EQ(n.verdict, "ready");
  EXPECT_EQ(n.checks.at("G11"), "pass");
  // No host: the file's name stands in.
  EXPECT_EQ(Node(R"({"schema_version": 1})").host, "n.json");
}

TEST(DoctorFleet, HostileReportsAreOneError) {
  EXPECT_EQ(ParseError(""), "not JSON");
  EXPECT_EQ(ParseError("{\"schema_version\": 1"), "not JSON");
  EXPECT_EQ(ParseError("[1, 2]"), "not a JSON object");
  EXPECT_EQ(ParseError("{}"),
            "no integer schema_version: not an env-report.json of headroom doctor");
  EXPECT_EQ(ParseError(R"({"schema_version": "1"})"),
            "no integer schema_version: not an env-report.json of headroom doctor");
  EXPECT_EQ(ParseError(R"({"schema_version": 2})"), "schema_version 2: this headroom reads 1");
  EXPECT_EQ(ParseError(R"({"schema_version": -9223372036854775807})"),
            "schema_version -9223372036854775807: this headroom reads 1");
  EXPECT_EQ(ParseError(R"({"schema_version": 1, "platform": []})"), "platform: not an object");
  EXPECT_EQ(ParseError(R"({"schema_version": 1, "platform": {"driver_version": 580}})"),
            "platform.driver_version: not a string");
  EXPECT_EQ(ParseError(R"({"schema_version": 1, "software": {"nccl": {"v": 2}}})"),
            "software.nccl: not a string");
  EXPECT_EQ(ParseError(R"({"schema_version": 1, "checks": {"G1": 1}})"), "checks.G1: not a string");
  EXPECT_EQ(ParseError(R"({"schema_version": 1, "host": true})"), "host: not a string");
  EXPECT_EQ(ParseError(std::string(100000, '[')), "not JSON");  // deep nesting: refused
}

TEST(DoctorFleet, TheSameStackOnEveryNodePasses) {
  const auto checks =
      CompareNodes({Node(Report("a", "580.95.05", "13.0", "2.9.0", "2.28.3", "ready")),
                    Node(Report("b", "580.95.05", "13.0", "2.9.0", "2.28.3", "ready"))});
  ASSERT_EQ(checks.size(), 5u);
  for (const auto& c : checks) EXPECT_EQ(c.verdict, CheckVerdict::kPass) << c.id;
  EXPECT_EQ(EnglishText(checks[3].summary), "2.28.3 on every node");
  EXPECT_EQ(OverallVerdict(checks, std::nullopt), DoctorVerdict::kReady);
}

TEST(DoctorFleet, EachDifferenceHasItsVerdictAndNamesTheNodes) {
  const NodeReport a = Node(Report("a", "580.95.05", "13.0", "2.9.0", "2.28.3", "ready"));
  auto checks =
      CompareNodes({a, Node(Report("b", "580.82.09", "13.0", "2.9.0", "2.28.3", "ready"))});
  EXPECT_EQ(checks[0].verdict, CheckVerdict::kWarn);  // F1 driver build
  EXPECT_EQ(EnglishText(checks[0].summary), "differs across nodes: 580.82.09 on b; 580.95.05 on a");
  EXPECT_EQ(OverallVerdict(checks, std::nullopt), DoctorVerdict::kReadyWithWarnings);

  checks = CompareNodes({a, Node(Report("b", "580.95.05", "13.2", "2.9.0", "2.28.3", "ready"))});
  EXPECT_EQ(checks[1].verdict, CheckVerdict::kWarn);  // F2 another minor
  checks = CompareNodes({a, Node(Report("b", "580.95.05", "12.9", "2.9.0", "2.28.3", "ready"))});
  EXPECT_EQ(checks[1].verdict, CheckVerdict::kFail);  // F2 another major
  checks = CompareNodes({a, Node(Report("b", "580.95.05", "13.0", "2.8.0", "2.28.3", "ready"))});
  EXPECT_EQ(checks[2].verdict, CheckVerdict::kFail);  // F3 torch
  checks = CompareNodes({a, Node(Report("b", "580.95.05", "13.0", "2.9.0", "2.27.7", "ready"))});
  EXPECT_EQ(checks[3].verdict, CheckVerdict::kFail);  // F4 NCCL
  EXPECT_EQ(OverallVerdict(checks, std::nullopt), DoctorVerdict::kBlocked);
  checks = CompareNodes({a, Node(Report("b", "580.95.05", "13.0", "2.9.0", "2.28.3", "blocked"))});
  EXPECT_EQ(checks[4].verdict, CheckVerdict::kFail);  // F5 a node blocked on its own
  EXPECT_EQ(EnglishText(checks[4].summary), "blocked on b");
}

TEST(DoctorFleet, AFieldAReportLacksSkips) {
  const auto checks =
      CompareNodes({Node(Report("a", "580.95.05", "13.0", "2.9.0", "2.28.3", "ready")),
                    Node(R"({"schema_version": 1, "host": "old", "verdict": "ready"})")});
  EXPECT_EQ(checks[3].verdict, CheckVerdict::kSkip);
  EXPECT_EQ(EnglishText(checks[3].summary), "unknown on old");
  EXPECT_EQ(checks[4].verdict, CheckVerdict::kPass);
}

TEST(DoctorFleet, AWheelBesideTheSystemsNcclIsNamed) {
  NodeReport b = Node(Report("b", "580.95.05", "13.0", "2.9.0", "2.27.7", "ready"));
  b.nccl_wheel = "nvidia-nccl-cu13 2.27.7";
  const auto checks =
      CompareNodes({Node(Report("a", "580.95.05", "13.0", "2.9.0", "2.28.3", "ready")), b});
  ASSERT_FALSE(checks[3].details.empty());
  EXPECT_EQ(EnglishText(checks[3].details.back()),
            "a pip NCCL wheel on b; the system's library on a");
}

}  // namespace
}  // namespace headroom
