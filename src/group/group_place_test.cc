#include "group/group_place.h"

#include <gtest/gtest.h>

namespace headroom::group {
namespace {

std::string PlaceWhy(const Result<std::optional<GroupPlace>>& r) {
  return r ? "" : EnglishText(r.error().what);
}

TEST(GroupPlace, FromTorchrunsVariablesOneAboveTheMasterPort) {
  const auto p = GroupPlaceFromEnvironment(
      {{"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29600"}, {"NNODES", "2"}, {"NODE_RANK", "1"}});
  ASSERT_TRUE(p.ok()) << PlaceWhy(p);
  ASSERT_TRUE(p->has_value());
  EXPECT_EQ((*p)->host, "10.0.0.1");
  EXPECT_EQ((*p)->port, 29601);
  EXPECT_EQ((*p)->node_rank, 1);
  EXPECT_EQ((*p)->nodes, 2);
  EXPECT_EQ((*p)->job_id, "torchrun-10.0.0.1:29600");
  const auto plain =
      GroupPlaceFromEnvironment({{"MASTER_ADDR", "h"}, {"NNODES", "4"}, {"NODE_RANK", "0"}});
  EXPECT_EQ((*plain)->port, kDefaultGroupPort);
}

TEST(GroupPlace, FromSlurmsVariablesItsFirstHost) {
  const auto p = GroupPlaceFromEnvironment({{"SLURM_JOB_ID", "4242"},
                                            {"SLURM_NODEID", "3"},
                                            {"SLURM_JOB_NUM_NODES", "4"},
                                            {"SLURM_JOB_NODELIST", "spark[07-10]"}});
  ASSERT_TRUE(p.ok()) << PlaceWhy(p);
  EXPECT_EQ((*p)->host, "spark07");
  EXPECT_EQ((*p)->port, kDefaultGroupPort);
  EXPECT_EQ((*p)->job_id, "slurm-4242");
  EXPECT_EQ((*p)->origin, "slurm");
}

TEST(GroupPlace, NoLauncherIsNoGroup) {
  const auto p = GroupPlaceFromEnvironment({{"HOME", "/root"}, {"MASTER_ADDR", "x"}});
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->has_value());
}

TEST(GroupPlace, RefusesMalformedVariablesNamingThem) {
  EXPECT_EQ(PlaceWhy(GroupPlaceFromEnvironment(
                {{"MASTER_ADDR", "h"}, {"NNODES", "1:4"}, {"NODE_RANK", "0"}})),
            "NNODES=1:4: an elastic range; the group needs a fixed node count");
  EXPECT_EQ(PlaceWhy(GroupPlaceFromEnvironment(
                {{"MASTER_ADDR", "h"}, {"NNODES", "2"}, {"NODE_RANK", "2"}})),
            "NODE_RANK=2: not below the 2 nodes");
  EXPECT_EQ(PlaceWhy(GroupPlaceFromEnvironment(
                {{"MASTER_ADDR", "h"}, {"NNODES", "two"}, {"NODE_RANK", "0"}})),
            "NNODES=two: not a whole number up to 65535");
  EXPECT_EQ(PlaceWhy(GroupPlaceFromEnvironment(
                {{"MASTER_ADDR", "h"}, {"NNODES", "1"}, {"NODE_RANK", "0"}})),
            "torchrun: a group needs 2 or more nodes");
  EXPECT_EQ(
      PlaceWhy(GroupPlaceFromEnvironment(
          {{"MASTER_ADDR", "h"}, {"MASTER_PORT", "65535"}, {"NNODES", "2"}, {"NODE_RANK", "0"}})),
      "MASTER_PORT=65535: not a whole number up to 65534");
}

TEST(GroupPlace, FirstSlurmHostOfEachListShape) {
  EXPECT_EQ(*FirstSlurmHost("a,b"), "a");
  EXPECT_EQ(*FirstSlurmHost("solo"), "solo");
  EXPECT_EQ(*FirstSlurmHost("gpu[01-04,07],login"), "gpu01");
  EXPECT_EQ(*FirstSlurmHost("n-[3,5]"), "n-3");
  EXPECT_FALSE(FirstSlurmHost("").ok());
  EXPECT_FALSE(FirstSlurmHost("gpu[").ok());
  EXPECT_FALSE(FirstSlurmHost("gpu[x-2]").ok());
}

TEST(ResolveIPv4, KeepsAnAddressAndResolvesAName) {
  EXPECT_EQ(ResolveIPv4("10.1.2.3").value(), "10.1.2.3");
  EXPECT_EQ(ResolveIPv4("localhost").value(), "127.0.0.1");  // /etc/hosts, AF_INET only
  const auto bad = ResolveIPv4("no-such-host.invalid");
  ASSERT_FALSE(bad);
  EXPECT_EQ(EnglishText(bad.error().what).rfind("no-such-host.invalid: no IPv4 address: ", 0), 0u);
}

}  // namespace
}  // namespace headroom::group
