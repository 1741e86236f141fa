// doctor --peer's judgement on literal probe answers: the bus bandwidth formula, the
// two-Spark thresholds with the power-cycle advice, and ranks that differ named by node.
#include "doctor/link.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

RankFacts Facts(int rank, std::string host) {
  RankFacts f;
  f.rank = rank;
  f.host = std::move(host);
  f.torch = "2.9.0+cu130";
  f.torch_cuda = "13.0";
  f.nccl = "2.28.3";
  f.nvcc = "no";
  f.env = {{"NCCL_SOCKET_IFNAME", "enp1s0f0np0"}};
  return f;
}

// A two-node answer whose median all-reduce of `bytes` took `seconds`.
LinkProbeResult Measured(std::string backend, uint64_t bytes, double seconds) {
  LinkProbeResult r;
  r.ok = true;
  r.world = 2;
  r.backend = std::move(backend);
  r.size_bytes = bytes;
  r.seconds = {seconds * 1.1, seconds, seconds * 0.9};
  r.ranks = {Facts(0, "spark-1"), Facts(1, "spark-2")};
  return r;
}

std::string Text(const Message& m) { return EnglishText(m); }

std::string AllDetails(const CheckResult& c) {
  std::string s;
  for (const auto& d : c.details) s += Text(d) + "\n";
  return s;
}

TEST(DoctorLink, BusBandwidthIsNcclTestsAllReduceConvention) {
  // algbw = bytes / s; busbw = algbw * 2 (n - 1) / n: equal for 2 ranks, 1.5x for 4.
  EXPECT_DOUBLE_EQ(AllReduceBusGBps(1'000'000'000, 0.5, 2), 2.0);
  EXPECT_DOUBLE_EQ(AllReduceBusGBps(1'000'000'000, 0.5, 4), 3.0);
  EXPECT_DOUBLE_EQ(AllReduceBusGBps(1'000'000'000, 0.5, 1), 0.0);
  EXPECT_DOUBLE_EQ(AllReduceBusGBps(1'000'000'000, 0.0, 2), 0.0);
  const LinkFigures f = FiguresOf(Measured("nccl", 256'000'000, 0.0128));
  EXPECT_NEAR(f.busbw_median, 20.0, 1e-9);
  EXPECT_NEAR(f.busbw_fastest, 20.0 / 0.9, 1e-9);
  EXPECT_NEAR(f.busbw_slowest, 20.0 / 1.1, 1e-9);
}

TEST(DoctorLink, HealthySparkLinkPasses) {
  const CheckResult c = CheckLink(Measured("nccl", 256'000'000, 256e6 / 21e9), std::nullopt);
  EXPECT_EQ(c.verdict, CheckVerdict::kPass);
  EXPECT_EQ(Text(c.summary), "21.00 GB/s bus bandwidth (GB = 1e9 bytes), expected about 21 GB/s");
}

TEST(DoctorLink, ThreeGbpsOnASparkLinkFailsAndSaysPowerCycle) {
  const CheckResult c = CheckLink(Measured("nccl", 256'000'000, 256e6 / 3e9), std::nullopt);
  EXPECT_EQ(c.verdict, CheckVerdict::kFail);
  EXPECT_NE(Text(c.summary).find("3.000 GB/s"), std::string::npos) << Text(c.summary);
  const std::string details = AllDetails(c);
  EXPECT_NE(details.find("only a full power cycle of the Sparks clears it"), std::string::npos)
      << details;
  EXPECT_NE(details.find("RDMA (ib_write_bw) still reads a healthy 24.5 GB/s"), std::string::npos);
}

TEST(DoctorLink, HalfTheExpectedFigureWarns) {
  const CheckResult c = CheckLink(Measured("nccl", 256'000'000, 256e6 / 10.5e9), std::nullopt);
  EXPECT_EQ(c.verdict, CheckVerdict::kWarn);
  EXPECT_EQ(Text(c.summary),
            "10.50 GB/s bus bandwidth (GB = 1e9 bytes), 50 % of the expected 21 GB/s");
  EXPECT_EQ(AllDetails(c).find("power cycle"), std::string::npos);
}

TEST(DoctorLink, GlooHasNoSparkReferenceButPeerExpectJudgesIt) {
  const LinkProbeResult gloo = Measured("gloo", 16'000'000, 0.016);  // 1 GB/s
  EXPECT_EQ(CheckLink(gloo, std::nullopt).verdict, CheckVerdict::kInfo);
  EXPECT_EQ(CheckLink(gloo, 1.0).verdict, CheckVerdict::kPass);
  EXPECT_EQ(CheckLink(gloo, 2.0).verdict, CheckVerdict::kWarn);
  const CheckResult slow = CheckLink(gloo, 5.0);
  EXPECT_EQ(slow.verdict, CheckVerdict::kFail);
  EXPECT_EQ(AllDetails(slow).find("power cycle"), std::string::npos);  // not a Spark figure
}

TEST(DoctorLink, NoMeasurementFailsWithTheProbesError) {
  LinkProbeResult r;
  r.stage = "rendezvous";
  r.error = "timed out";
  const CheckResult c = CheckLink(r, std::nullopt);
  EXPECT_EQ(c.verdict, CheckVerdict::kFail);
  EXPECT_EQ(Text(c.summary), "no measurement: timed out");
}

TEST(DoctorLink, RanksThatAgreePass) {
  const CheckResult c = CheckRanks({Facts(0, "spark-1"), Facts(1, "spark-2")});
  EXPECT_EQ(c.verdict, CheckVerdict::kPass);
}

TEST(DoctorLink, AVariableThatDiffersWarnsNamingTheNode) {
  RankFacts other = Facts(1, "spark-2");
  other.env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True";
  const CheckResult c = CheckRanks({Facts(0, "spark-1"), other});
  EXPECT_EQ(c.verdict, CheckVerdict::kWarn);
  EXPECT_EQ(Text(c.summary), "the nodes differ: PYTORCH_CUDA_ALLOC_CONF on spark-2 (rank 1)");
  EXPECT_NE(AllDetails(c).find("PYTORCH_CUDA_ALLOC_CONF differs: expandable_segments:True on "
                               "spark-2 (rank 1), unset on spark-1 (rank 0)"),
            std::string::npos)
      << AllDetails(c);
}

TEST(DoctorLink, AVersionOrNvccThatDiffersFails) {
  RankFacts other = Facts(1, "spark-2");
  other.nccl = "2.27.7";
  other.nvcc = "yes";
  const auto diffs = RankDifferences({Facts(0, "spark-1"), other});
  ASSERT_EQ(diffs.size(), 2u);
  EXPECT_EQ(diffs[0].what, "NCCL");
  EXPECT_EQ(diffs[0].value, "2.27.7");
  EXPECT_EQ(diffs[0].rank0_value, "2.28.3");
  EXPECT_EQ(diffs[1].what, "nvcc on PATH");
  EXPECT_TRUE(diffs[1].blocking);
  const CheckResult c = CheckRanks({Facts(0, "spark-1"), other});
  EXPECT_EQ(c.verdict, CheckVerdict::kFail);
  EXPECT_NE(Text(c.summary).find("NCCL on spark-2 (rank 1), nvcc on PATH on spark-2 (rank 1)"),
            std::string::npos)
      << Text(c.summary);
}

TEST(DoctorLink, OneRanksFactsAloneIsSkip) {
  EXPECT_EQ(CheckRanks({Facts(0, "spark-1")}).verdict, CheckVerdict::kSkip);
}

TEST(DoctorLink, ParsesTheProbesAnswerAndRefusesWrongTypes) {
  auto r = ParseLinkProbe(
      R"({"ok": true, "rank": 1, "world": 2, "backend": "gloo", "size_bytes": 4000,
          "seconds": [0.5, 0.25], "facts": [{"rank": 0, "host": "a", "torch": "2.9.0",
          "torch_cuda": null, "nccl": "", "nvcc": "no", "env": {"NCCL_DEBUG": "INFO"}},
          {"rank": 1, "host": "b", "torch": "2.9.0", "nvcc": "no"}]})");
  ASSERT_TRUE(r.ok()) << EnglishText(r.error().what);
  EXPECT_EQ(r->rank, 1);
  EXPECT_EQ(r->seconds.size(), 2u);
  ASSERT_EQ(r->ranks.size(), 2u);
  EXPECT_EQ(r->ranks[0].env.at("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(r->ranks[1].host, "b");
  auto error = [](std::string_view text) {
    auto p = ParseLinkProbe(text);
    return p.ok() ? std::string("parsed") : EnglishText(p.error().what);
  };
  EXPECT_EQ(error("nope"), "the link probe's answer is not JSON");
  EXPECT_EQ(error(R"({"ok": 1})"), "ok: not a boolean");
  EXPECT_EQ(error(R"({"ok": false, "seconds": [0]})"), "seconds: not a positive number");
  EXPECT_EQ(error(R"({"ok": false, "facts": [{"env": {"A": 1}}]})"), "env.A: not a string");
  EXPECT_EQ(error(R"({"ok": true, "world": 2})"),
            "the link probe answered ok without a measurement");
}

}  // namespace
}  // namespace headroom
