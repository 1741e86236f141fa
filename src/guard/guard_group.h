// The guard group as one node's guard runs it (docs/guard-group.md): node rank 0's guard runs
// the Coordinator, every other node's a Member, both driven from the guard's own epoll loop
// (guard/guard.cc: the group's descriptor is in the loop's wake set, Poll is called at each
// wakeup and never blocks). The loop tells the group of this node's end (ended for memory,
// failed, done) and ends this node's job when Poll brings the group's verdict.
//
// Rank 0: a member's report or loss, or a rank that has not joined within the formation
// wait, becomes an abort to every member naming the origin node and its reading or status;
// its own job's end for memory or failure likewise. Once its own job is done it stays while
// any member still runs (Holding), so a member never takes the coordinator's exit for a loss.
// Other ranks: connect (retrying until the formation wait runs out) before the job starts,
// report their own end, and take the coordinator's abort or its loss as the verdict.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/message.h"
#include "base/result.h"
#include "group/group_place.h"
#include "guard/group_end.h"

namespace headroom {
namespace group {
class Coordinator;
class Member;
}  // namespace group

// torchrun's rendezvous waits 600 s for every node to join (join_timeout, torch
// distributed/elastic/rendezvous/dynamic_rendezvous.py): the group waits as long.
inline constexpr std::chrono::milliseconds kDefaultGroupWait{600'000};
// A freeze is noticed after six periods of silence (docs/guard-group.md "Heartbeats"): a
// guard that misses five heartbeats on a loaded host is not taken for lost. The freeze test
// runs at 200 ms / 1 s on this project's loaded 2-core VM without a false loss; an idle
// guard's cost at 500 ms is measured by bench/group_reaction.py.
inline constexpr std::chrono::milliseconds kDefaultHeartbeat{500};
inline constexpr std::chrono::milliseconds kDefaultHeartbeatTimeout{3000};

struct GuardGroupSettings {
  std::string host;  // the coordinator's numeric IPv4 address (the CLI resolves names)
  uint16_t port = 0;
  uint16_t node_rank = 0;
  uint16_t nodes = 2;
  std::string job_id;
  std::string secret;
  std::chrono::milliseconds heartbeat = kDefaultHeartbeat;
  std::chrono::milliseconds heartbeat_timeout = kDefaultHeartbeatTimeout;
  std::chrono::milliseconds form_wait = kDefaultGroupWait;
};

// What guard's group flags say, as text (cli/guard_flags.h): `--group` given (with HOST:PORT,
// or alone: from the launcher's environment), --node-rank, --nodes, --heartbeat,
// --heartbeat-timeout, --group-wait.
struct GuardGroupRequest {
  bool given = false;
  std::string address;  // HOST:PORT; empty: from torchrun's or Slurm's variables
  std::string node_rank, nodes;
  std::string heartbeat, heartbeat_timeout, group_wait;
  std::string secret_file;  // --group-secret-file (read by the caller)
};

// The group's settings from the request, the launcher's variables in `env` filling what the
// flags leave out (the flags win); the host is left as given (a name or an address: the
// caller resolves it) and the secret empty. Nullopt without --group. Errors name the flag or
// variable: HOST:PORT malformed, a rank not below the node count, fewer than 2 nodes, a
// heartbeat timeout not above the period, --group alone with neither launcher's variables.
Result<std::optional<GuardGroupSettings>> GuardGroupSettingsFor(const GuardGroupRequest& request,
                                                                const group::Environment& env);

class GuardGroup {
 public:
  // Rank 0 listens on host:port; any other rank connects, retrying every 100 ms until the
  // formation wait runs out (then an error whose errno_value is connect's).
  static Result<std::unique_ptr<GuardGroup>> Start(const GuardGroupSettings& settings);
  GuardGroup(const GuardGroup&) = delete;
  GuardGroup& operator=(const GuardGroup&) = delete;
  ~GuardGroup();

  const GuardGroupSettings& settings() const { return settings_; }
  uint16_t port() const;  // where rank 0 listens (read back: port 0 asks for any)
  int fd() const;         // readable when there is group traffic
  // How long the loop may sleep before the next heartbeat is due.
  std::chrono::milliseconds UntilDue() const;
  // Handles traffic, heartbeats and the formation wait; the verdict that ends this node's
  // job, once (nullopt after this node's own end was reported).
  std::optional<GroupEnd> Poll();
  // This node's end, told to the group (rank 0: the abort goes out to every member).
  void OwnMemory(uint64_t available_bytes, uint64_t level_bytes);
  void OwnFailed(int status);
  void OwnDone();
  // Rank 0 only: its own job is done while members still run (and nothing ended the group).
  bool Holding() const;
  // Frames refused so far (unauthenticated, malformed, replayed), for events and tests.
  uint64_t refused() const;
  // The longest silence of a peer this node heard (Membership::longest_silence_ms): rank 0
  // hears every member, a member hears rank 0.
  int64_t longest_silence_ms() const;

 private:
  explicit GuardGroup(const GuardGroupSettings& settings);
  std::optional<GroupEnd> Decided(const GroupEnd& end);

  GuardGroupSettings settings_;
  std::unique_ptr<group::Coordinator> coordinator_;
  std::unique_ptr<group::Member> member_;
  int64_t start_ms_ = 0;
  int64_t last_beat_ms_ = 0;
  bool ended_ = false;    // this node's end is decided (its own, or the group's verdict)
  bool aborted_ = false;  // rank 0 sent the abort
  bool own_done_ = false;
};

// The one line that names why the group ended this node's job, in English for the
// torchelastic error file and events, translated for the terminal: "node 1: out of unified
// memory, MemAvailable 3.10 GiB < 4.00 GiB; the guard group ended node 0's job".
Message GroupEndMessage(const GroupEnd& end, uint16_t self_rank);

// The exit status for `end` (base/exit_status.h): kExitGroupPeerMemory, kExitGroupPeerFailed,
// kExitGroupPeerLost.
int GroupEndExitStatus(const GroupEnd& end);

}  // namespace headroom
