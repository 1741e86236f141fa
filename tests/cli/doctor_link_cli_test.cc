// `headroom doctor --peer` / `--peer-listen` through the real binary: two real processes on
// loopback, each running the link probe (python/headroom/link_probe.py) in Debian's
// /usr/bin/python3 with python3-torch, over gloo; tens of MB, a few seconds each. A slow link
// is made in a network namespace the test makes (unshare -rn, then a tbf qdisc on its lo;
// docs/doctor.md "Testing a slow link").
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_cli.h"

namespace headroom {
namespace {

using testing::CliResult;
using testing::RunCli;

constexpr const char* kLinkPython = "/usr/bin/python3";

// A loopback port the kernel just gave out, with the one above it free too (the store's).
int LinkTestPort() {
  for (int attempt = 0; attempt < 20; ++attempt) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      ::close(fd);
      continue;
    }
    const int port = ntohs(a.sin_port);
    const int above = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in b = a;
    b.sin_port = htons(static_cast<uint16_t>(port + 1));
    const bool free_above =
        port < 65534 && ::bind(above, reinterpret_cast<sockaddr*>(&b), sizeof b) == 0;
    ::close(above);
    ::close(fd);
    if (free_above) return port;
  }
  return 0;
}

// The probe needs torch.distributed with gloo in /usr/bin/python3 (scripts/install-deps' test
// set installs python3-torch); checked once.
bool LinkTorchPresent() {
  static const bool present =
      testing::RunProgram({kLinkPython, "-c",
                           "import torch.distributed as d; "
                           "assert d.is_available() and d.is_gloo_available()"},
                          60000)
          .status == 0;
  return present;
}

#define REQUIRE_LINK_TORCH()                                               \
  if (!LinkTorchPresent())                                                 \
  GTEST_SKIP() << kLinkPython                                              \
               << " has no torch.distributed with gloo: install Debian's " \
                  "python3-torch (scripts/install-deps)"

// The variables both sides run with: gloo on lo, and none of the compared variables from the
// developer's shell unless a test adds them.
std::vector<std::string> LinkEnv(std::vector<std::string> extra = {}) {
  std::vector<std::string> env = {
      "GLOO_SOCKET_IFNAME=lo", "HEADROOM_GROUP_SECRET", "PYTORCH_CUDA_ALLOC_CONF",
      "CUDA_VISIBLE_DEVICES",  "VIRTUAL_ENV",           "CONDA_PREFIX"};
  for (const char* name :
       {"NCCL_DEBUG", "NCCL_SOCKET_IFNAME", "NCCL_IB_DISABLE", "NCCL_P2P_DISABLE",
        "TORCH_NCCL_ASYNC_ERROR_HANDLING", "TORCH_NCCL_BLOCKING_WAIT"})
    env.emplace_back(name);
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<std::string> LinkArgs(std::vector<std::string> mode, std::vector<std::string> extra) {
  std::vector<std::string> a = {"doctor", "--python",       kLinkPython, "--peer-size",
                                "16MB",   "--peer-repeats", "3"};
  a.insert(a.begin() + 1, mode.begin(), mode.end());
  if (std::find(extra.begin(), extra.end(), "--peer-timeout") == extra.end())
    a.insert(a.end(), {"--peer-timeout", "30s"});
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

struct LinkPair {
  CliResult listener, peer;
};

// Both sides at once: the listener in a thread, the peer here.
LinkPair RunPair(int port, std::vector<std::string> listener_extra,
                 std::vector<std::string> peer_extra, std::vector<std::string> listener_env,
                 std::vector<std::string> peer_env) {
  auto listener = std::async(std::launch::async, [&] {
    return RunCli(LinkArgs({"--peer-listen", std::to_string(port)}, listener_extra), 90000,
                  listener_env);
  });
  LinkPair p;
  p.peer = RunCli(LinkArgs({"--peer", "127.0.0.1:" + std::to_string(port)}, peer_extra), 90000,
                  peer_env);
  p.listener = listener.get();
  return p;
}

nlohmann::json LinkJsonOf(const CliResult& r) {
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

TEST(DoctorLinkCli, TwoProcessesMeasureTheLinkAndAgree) {
  REQUIRE_LINK_TORCH();
  const int port = LinkTestPort();
  ASSERT_NE(port, 0);
  const LinkPair p = RunPair(port, {"--peer-expect", "0.01"}, {"--peer-expect", "0.01", "--json"},
                             LinkEnv(), LinkEnv());
  ASSERT_FALSE(p.peer.timed_out || p.listener.timed_out);
  EXPECT_EQ(p.listener.status, 0) << p.listener.out << p.listener.err;
  EXPECT_EQ(p.peer.status, 0) << p.peer.out << p.peer.err;
  // The listener's text: the figure in GB/s with its unit, and the agreement.
  EXPECT_NE(p.listener.out.find("link: rank 0 of 2"), std::string::npos) << p.listener.out;
  EXPECT_NE(p.listener.out.find("GB/s bus bandwidth (GB = 1e9 bytes), expected about 0.01 GB/s"),
            std::string::npos)
      << p.listener.out;
  EXPECT_NE(p.listener.out.find("L2   pass ranks agree: 2 nodes: the same torch"),
            std::string::npos)
      << p.listener.out;
  EXPECT_NE(p.listener.err.find("waiting up to 30s for the other node on 127.0.0.1:" +
                                std::to_string(port)),
            std::string::npos)
      << p.listener.err;
  // The peer's JSON: the same measurement, both ranks' facts, nothing that differs.
  const auto j = LinkJsonOf(p.peer);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["backend"], "gloo");
  EXPECT_EQ(j["world"], 2);
  EXPECT_EQ(j["size_bytes"], 16000000);
  EXPECT_EQ(j["seconds"].size(), 3u);
  EXPECT_EQ(j["gb"], "1e9 bytes");
  EXPECT_GT(j["busbw_gbps"].get<double>(), 0.008);
  EXPECT_EQ(j["ranks"].size(), 2u);
  EXPECT_EQ(j["ranks"][1]["rank"], 1);
  EXPECT_EQ(j["differences"].size(), 0u);
  EXPECT_EQ(j["checks"]["L1"], "pass");
  EXPECT_EQ(j["checks"]["L2"], "pass");
  EXPECT_EQ(j["verdict"], "ready");
}

TEST(DoctorLinkCli, AVariableSetOnOneNodeOnlyIsNamedWithTheNode) {
  REQUIRE_LINK_TORCH();
  const int port = LinkTestPort();
  ASSERT_NE(port, 0);
  const LinkPair p =
      RunPair(port, {"--peer-expect", "0.001"}, {"--peer-expect", "0.001", "--json"}, LinkEnv(),
              LinkEnv({"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"}));
  EXPECT_EQ(p.listener.status, 1) << p.listener.out << p.listener.err;
  EXPECT_EQ(p.peer.status, 1) << p.peer.out << p.peer.err;
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  const std::string node = std::string(host) + " (rank 1)";
  EXPECT_NE(p.listener.out.find(
                "L2   warn ranks agree: the nodes differ: PYTORCH_CUDA_ALLOC_CONF on " + node),
            std::string::npos)
      << p.listener.out;
  EXPECT_NE(p.listener.out.find("PYTORCH_CUDA_ALLOC_CONF differs: expandable_segments:True on " +
                                node + ", unset on " + std::string(host) + " (rank 0)"),
            std::string::npos)
      << p.listener.out;
  const auto j = LinkJsonOf(p.peer);
  ASSERT_EQ(j["differences"].size(), 1u) << j.dump(2);
  EXPECT_EQ(j["differences"][0]["what"], "PYTORCH_CUDA_ALLOC_CONF");
  EXPECT_EQ(j["differences"][0]["rank"], 1);
  EXPECT_EQ(j["differences"][0]["value"], "expandable_segments:True");
  EXPECT_EQ(j["differences"][0]["rank0_value"], "unset");
  EXPECT_EQ(j["checks"]["L1"], "pass");
}

// --peer-group: torchrun's variables place the nodes, rank 0 listening on MASTER_PORT + 2.
TEST(DoctorLinkCli, InATorchrunJobTheLaunchersVariablesPlaceTheNodes) {
  REQUIRE_LINK_TORCH();
  const int gate = LinkTestPort();
  ASSERT_GT(gate, 2);
  auto job_env = [&](int rank) {
    return LinkEnv({"MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(gate - 2), "NNODES=2",
                    "NODE_RANK=" + std::to_string(rank), "SLURM_JOB_ID"});
  };
  auto rank0 = std::async(std::launch::async, [&] {
    return RunCli(LinkArgs({"--peer-group"}, {"--peer-expect", "0.001"}), 90000, job_env(0));
  });
  const CliResult rank1 =
      RunCli(LinkArgs({"--peer-group"}, {"--peer-expect", "0.001", "--json"}), 90000, job_env(1));
  const CliResult listener = rank0.get();
  EXPECT_EQ(listener.status, 0) << listener.out << listener.err;
  EXPECT_NE(listener.err.find("on 127.0.0.1:" + std::to_string(gate)), std::string::npos)
      << listener.err;
  EXPECT_NE(listener.out.find("link: rank 0 of 2"), std::string::npos) << listener.out;
  EXPECT_EQ(rank1.status, 0) << rank1.out << rank1.err;
  const auto j = LinkJsonOf(rank1);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["world"], 2);
  EXPECT_EQ(j["checks"]["L2"], "pass");
}

TEST(DoctorLinkCli, AMissingPeerIsOneLineWithinTheTimeout) {
  REQUIRE_LINK_TORCH();
  const int port = LinkTestPort();
  ASSERT_NE(port, 0);
  for (const auto& mode :
       std::vector<std::vector<std::string>>{{"--peer", "127.0.0.1:" + std::to_string(port)},
                                             {"--peer-listen", std::to_string(port)}}) {
    const auto start = std::chrono::steady_clock::now();
    const CliResult r = RunCli(LinkArgs(mode, {"--peer-timeout", "2s"}), 60000, LinkEnv());
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_EQ(r.out, "");
    const std::string want =
        mode[0] == "--peer" ? "headroom: doctor: no peer at 127.0.0.1:" + std::to_string(port) +
                                  " within 2 s (Connection refused)\n"
                            : "headroom: doctor: no peer joined 127.0.0.1:" + std::to_string(port) +
                                  " within 2 s (1 of 2 nodes here)\n";
    EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
    // torch's import (seconds on a busy machine) plus the 2 s wait, never a hang.
    EXPECT_LT(took, 40) << r.err;
  }
}

TEST(DoctorLinkCli, APeerWithAnotherSecretIsRefused) {
  REQUIRE_LINK_TORCH();
  const int port = LinkTestPort();
  ASSERT_NE(port, 0);
  const LinkPair p = RunPair(port, {"--peer-timeout", "4s"}, {"--peer-timeout", "4s"},
                             LinkEnv({"HEADROOM_GROUP_SECRET=0123456789abcdef-listener"}),
                             LinkEnv({"HEADROOM_GROUP_SECRET=0123456789abcdef-peer-other"}));
  EXPECT_EQ(p.listener.status, 2) << p.listener.err;
  EXPECT_EQ(p.peer.status, 2) << p.peer.err;
  EXPECT_NE(p.listener.err.find("refused 127.0.0.1: wrong secret (the join's HMAC does not match)"),
            std::string::npos)
      << p.listener.err;
  EXPECT_NE(p.listener.err.find("no peer joined"), std::string::npos) << p.listener.err;
  EXPECT_NE(p.peer.err.find("headroom: doctor: "), std::string::npos) << p.peer.err;
  EXPECT_NE(p.peer.err.find("wrong secret"), std::string::npos) << p.peer.err;
}

TEST(DoctorLinkCli, BadFlagsAreUsageErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"doctor", "--peer", "127.0.0.1:x"}, "--peer: 'x' is not a port from 1 to 65534"},
      {{"doctor", "--peer", "127.0.0.1:65535"}, "--peer: '65535' is not a port from 1 to 65534"},
      {{"doctor", "--peer", ":80"}, "--peer: ':80' has no host"},
      {{"doctor", "--peer", "::1:80"}, "write an IPv6 address as [ADDRESS]:PORT"},
      {{"doctor", "--peer", "a", "--peer-listen", "9"},
       "give one of --peer HOST[:PORT], --peer-listen [ADDR:]PORT, --peer-group"},
      {{"doctor", "--peer", "127.0.0.1", "--compare", "a.json", "b.json"},
       "--compare, --workload, --report and --config do not apply"},
      {{"doctor", "--peer", "127.0.0.1", "--peer-size", "1T"},
       "--peer-size: 1T is not from 4 bytes to 64 GiB"},
      {{"doctor", "--peer", "127.0.0.1", "--peer-repeats", "0"},
       "--peer-repeats: 0 is not from 1 to 1000"},
      {{"doctor", "--peer", "127.0.0.1", "--peer-timeout", "2h"},
       "--peer-timeout: 2h is over an hour"},
      {{"doctor", "--peer", "127.0.0.1", "--peer-expect", "-1"}, "--peer-expect: give a positive"},
      {{"doctor", "--peer-listen", "0.0.0.0:29530"},
       "0.0.0.0 is not a loopback address: give --peer-secret FILE or HEADROOM_GROUP_SECRET"},
      {{"doctor", "--peer", "10.0.0.2"},
       "10.0.0.2 is not a loopback address: give --peer-secret FILE"},
      {{"doctor", "--peer", "127.0.0.1", "--peer-secret", "/nonexistent/secret"},
       "--peer-secret: "},
      {{"doctor", "--peer-group"}, "--peer-group: no torchrun"},
  };
  for (const auto& [args, want] : cases) {
    const CliResult r = RunCli(
        args, 20000,
        LinkEnv({"MASTER_ADDR", "NNODES", "NODE_RANK", "SLURM_JOB_ID", "SLURM_JOB_NUM_NODES"}));
    EXPECT_EQ(r.status, 3) << args[1] << " " << args[2] << ": " << r.err;
    EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

// docs/doctor.md "Testing a slow link": both processes in a network namespace of their own
// whose lo is held to 100 Mbit/s by a tbf qdisc (netem's rate needs sch_netem, which this
// kernel may lack; tbf is in every kernel's default set). The gloo all-reduce of 4 MB then
// moves at most 12.5 MB/s through lo, both directions sharing it.
TEST(DoctorLinkCli, ASlowLinkInANetworkNamespaceFailsAgainstTheExpectedFigure) {
  REQUIRE_LINK_TORCH();
  const CliResult ns = testing::RunProgram({"unshare", "-rn", "true"}, 20000);
  if (ns.status != 0)
    GTEST_SKIP() << "this machine cannot make a network namespace (unshare -rn: " << ns.err
                 << "): user namespaces are off; the slow-link case was not run";
  const std::string bin = HEADROOM_BINARY;
  const std::string common =
      " doctor --python /usr/bin/python3 --peer-size 4MB --peer-repeats 3 "
      "--peer-timeout 40s --peer-expect 0.1";
  const std::string script =
      "set -e; ip link set lo up; "
      "tc qdisc add dev lo root tbf rate 100mbit burst 256kb latency 2s "
      "|| { echo 'tc: cannot slow lo in the namespace' >&2; exit 90; }; "
      "tc qdisc show dev lo >&2; "
      "(set +e; " +
      bin + common +
      " --peer-listen 29530 > \"$0/listener.out\" 2>&1; echo $? > "
      "\"$0/listener.rc\") & "
      "set +e; " +
      bin + common + " --peer 127.0.0.1:29530 --json; rc=$?; wait; exit $rc";
  char dir_template[] = "/tmp/headroom-link-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const CliResult r =
      testing::RunProgram({"unshare", "-rn", "sh", "-c", script, dir}, 120000, LinkEnv());
  ASSERT_NE(r.status, 90) << "the namespace was made but tc could not add a tbf qdisc to its lo: "
                          << r.err;
  ASSERT_FALSE(r.timed_out) << r.err;
  EXPECT_NE(r.err.find("qdisc tbf"), std::string::npos) << r.err;
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  const auto j = LinkJsonOf(r);
  const double busbw = j.value("busbw_gbps", 1.0);
  EXPECT_LT(busbw, 0.0125) << j.dump(2);  // under the qdisc's 100 Mbit/s
  EXPECT_GT(busbw, 0.0);
  EXPECT_EQ(j["checks"]["L1"].get<std::string>().find("fail: "), 0u) << j.dump(2);
  EXPECT_NE(j["checks"]["L1"].get<std::string>().find("under a quarter of the expected 0.1 GB/s"),
            std::string::npos);
  std::string listener =
      testing::RunProgram({"cat", dir + "/listener.out", dir + "/listener.rc"}).out;
  EXPECT_NE(listener.find("L1   fail link:"), std::string::npos) << listener;
  EXPECT_NE(listener.find("\n2\n"), std::string::npos) << listener;
  testing::RunProgram({"rm", "-rf", dir});
}

}  // namespace
}  // namespace headroom
