// The guard group's runtime (guard/guard_group.h): the flags' settings, and two guards' groups
// in one process over loopback: a member's report becomes rank 0's verdict and, relayed in
// the abort, the other members'; rank 0 holds while a member runs; exit statuses and lines.
#include "guard/guard_group.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <future>
#include <thread>

#include "base/exit_status.h"
#include "group/group_message.h"
#include "testing_sockets.h"

namespace headroom {
namespace {

std::string Why(const Result<std::optional<GuardGroupSettings>>& r) {
  return r ? "" : EnglishText(r.error().what);
}

TEST(GuardGroupSettings, FromTheFlags) {
  GuardGroupRequest r;
  EXPECT_FALSE(*GuardGroupSettingsFor(r, {}));  // no --group: alone
  r.given = true;
  r.address = "10.0.0.1:29400";
  r.node_rank = "2";
  r.nodes = "4";
  r.heartbeat = "250ms";
  r.heartbeat_timeout = "2s";
  const auto s = GuardGroupSettingsFor(r, {});
  ASSERT_TRUE(s && *s) << Why(s);
  EXPECT_EQ((*s)->host, "10.0.0.1");
  EXPECT_EQ((*s)->port, 29400);
  EXPECT_EQ((*s)->node_rank, 2);
  EXPECT_EQ((*s)->nodes, 4);
  EXPECT_EQ((*s)->job_id, "group-10.0.0.1:29400");
  EXPECT_EQ((*s)->heartbeat.count(), 250);
  EXPECT_EQ((*s)->heartbeat_timeout.count(), 2000);
  EXPECT_EQ((*s)->form_wait, kDefaultGroupWait);
}

TEST(GuardGroupSettings, FromTorchrunsVariablesWithTheFlagsWinning) {
  GuardGroupRequest r;
  r.given = true;
  const group::Environment env{
      {"MASTER_ADDR", "spark-a"}, {"MASTER_PORT", "29500"}, {"NNODES", "2"}, {"NODE_RANK", "1"}};
  auto s = GuardGroupSettingsFor(r, env);
  ASSERT_TRUE(s && *s) << Why(s);
  EXPECT_EQ((*s)->host, "spark-a");
  EXPECT_EQ((*s)->port, 29501);
  EXPECT_EQ((*s)->node_rank, 1);
  EXPECT_EQ((*s)->job_id, "torchrun-spark-a:29500");
  r.address = "10.1.1.1:4000";
  r.node_rank = "0";
  s = GuardGroupSettingsFor(r, env);
  ASSERT_TRUE(s && *s) << Why(s);
  EXPECT_EQ((*s)->host, "10.1.1.1");
  EXPECT_EQ((*s)->node_rank, 0);
  EXPECT_EQ((*s)->nodes, 2);
}

TEST(GuardGroupSettings, FlagsThatSayEverythingNeedNoLaunchersPlace) {
  // srun -n2 on one node: Slurm's variables say one node, the flags say two tasks.
  const group::Environment env{{"SLURM_JOB_ID", "7"},
                               {"SLURM_NODEID", "0"},
                               {"SLURM_JOB_NUM_NODES", "1"},
                               {"SLURM_JOB_NODELIST", "vm"}};
  GuardGroupRequest r;
  r.given = true;
  EXPECT_EQ(Why(GuardGroupSettingsFor(r, env)), "slurm: a group needs 2 or more nodes");
  r.address = "127.0.0.1:4000";
  r.node_rank = "1";
  r.nodes = "2";
  const auto s = GuardGroupSettingsFor(r, env);
  ASSERT_TRUE(s && *s) << Why(s);
  EXPECT_EQ((*s)->node_rank, 1);
  EXPECT_EQ((*s)->job_id, "group-127.0.0.1:4000");
}

TEST(GuardGroupSettings, RefusesWhatMakesNoGroup) {
  GuardGroupRequest r;
  r.given = true;
  EXPECT_EQ(Why(GuardGroupSettingsFor(r, {})).rfind("--group without HOST:PORT: neither", 0), 0u);
  r.address = "10.0.0.1";
  EXPECT_EQ(Why(GuardGroupSettingsFor(r, {})), "--group: 10.0.0.1: not HOST:PORT");
  r.address = "10.0.0.1:0";
  EXPECT_EQ(Why(GuardGroupSettingsFor(r, {})), "--group: 10.0.0.1:0: the port is not 1..65535");
  r.address = "10.0.0.1:70000";
  EXPECT_FALSE(GuardGroupSettingsFor(r, {}));
  r.address = "10.0.0.1:1";
  EXPECT_EQ(Why(GuardGroupSettingsFor(r, {})),
            "--group 10.0.0.1:1: give --node-rank R and --nodes N (no launcher's variables)");
  r.node_rank = "2";
  r.nodes = "2";
  EXPECT_EQ(Why(GuardGroupSettingsFor(r, {})), "--node-rank: 2: not below the 2 nodes");
  r.node_rank = "0";
  r.nodes = "1";
  EXPECT_EQ(Why(GuardGroupSettingsFor(r, {})), "--nodes: 1: a group needs 2 or more nodes");
  r.nodes = "x";
  EXPECT_EQ(Why(GuardGroupSettingsFor(r, {})), "--nodes: x: not a whole number up to 4096");
  r.nodes = "2";
  r.heartbeat = "2s";
  r.heartbeat_timeout = "1s";
  EXPECT_EQ(Why(GuardGroupSettingsFor(r, {})),
            "--heartbeat-timeout: 1000 ms is not above the heartbeat period 2000 ms");
  r.heartbeat = "soon";
  EXPECT_EQ(Why(GuardGroupSettingsFor(r, {})).rfind("--heartbeat: ", 0), 0u);
  r.heartbeat = "1ms";
  EXPECT_EQ(Why(GuardGroupSettingsFor(r, {})), "--heartbeat: 1ms: under 10 ms");
}

GuardGroupSettings Node(uint16_t rank, uint16_t port) {
  GuardGroupSettings s;
  s.host = "127.0.0.1";
  s.port = port;
  s.node_rank = rank;
  s.nodes = 3;
  s.job_id = "test-job";
  s.secret = "guard-group-test-secret-0123";
  s.heartbeat = std::chrono::milliseconds(50);
  s.heartbeat_timeout = std::chrono::milliseconds(1000);
  s.form_wait = std::chrono::milliseconds(2000);
  return s;
}

// Polls every group until `done` says so, for at most 3 s.
template <typename Done>
void PollUntil(const std::vector<GuardGroup*>& groups, std::vector<std::optional<GroupEnd>>& ends,
               Done done) {
  const auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (!done() && std::chrono::steady_clock::now() < stop) {
    for (size_t i = 0; i < groups.size(); ++i) {
      if (auto e = groups[i]->Poll()) ends[i] = e;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Starts a member's group while `rank0` is polled on this thread: a member's Start waits for
// the coordinator's welcome, which rank 0 sends from its Poll. Rank 0's ends meanwhile go to
// `rank0_end`.
Result<std::unique_ptr<GuardGroup>> StartAlongside(GuardGroup& rank0,
                                                   const GuardGroupSettings& member,
                                                   std::optional<GroupEnd>* rank0_end = nullptr) {
  auto started = std::async(std::launch::async, [&] { return GuardGroup::Start(member); });
  while (started.wait_for(std::chrono::milliseconds(5)) != std::future_status::ready) {
    if (auto e = rank0.Poll(); e && rank0_end) *rank0_end = e;
  }
  return started.get();
}

// A plain TCP connection to 127.0.0.1:port that says nothing (non-blocking), or -1.
int Stranger(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  return fd;
}

// What a stranger's socket holds now: the bytes read, and whether the peer closed it.
struct Heard {
  size_t bytes = 0;
  bool closed = false;
};
Heard Drain(int fd, Heard so_far = {}) {
  char buffer[4096];
  for (;;) {
    const ssize_t n = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n > 0) {
      so_far.bytes += static_cast<size_t>(n);
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) so_far.closed = true;
    return so_far;
  }
}

// A loopback relay between one client and 127.0.0.1:target that keeps every byte the client
// sent: what a stranger on the path between a member and rank 0 sees.
class RecordingProxy {
 public:
  explicit RecordingProxy(uint16_t target) : listener_(1) {
    thread_ = std::thread([this, target] { Relay(target); });
  }
  ~RecordingProxy() { stop(); }
  uint16_t port() const { return listener_.port(); }
  // The client's bytes so far (only once the relay has stopped: stop() first).
  const std::string& sent() const { return sent_; }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Relay(uint16_t target) {
    pollfd p{listener_.fd(), POLLIN, 0};
    while (!stop_ && poll(&p, 1, 20) == 0) {
    }
    if (stop_) return;
    const int client = accept4(listener_.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    const int server = Stranger(target);
    std::array<pollfd, 2> fds{{{client, POLLIN, 0}, {server, POLLIN, 0}}};
    char buffer[4096];
    while (!stop_ && client >= 0 && server >= 0) {
      if (poll(fds.data(), fds.size(), 20) <= 0) continue;
      bool done = false;
      for (int i = 0; i < 2; ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const ssize_t n = recv(fds[i].fd, buffer, sizeof buffer, 0);
        if (n <= 0) {
          done = true;
          break;
        }
        if (i == 0) sent_.append(buffer, static_cast<size_t>(n));
        if (send(fds[1 - i].fd, buffer, static_cast<size_t>(n), MSG_NOSIGNAL) != n) done = true;
      }
      if (done) break;
    }
    if (client >= 0) close(client);
    if (server >= 0) close(server);
  }

  testing::QuietListener listener_;
  std::atomic<bool> stop_{false};
  std::string sent_;
  std::thread thread_;
};

TEST(GuardGroup, AMembersMemoryEndReachesEveryNodeWithItsReading) {
  auto rank0 = GuardGroup::Start(Node(0, 0));
  ASSERT_TRUE(rank0) << EnglishText(rank0.error().what);
  const uint16_t port = (*rank0)->port();
  auto rank1 = StartAlongside(**rank0, Node(1, port));
  auto rank2 = StartAlongside(**rank0, Node(2, port));
  ASSERT_TRUE(rank1 && rank2);
  std::vector<GuardGroup*> all{rank0->get(), rank1->get(), rank2->get()};
  std::vector<std::optional<GroupEnd>> ends(3);
  PollUntil(all, ends, [] { return false; });  // joins and heartbeats for a while: no verdict
  for (const auto& e : ends) EXPECT_FALSE(e);
  (*rank2)->OwnMemory(3'328'599'654, 4ull << 30);
  PollUntil(all, ends, [&] { return ends[0] && ends[1]; });
  ASSERT_TRUE(ends[0] && ends[1]);
  EXPECT_FALSE(ends[2]);  // its own end came first
  EXPECT_EQ(ends[0]->cause, GroupEnd::Cause::kPeerMemory);
  EXPECT_FALSE(ends[0]->relayed);
  EXPECT_EQ(ends[1]->cause, GroupEnd::Cause::kPeerMemory);
  EXPECT_TRUE(ends[1]->relayed);
  EXPECT_EQ(ends[1]->origin_rank, 2);
  EXPECT_EQ(ends[1]->available_bytes, 3'328'599'654u);
  EXPECT_EQ(ends[1]->level_bytes, 4ull << 30);
  EXPECT_EQ(GroupEndExitStatus(*ends[1]), kExitGroupPeerMemory);
  EXPECT_EQ(EnglishText(GroupEndMessage(*ends[1], 1)),
            "node 2: out of unified memory, MemAvailable 3.10 GiB < 4.00 GiB; the guard group "
            "ended node 1's job");
}

TEST(GuardGroup, RankZeroHoldsWhileAMemberRunsAndTheLostOneEndsTheRest) {
  auto rank0 = GuardGroup::Start(Node(0, 0));
  ASSERT_TRUE(rank0);
  const uint16_t port = (*rank0)->port();
  auto rank1 = StartAlongside(**rank0, Node(1, port));
  auto rank2 = StartAlongside(**rank0, Node(2, port));
  ASSERT_TRUE(rank1 && rank2);
  std::vector<std::optional<GroupEnd>> ends(3);
  PollUntil({rank0->get(), rank1->get(), rank2->get()}, ends, [&] { return false; });
  (*rank0)->OwnDone();
  EXPECT_TRUE((*rank0)->Holding());
  (*rank1)->OwnDone();
  rank1->reset();  // done, then gone: not a loss
  PollUntil({rank0->get(), rank2->get()}, ends, [] { return false; });
  EXPECT_FALSE(ends[0] || ends[2]);
  EXPECT_TRUE((*rank0)->Holding());
  rank2->reset();  // gone without done: lost, and rank 0 stops holding
  PollUntil({rank0->get()}, ends, [] { return false; });
  EXPECT_FALSE(ends[0]);  // rank 0's own job was done: nothing of it to end
  EXPECT_FALSE((*rank0)->Holding());
}

TEST(GuardGroup, AMemberFindsNoCoordinatorWithinTheWait) {
  auto rank0 = GuardGroup::Start(Node(0, 0));
  ASSERT_TRUE(rank0);
  const uint16_t port = (*rank0)->port();
  rank0->reset();
  GuardGroupSettings s = Node(1, port);
  s.form_wait = std::chrono::milliseconds(300);
  const auto started = GuardGroup::Start(s);
  ASSERT_FALSE(started);
  EXPECT_NE(started.error().errno_value, 0);
  EXPECT_NE(EnglishText(started.error().what).find("no coordinator after"), std::string::npos);
}

TEST(GuardGroup, AMemberWhoseCoordinatorNeverAnswersGivesUpAtTheWait) {
  // A coordinator's address that takes the SYN and never answers (a wedged node, a dropping
  // firewall): one blocking connect would wait the kernel's two minutes past --group-wait.
  testing::SilentListener silent;
  ASSERT_TRUE(silent.full()) << "the listener's queue never filled";
  GuardGroupSettings s = Node(1, silent.port());
  s.form_wait = std::chrono::milliseconds(700);
  const auto start = std::chrono::steady_clock::now();
  const auto started = GuardGroup::Start(s);
  const double waited_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().errno_value, ETIMEDOUT);
  EXPECT_NE(EnglishText(started.error().what).find("no coordinator after"), std::string::npos);
  EXPECT_GE(waited_s, 0.65);
  EXPECT_LT(waited_s, 2.5);
}

TEST(GuardGroup, ARankThatNeverJoinsIsLostAfterTheFormationWait) {
  GuardGroupSettings s = Node(0, 0);
  s.form_wait = std::chrono::milliseconds(200);
  auto rank0 = GuardGroup::Start(s);
  ASSERT_TRUE(rank0);
  std::vector<std::optional<GroupEnd>> ends(2);
  auto rank1 = StartAlongside(**rank0, Node(1, (*rank0)->port()), &ends[0]);
  ASSERT_TRUE(rank1);
  PollUntil({rank0->get(), rank1->get()}, ends, [&] { return ends[0] && ends[1]; });
  ASSERT_TRUE(ends[0] && ends[1]);
  EXPECT_EQ(ends[0]->cause, GroupEnd::Cause::kPeerLost);
  EXPECT_EQ(ends[0]->origin_rank, 2);
  EXPECT_EQ(ends[1]->origin_rank, 2);  // relayed: rank 1 learns who was missing
  EXPECT_EQ(GroupEndExitStatus(*ends[1]), kExitGroupPeerLost);
}

GuardGroupSettings PairNode(uint16_t rank, uint16_t port) {
  GuardGroupSettings s = Node(rank, port);
  s.nodes = 2;
  return s;
}

// Issue 29: four idle connections with no secret on rank 0's port before the member joins.
// They used to fill the cap (twice the node count) and the member's connection, the newest,
// was closed: the member ended its job (lost) and rank 0 waited out the formation wait.
TEST(GuardGroup, IdleStrangersDoNotKeepAMemberOut) {
  auto rank0 = GuardGroup::Start(PairNode(0, 0));
  ASSERT_TRUE(rank0);
  const uint16_t port = (*rank0)->port();
  std::vector<int> strangers;
  for (int i = 0; i < 4; ++i) strangers.push_back(Stranger(port));
  std::vector<std::optional<GroupEnd>> ends(2);
  PollUntil({rank0->get()}, ends, [&, start = std::chrono::steady_clock::now()] {
    return std::chrono::steady_clock::now() - start > std::chrono::milliseconds(200);
  });
  auto rank1 = StartAlongside(**rank0, PairNode(1, port), &ends[0]);
  ASSERT_TRUE(rank1) << EnglishText(rank1.error().what);
  // Half a second of heartbeats: the group holds.
  PollUntil({rank0->get(), rank1->get()}, ends, [&, start = std::chrono::steady_clock::now()] {
    return std::chrono::steady_clock::now() - start > std::chrono::milliseconds(500);
  });
  EXPECT_FALSE(ends[0]);
  EXPECT_FALSE(ends[1]);
  // Both jobs run to their end: the member leaves, rank 0 stops holding.
  (*rank0)->OwnDone();
  (*rank1)->OwnDone();
  PollUntil({rank0->get(), rank1->get()}, ends, [&] { return !(*rank0)->Holding(); });
  EXPECT_FALSE((*rank0)->Holding());
  EXPECT_FALSE(ends[0] || ends[1]);
  for (const int fd : strangers) close(fd);
}

// Issue 29: a stranger that sends a byte every 100 ms takes 10 s to finish a frame (a
// 1-byte-per-second sender stayed 15 s); it is dropped at the handshake deadline (the
// heartbeat timeout, 1 s here).
TEST(GuardGroup, ASlowSenderIsDroppedAtTheHandshakeDeadline) {
  auto rank0 = GuardGroup::Start(PairNode(0, 0));
  ASSERT_TRUE(rank0);
  const int slow = Stranger((*rank0)->port());
  ASSERT_GE(slow, 0);
  // A length any frame may have (98), then the rest of the frame a byte at a time.
  const std::string bytes = std::string("\x00\x60", 2) + std::string(96, 'A');
  const auto start = std::chrono::steady_clock::now();
  Heard heard;
  double dropped_s = -1;
  for (size_t sent = 0; std::chrono::steady_clock::now() - start < std::chrono::seconds(3);
       ++sent) {
    (void)(*rank0)->Poll();
    heard = Drain(slow, heard);
    if (heard.closed || send(slow, bytes.data() + sent, 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1) {
      dropped_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  close(slow);
  ASSERT_GE(dropped_s, 0) << "the slow sender was still connected after 3 s";
  EXPECT_GE(dropped_s, 0.9);
  EXPECT_LT(dropped_s, 2.5);
  EXPECT_EQ(heard.bytes, 0u);
}

// Issue 29: a stranger that connects and only listens hears nothing: no heartbeat, no abort
// (signed frames it could replay), until it is dropped at the handshake deadline.
TEST(GuardGroup, AStrangerThatOnlyListensHearsNothing) {
  auto rank0 = GuardGroup::Start(PairNode(0, 0));
  ASSERT_TRUE(rank0);
  const uint16_t port = (*rank0)->port();
  auto rank1 = StartAlongside(**rank0, PairNode(1, port));
  ASSERT_TRUE(rank1);
  const int listener = Stranger(port);
  ASSERT_GE(listener, 0);
  std::vector<std::optional<GroupEnd>> ends(2);
  Heard heard;
  PollUntil({rank0->get(), rank1->get()}, ends, [&, start = std::chrono::steady_clock::now()] {
    heard = Drain(listener, heard);
    return std::chrono::steady_clock::now() - start > std::chrono::milliseconds(600);
  });
  EXPECT_FALSE(ends[0] || ends[1]);  // 12 heartbeat periods went by
  (*rank1)->OwnFailed(3);            // rank 0 aborts the group
  PollUntil({rank0->get(), rank1->get()}, ends, [&] {
    heard = Drain(listener, heard);
    return ends[0].has_value();
  });
  ASSERT_TRUE(ends[0]);
  heard = Drain(listener, heard);
  close(listener);
  EXPECT_EQ(heard.bytes, 0u);
}

// Issue 29: a member's `failed` frame captured in run 1 (on the path, by a relay) and sent to
// run 2's rank 0, same job id and secret, on a connection of its own: it used to end run 2.
TEST(GuardGroup, AFrameFromAnEarlierRunIsRefused) {
  std::string captured;
  {
    auto rank0 = GuardGroup::Start(PairNode(0, 0));
    ASSERT_TRUE(rank0);
    RecordingProxy proxy((*rank0)->port());
    auto rank1 = StartAlongside(**rank0, PairNode(1, proxy.port()));
    ASSERT_TRUE(rank1);
    std::vector<std::optional<GroupEnd>> ends(2);
    // A while of heartbeats first: run 1's sequence numbers climb past run 2's.
    PollUntil({rank0->get(), rank1->get()}, ends, [&, start = std::chrono::steady_clock::now()] {
      return std::chrono::steady_clock::now() - start > std::chrono::milliseconds(600);
    });
    (*rank1)->OwnFailed(3);
    PollUntil({rank0->get(), rank1->get()}, ends, [&] { return ends[0].has_value(); });
    ASSERT_TRUE(ends[0]);
    EXPECT_EQ(ends[0]->cause, GroupEnd::Cause::kPeerFailed);
    proxy.stop();
    // The last frame the member sent: its failed report.
    std::string_view rest = proxy.sent();
    while (!rest.empty()) {
      auto length = group::FrameLength(rest);
      ASSERT_TRUE(length && *length && **length <= rest.size());
      captured = std::string(rest.substr(0, **length));
      rest.remove_prefix(**length);
    }
  }
  ASSERT_FALSE(captured.empty());
  auto rank0 = GuardGroup::Start(PairNode(0, 0));
  ASSERT_TRUE(rank0);
  const uint16_t port = (*rank0)->port();
  auto rank1 = StartAlongside(**rank0, PairNode(1, port));
  ASSERT_TRUE(rank1);
  const int replayer = Stranger(port);
  ASSERT_GE(replayer, 0);
  ASSERT_EQ(send(replayer, captured.data(), captured.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(captured.size()));
  std::vector<std::optional<GroupEnd>> ends(2);
  PollUntil({rank0->get(), rank1->get()}, ends, [&, start = std::chrono::steady_clock::now()] {
    return std::chrono::steady_clock::now() - start > std::chrono::milliseconds(400);
  });
  close(replayer);
  EXPECT_FALSE(ends[0]) << GroupEndExitStatus(*ends[0]);
  EXPECT_FALSE(ends[1]);
  EXPECT_GE((*rank0)->refused(), 1u);
}

// Issue 29: a member took a TCP accept for "joined" and started its job. Against a listener
// that accepts (the kernel does) and never answers, it now gives up at the formation wait.
TEST(GuardGroup, AMemberIsNotJoinedByATcpAcceptAlone) {
  auto quiet = std::make_unique<testing::QuietListener>(16);
  ASSERT_NE(quiet->port(), 0);
  GuardGroupSettings s = PairNode(1, quiet->port());
  s.form_wait = std::chrono::milliseconds(600);
  const auto start = std::chrono::steady_clock::now();
  const auto started = GuardGroup::Start(s);
  const double waited_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  quiet.reset();
  ASSERT_FALSE(started) << "joined without a welcome";
  EXPECT_EQ(started.error().errno_value, ETIMEDOUT);
  EXPECT_NE(EnglishText(started.error().what).find("no welcome"), std::string::npos);
  EXPECT_GE(waited_s, 0.55);
  EXPECT_LT(waited_s, 2.5);
}

}  // namespace
}  // namespace headroom
