// Implementation notes.
//  - Clocks: the monotonic clock (ms) for heartbeats, silence and the formation wait; the
//    wall clock (Unix ms) only for the frames' send time, which the replay window checks.
//  - Poll never blocks (timeout 0): the guard's own epoll set holds the group's descriptor
//    (the coordinator's epoll set, or the member's socket) and its timeout is at most
//    UntilDue, so heartbeats go out on time whatever the guard's own period is.
//  - One verdict per node: once this node's end is decided (its own, or the group's), later
//    verdicts are not acted on; rank 0 still sends at most one abort.
#include "guard/guard_group.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <thread>

#include "base/bytes.h"
#include "base/duration.h"
#include "base/exit_status.h"
#include "group/coordinator.h"
#include "group/member.h"

namespace headroom {
namespace {

int64_t MonoMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

uint64_t UnixMs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1'000'000;
}

double MonoS() { return static_cast<double>(MonoMs()) / 1000.0; }

GroupEnd FromVerdict(const group::Verdict& v) {
  GroupEnd end;
  switch (v.kind) {
    case group::VerdictKind::kPeerEndedForMemory:
      end.cause = GroupEnd::Cause::kPeerMemory;
      break;
    case group::VerdictKind::kPeerFailed:
      end.cause = GroupEnd::Cause::kPeerFailed;
      break;
    case group::VerdictKind::kPeerLost:
      end.cause = GroupEnd::Cause::kPeerLost;
      break;
  }
  end.origin_rank = v.node_rank;
  end.available_bytes = v.available_bytes;
  end.level_bytes = v.level_bytes;
  end.status = v.status;
  end.relayed = v.relayed;
  end.verdict_s = MonoS();
  return end;
}

group::Verdict ToVerdict(const GroupEnd& end) {
  group::Verdict v;
  v.kind = end.cause == GroupEnd::Cause::kPeerMemory   ? group::VerdictKind::kPeerEndedForMemory
           : end.cause == GroupEnd::Cause::kPeerFailed ? group::VerdictKind::kPeerFailed
                                                       : group::VerdictKind::kPeerLost;
  v.node_rank = end.origin_rank;
  v.available_bytes = end.available_bytes;
  v.level_bytes = end.level_bytes;
  v.status = end.status;
  return v;
}

Result<uint64_t> WholeNumber(std::string_view flag, const std::string& text, uint64_t max) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > max) {
    return Error(Msg("{}: {}: not a whole number up to {}", flag, text, max));
  }
  return value;
}

Result<std::chrono::milliseconds> Millis(std::string_view flag, const std::string& text,
                                         std::chrono::milliseconds otherwise) {
  if (text.empty()) return otherwise;
  auto d = ParseDuration(text);
  if (!d) return Error(Msg("{}: {}", std::string(flag), d.error().what));
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  if (ms.count() < 10) return Error(Msg("{}: {}: under 10 ms", flag, text));
  return ms;
}

}  // namespace

Result<std::optional<GuardGroupSettings>> GuardGroupSettingsFor(const GuardGroupRequest& r,
                                                                const group::Environment& env) {
  if (!r.given) return std::optional<GuardGroupSettings>();
  GuardGroupSettings s;
  auto place = group::GroupPlaceFromEnvironment(env);
  // Flags that say everything need no launcher's variables: a place that does not make a
  // group (srun -n2 on one node: SLURM_JOB_NUM_NODES=1) is then not an error.
  const bool explicit_place = !r.address.empty() && !r.node_rank.empty() && !r.nodes.empty();
  if (!place && explicit_place) place = std::optional<group::GroupPlace>();
  if (!place) return place.error();
  if (r.address.empty()) {
    if (!*place) {
      return Error(
          Msg("--group without HOST:PORT: neither torchrun's (MASTER_ADDR, NNODES, "
              "NODE_RANK) nor Slurm's (SLURM_JOB_ID, SLURM_NODEID, SLURM_JOB_NUM_NODES, "
              "SLURM_JOB_NODELIST) variables are set"));
    }
    s.host = (*place)->host;
    s.port = (*place)->port;
    s.job_id = (*place)->job_id;
  } else {
    const size_t colon = r.address.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      return Error(Msg("--group: {}: not HOST:PORT", r.address));
    }
    auto port = WholeNumber("--group", r.address.substr(colon + 1), 65535);
    if (!port || *port == 0) return Error(Msg("--group: {}: the port is not 1..65535", r.address));
    s.host = r.address.substr(0, colon);
    s.port = static_cast<uint16_t>(*port);
    // The launcher's job id when there is one (every node sees the same), else the address.
    s.job_id = *place ? (*place)->job_id : "group-" + r.address.substr(0, 58);
  }
  if (*place) {
    s.node_rank = (*place)->node_rank;
    s.nodes = (*place)->nodes;
  } else if (r.node_rank.empty() || r.nodes.empty()) {
    return Error(
        Msg("--group {}: give --node-rank R and --nodes N (no launcher's variables)", r.address));
  }
  if (!r.nodes.empty()) {
    auto n = WholeNumber("--nodes", r.nodes, 4096);
    if (!n) return n.error();
    s.nodes = static_cast<uint16_t>(*n);
  }
  if (!r.node_rank.empty()) {
    auto n = WholeNumber("--node-rank", r.node_rank, 4095);
    if (!n) return n.error();
    s.node_rank = static_cast<uint16_t>(*n);
  }
  if (s.nodes < 2) return Error(Msg("--nodes: {}: a group needs 2 or more nodes", s.nodes));
  if (s.node_rank >= s.nodes) {
    return Error(Msg("--node-rank: {}: not below the {} nodes", s.node_rank, s.nodes));
  }
  auto beat = Millis("--heartbeat", r.heartbeat, kDefaultHeartbeat);
  if (!beat) return beat.error();
  auto timeout = Millis("--heartbeat-timeout", r.heartbeat_timeout, kDefaultHeartbeatTimeout);
  if (!timeout) return timeout.error();
  auto wait = Millis("--group-wait", r.group_wait, kDefaultGroupWait);
  if (!wait) return wait.error();
  if (*timeout <= *beat) {
    return Error(Msg("--heartbeat-timeout: {} ms is not above the heartbeat period {} ms",
                     timeout->count(), beat->count()));
  }
  s.heartbeat = *beat;
  s.heartbeat_timeout = *timeout;
  s.form_wait = *wait;
  return std::optional<GuardGroupSettings>(std::move(s));
}

GuardGroup::GuardGroup(const GuardGroupSettings& settings) : settings_(settings) {}
GuardGroup::~GuardGroup() = default;

Result<std::unique_ptr<GuardGroup>> GuardGroup::Start(const GuardGroupSettings& s) {
  std::unique_ptr<GuardGroup> g(new GuardGroup(s));
  g->start_ms_ = g->last_beat_ms_ = MonoMs();
  if (s.node_rank == 0) {
    group::CoordinatorSettings c;
    c.host = s.host;
    c.port = s.port;
    c.job_id = s.job_id;
    c.secret = s.secret;
    c.nodes = s.nodes;
    c.heartbeat_timeout_ms = s.heartbeat_timeout.count();
    // A member's handshake is one round trip; one that cannot make it within the heartbeat
    // timeout would be lost for that silence anyway. So a stranger holds a place 3 s at most.
    c.handshake_timeout_ms = s.heartbeat_timeout.count();
    auto listening = group::Coordinator::Listen(c);
    if (!listening) return listening.error();
    g->coordinator_ = std::move(*listening);
    return g;
  }
  group::MemberSettings m;
  m.host = s.host;
  m.port = s.port;
  m.job_id = s.job_id;
  m.secret = s.secret;
  m.node_rank = s.node_rank;
  m.nodes = s.nodes;
  m.heartbeat_ms = s.heartbeat.count();
  m.heartbeat_timeout_ms = s.heartbeat_timeout.count();
  // The coordinator's guard may start after this one: retry until the formation wait ends.
  // No one attempt waits past it: each connect, and each wait for the welcome after it, is
  // bounded by what is left of the wait (at most 3 s, so a coordinator that starts late is
  // still found soon after). Joined only once the coordinator's signed welcome came.
  for (;;) {
    const auto left = [&] {
      return std::clamp<int64_t>(s.form_wait.count() - (MonoMs() - g->start_ms_), 1, 3'000);
    };
    m.connect_timeout_ms = left();
    auto connected = group::Member::Connect(m, MonoMs(), UnixMs());
    Result<bool> joined =
        connected ? (*connected)->AwaitWelcome(static_cast<int>(left()), MonoMs(), UnixMs())
                  : Result<bool>(connected.error());
    if (joined) {
      g->member_ = std::move(*connected);
      g->start_ms_ = g->last_beat_ms_ = MonoMs();
      return g;
    }
    if (joined.error().errno_value == 0 || MonoMs() - g->start_ms_ >= s.form_wait.count()) {
      return Error{Msg("--group {}:{}: no coordinator after {:.0f} s: {}", s.host, s.port,
                       static_cast<double>(MonoMs() - g->start_ms_) / 1000.0, joined.error().what),
                   joined.error().errno_value};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

uint16_t GuardGroup::port() const { return coordinator_ ? coordinator_->port() : settings_.port; }

int GuardGroup::fd() const { return coordinator_ ? coordinator_->fd() : member_->fd(); }

std::chrono::milliseconds GuardGroup::UntilDue() const {
  const int64_t left = last_beat_ms_ + settings_.heartbeat.count() - MonoMs();
  return std::chrono::milliseconds(std::max<int64_t>(left, 1));
}

uint64_t GuardGroup::refused() const { return coordinator_ ? coordinator_->refused() : 0; }

int64_t GuardGroup::longest_silence_ms() const {
  return coordinator_ ? coordinator_->membership().longest_silence_ms()
                      : member_->membership().longest_silence_ms();
}

std::optional<GroupEnd> GuardGroup::Decided(const GroupEnd& end) {
  if (coordinator_ && !aborted_) {
    coordinator_->BroadcastAbort(ToVerdict(end), UnixMs());
    aborted_ = true;
  }
  if (ended_) return std::nullopt;
  ended_ = true;
  return end;
}

std::optional<GroupEnd> GuardGroup::Poll() {
  const int64_t now = MonoMs();
  if (coordinator_) {
    if (now - last_beat_ms_ >= settings_.heartbeat.count()) {
      coordinator_->Broadcast(group::MessageKind::kHeartbeat, UnixMs());
      last_beat_ms_ = now;
    }
    if (auto v = coordinator_->Poll(0, now, UnixMs())) return Decided(FromVerdict(*v));
    // A rank that never joined within the formation wait is lost.
    if (const auto missing = coordinator_->membership().FirstMissing();
        missing && now - start_ms_ >= settings_.form_wait.count() && !aborted_) {
      group::Verdict lost;
      lost.node_rank = *missing;
      return Decided(FromVerdict(lost));
    }
    return std::nullopt;
  }
  if (now - last_beat_ms_ >= settings_.heartbeat.count()) last_beat_ms_ = now;
  auto v = member_->Poll(0, now, UnixMs());
  if (!v || ended_) return std::nullopt;
  ended_ = true;
  return FromVerdict(*v);
}

void GuardGroup::OwnMemory(uint64_t available_bytes, uint64_t level_bytes) {
  if (ended_) return;
  ended_ = true;
  if (coordinator_) {
    group::Verdict v{group::VerdictKind::kPeerEndedForMemory, 0, available_bytes, level_bytes, 0};
    coordinator_->BroadcastAbort(v, UnixMs());
    aborted_ = true;
  } else {
    (void)member_->Send(group::MessageKind::kEndedForMemory, UnixMs(), available_bytes,
                        std::max<uint64_t>(level_bytes, 1));
  }
}

void GuardGroup::OwnFailed(int status) {
  if (ended_) return;
  ended_ = true;
  if (coordinator_) {
    coordinator_->BroadcastAbort(group::Verdict{group::VerdictKind::kPeerFailed, 0, 0, 0, status},
                                 UnixMs());
    aborted_ = true;
  } else {
    (void)member_->Send(group::MessageKind::kFailed, UnixMs(), 0, 0, status);
  }
}

void GuardGroup::OwnDone() {
  if (ended_) return;
  ended_ = true;
  own_done_ = true;
  if (member_) (void)member_->Send(group::MessageKind::kDone, UnixMs());
}

bool GuardGroup::Holding() const {
  return coordinator_ && own_done_ && !aborted_ && !coordinator_->membership().AllLeft();
}

Message GroupEndMessage(const GroupEnd& end, uint16_t self_rank) {
  switch (end.cause) {
    case GroupEnd::Cause::kPeerMemory:
      if (end.origin_rank == self_rank) {  // this node's own end, for its workers' error files
        return Msg(
            "node {}: out of unified memory, MemAvailable {} against the kill level {}; "
            "its guard ended its job and the guard group the others'",
            end.origin_rank, FormatGiB(end.available_bytes), FormatGiB(end.level_bytes));
      }
      if (end.available_bytes >= end.level_bytes) {  // a projected crossing: killed before it
        return Msg(
            "node {}: out of unified memory, MemAvailable {} falling fast to the kill "
            "level {}; the guard group ended node {}'s job",
            end.origin_rank, FormatGiB(end.available_bytes), FormatGiB(end.level_bytes), self_rank);
      }
      return Msg(
          "node {}: out of unified memory, MemAvailable {} < {}; the guard group ended node "
          "{}'s job",
          end.origin_rank, FormatGiB(end.available_bytes), FormatGiB(end.level_bytes), self_rank);
    case GroupEnd::Cause::kPeerFailed:
      return Msg("node {}: its job failed (exit status {}); the guard group ended node {}'s job",
                 end.origin_rank, end.status, self_rank);
    case GroupEnd::Cause::kPeerLost:
      break;
  }
  return Msg(
      "node {}: lost (no heartbeat within the timeout, its guard gone, or it never "
      "joined); the guard group ended node {}'s job",
      end.origin_rank, self_rank);
}

int GroupEndExitStatus(const GroupEnd& end) {
  switch (end.cause) {
    case GroupEnd::Cause::kPeerMemory:
      return kExitGroupPeerMemory;
    case GroupEnd::Cause::kPeerFailed:
      return kExitGroupPeerFailed;
    case GroupEnd::Cause::kPeerLost:
      break;
  }
  return kExitGroupPeerLost;
}

}  // namespace headroom
