// Where a guard's group is, found from its launcher's environment (docs/guard-group.md
// "Finding the group"): torchrun's MASTER_ADDR / MASTER_PORT / NNODES / NODE_RANK, else
// Slurm's SLURM_JOB_ID / SLURM_NODEID / SLURM_JOB_NUM_NODES / SLURM_JOB_NODELIST (its first
// host). Pure: the CLI passes the variables in (the library reads no environment).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace headroom::group {

// torchrun's default MASTER_PORT is 29500; the group listens one above the master port so
// it never collides with torchrun's own store, and on 29501 when no MASTER_PORT is set.
inline constexpr uint16_t kDefaultGroupPort = 29501;

struct GroupPlace {
  std::string host;  // the coordinator's host, as the launcher names it
  uint16_t port = kDefaultGroupPort;
  uint16_t node_rank = 0;
  uint16_t nodes = 0;
  std::string job_id;
  std::string origin;  // "torchrun" or "slurm", for messages and events
};

using Environment = std::map<std::string, std::string, std::less<>>;

// The group from `env`: nullopt when neither launcher's variables are there, an error
// naming the variable when one is malformed (not a number, rank not below the node count,
// fewer than 2 nodes, an elastic NNODES range).
Result<std::optional<GroupPlace>> GroupPlaceFromEnvironment(const Environment& env);

// `host` as a numeric IPv4 address: itself when it is one, else the first IPv4 address the
// resolver gives (getaddrinfo, AF_INET: /etc/hosts, DNS). The coordinator binds to it and
// the members connect to it. A name that resolves to a loopback address while the group has
// members elsewhere is the caller's to catch (Debian maps the host's own name to 127.0.1.1).
// Error: the resolver's message, naming `host`.
Result<std::string> ResolveIPv4(const std::string& host);

// The first host of a Slurm node list: "gpu[01-04,07],login" -> "gpu01", "a,b" -> "a".
Result<std::string> FirstSlurmHost(std::string_view nodelist);

}  // namespace headroom::group
