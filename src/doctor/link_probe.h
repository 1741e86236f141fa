// Runs the link probe (python/headroom/link_probe.py, docs/doctor.md "The link between
// nodes") in the job's Python: the request on its stdin (so the secret is in no argv), its
// one JSON line read from stdout, all within a deadline after which the probe is killed
// (SIGKILL, by its PID) and reaped. The probe inherits this process's environment: the
// variables it compares across ranks are the ones the job would run with.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace headroom {

// Most of the probe's stdout kept (one JSON line, a few KiB per rank), and of its stderr.
inline constexpr size_t kMaxLinkProbeOutput = size_t{1} << 20;
inline constexpr size_t kLinkProbeStderrTail = 2048;

struct LinkProbeRequest {
  std::string role;  // "listen" or "connect"
  std::string host;  // listen: the address bound; connect: rank 0's
  uint16_t port = 0;
  int rank = 0, world = 2;
  std::string secret;  // "" on loopback without one
  uint64_t size_bytes = 0;
  int repeats = 5;
  double timeout_s = 60;
};

// The request as the probe reads it: one JSON line.
std::string LinkProbeRequestLine(const LinkProbeRequest& request);

struct LinkProbeOutput {
  std::string out;  // stdout
  std::string err;  // the last kLinkProbeStderrTail bytes of stderr
  int status = 0;   // exit status, 128 + signal when killed
  bool timed_out = false;
};

// Runs `python script` with the request on stdin, for at most request.timeout_s plus
// `grace_s`. Error: the pipes or fork failed, or `python` could not be executed (named).
Result<LinkProbeOutput> RunLinkProbe(const std::string& python, const std::string& script,
                                     const LinkProbeRequest& request, double grace_s);

}  // namespace headroom
