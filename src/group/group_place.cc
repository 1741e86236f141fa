#include "group/group_place.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <charconv>

#include "group/group_message.h"

namespace headroom::group {
namespace {

Result<uint64_t> Number(const Environment& env, std::string_view name, uint64_t max) {
  const std::string& text = env.find(name)->second;
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > max) {
    return Error(Msg("{}={}: not a whole number up to {}", name, text, max));
  }
  return value;
}

bool Has(const Environment& env, std::string_view name) {
  const auto it = env.find(name);
  return it != env.end() && !it->second.empty();
}

Result<std::optional<GroupPlace>> Check(GroupPlace place, std::string_view rank_name) {
  if (place.nodes < 2) return Error(Msg("{}: a group needs 2 or more nodes", place.origin));
  if (place.node_rank >= place.nodes) {
    return Error(Msg("{}={}: not below the {} nodes", rank_name, place.node_rank, place.nodes));
  }
  if (auto ok = CheckJobId(place.job_id); !ok) return InContext(place.origin, ok.error());
  return std::optional<GroupPlace>(std::move(place));
}

}  // namespace

Result<std::string> ResolveIPv4(const std::string& host) {
  in_addr numeric{};
  if (inet_pton(AF_INET, host.c_str(), &numeric) == 1) return host;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || !found) {
    return Error(Msg("{}: no IPv4 address: {}", host, rc != 0 ? gai_strerror(rc) : "none"));
  }
  char text[INET_ADDRSTRLEN] = {};
  const auto* address = reinterpret_cast<const sockaddr_in*>(found->ai_addr);
  inet_ntop(AF_INET, &address->sin_addr, text, sizeof text);
  freeaddrinfo(found);
  return std::string(text);
}

Result<std::string> FirstSlurmHost(std::string_view nodelist) {
  const size_t cut = nodelist.find_first_of("[,");
  if (cut == std::string_view::npos || nodelist[cut] == ',') {
    const std::string host(nodelist.substr(0, cut));
    if (host.empty()) return Error(Msg("SLURM_JOB_NODELIST={}: no host", nodelist));
    return host;
  }
  // prefix[first-range,...]: the first number of the first range, its zero padding kept.
  const size_t end = nodelist.find_first_of("-,]", cut + 1);
  const std::string_view first = nodelist.substr(cut + 1, end - cut - 1);
  if (end == std::string_view::npos || first.empty() ||
      first.find_first_not_of("0123456789") != std::string_view::npos) {
    return Error(Msg("SLURM_JOB_NODELIST={}: not a Slurm host list", nodelist));
  }
  return std::string(nodelist.substr(0, cut)) + std::string(first);
}

Result<std::optional<GroupPlace>> GroupPlaceFromEnvironment(const Environment& env) {
  if (Has(env, "MASTER_ADDR") && Has(env, "NNODES") && Has(env, "NODE_RANK")) {
    GroupPlace place;
    place.origin = "torchrun";
    place.host = env.find("MASTER_ADDR")->second;
    if (env.find("NNODES")->second.find(':') != std::string::npos) {
      return Error(Msg("NNODES={}: an elastic range; the group needs a fixed node count",
                       env.find("NNODES")->second));
    }
    auto nodes = Number(env, "NNODES", 65535);
    if (!nodes) return nodes.error();
    auto rank = Number(env, "NODE_RANK", 65535);
    if (!rank) return rank.error();
    std::string master_port = "29500";
    if (Has(env, "MASTER_PORT")) {
      auto port = Number(env, "MASTER_PORT", 65534);
      if (!port) return port.error();
      place.port = static_cast<uint16_t>(*port + 1);
      master_port = env.find("MASTER_PORT")->second;
    }
    place.nodes = static_cast<uint16_t>(*nodes);
    place.node_rank = static_cast<uint16_t>(*rank);
    place.job_id = "torchrun-" + place.host + ":" + master_port;
    return Check(std::move(place), "NODE_RANK");
  }
  if (Has(env, "SLURM_JOB_ID") && Has(env, "SLURM_NODEID") && Has(env, "SLURM_JOB_NUM_NODES") &&
      Has(env, "SLURM_JOB_NODELIST")) {
    GroupPlace place;
    place.origin = "slurm";
    auto host = FirstSlurmHost(env.find("SLURM_JOB_NODELIST")->second);
    if (!host) return host.error();
    auto nodes = Number(env, "SLURM_JOB_NUM_NODES", 65535);
    if (!nodes) return nodes.error();
    auto rank = Number(env, "SLURM_NODEID", 65535);
    if (!rank) return rank.error();
    place.host = *host;
    place.nodes = static_cast<uint16_t>(*nodes);
    place.node_rank = static_cast<uint16_t>(*rank);
    place.job_id = "slurm-" + env.find("SLURM_JOB_ID")->second;
    return Check(std::move(place), "SLURM_NODEID");
  }
  return std::optional<GroupPlace>();
}

}  // namespace headroom::group
