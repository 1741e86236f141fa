// `headroom doctor --peer HOST[:PORT]`, `--peer-listen [ADDR:]PORT` and `--peer-group`: the
// link between nodes measured with a real all-reduce, and whether the ranks agree (doctor/
// link.h, docs/doctor.md "The link between nodes"). The flags, the secret, the Python and
// the probe's script are found here; the probe runs in doctor/link_probe.h.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/cli.h"

namespace headroom {

// One port for the gate that authenticates the nodes, the next for torch's store.
inline constexpr uint16_t kDefaultLinkPort = 29530;
// --peer-group: the gate two above the launcher's master port (the guard group has the one
// above it, group/group_place.h), the store three above.
inline constexpr uint16_t kLinkPortAboveGroup = 1;

struct PeerFlags {
  std::string peer, listen, secret_file, size = "256MiB", timeout = "60s";
  bool group = false;
  int repeats = 5;
  double expect = 0;  // --peer-expect GBPS; 0: the two-Spark figure
  bool Any() const { return !peer.empty() || !listen.empty() || group; }
};

void AddPeerFlags(CLI::App& app, PeerFlags& f);

// Runs the probe and prints its report (or --json). The exit status is doctor's: 0 ready,
// 1 ready with warnings, 2 blocked (a missing peer, no measurement, a slow link, ranks that
// differ in a version); a UsageError for bad flags. `python_flag`: doctor's --python.
// `other_flags`: --compare, --workload, --report or --config were given too (refused).
int RunDoctorLink(const CliEnv& env, const PeerFlags& f, const std::string& python_flag, bool json,
                  bool verbose, bool other_flags);

}  // namespace headroom
