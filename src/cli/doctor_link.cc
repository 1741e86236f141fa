// doctor's link check at the edge (cli/doctor_link.h): the flags read, the environment read
// (HEADROOM_GROUP_SECRET, the launcher's variables, VIRTUAL_ENV / CONDA_PREFIX), then the
// probe run and its answer judged by doctor/link.h.
#include "cli/doctor_link.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "base/bytes.h"
#include "base/duration.h"
#include "cli/doctor_view.h"
#include "cli/guard_flags.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "doctor/link.h"
#include "doctor/link_probe.h"
#include "group/group_place.h"
#include "group/group_secret.h"

namespace headroom {
namespace {

struct LinkEndpoint {
  std::string host;
  uint16_t port = kDefaultLinkPort;
};

uint16_t LinkPort(std::string_view text, std::string_view flag) {
  auto n = ParsePositiveInt(text);
  // The store takes the port above the gate's, so the gate's is at most 65534.
  if (!n || *n > 65534)
    throw UsageError{TrFormat("{}: '{}' is not a port from 1 to 65534", flag, text)};
  return static_cast<uint16_t>(*n);
}

// "HOST", "HOST:PORT", "[V6]:PORT"; with `port_only_ok`, a bare "PORT" too (the host then
// `default_host`).
LinkEndpoint ParseLinkEndpoint(const std::string& text, std::string_view flag, bool port_only_ok,
                               const std::string& default_host) {
  LinkEndpoint e;
  std::string host = text, port;
  if (text.starts_with('[')) {
    const size_t close = text.find(']');
    if (close == std::string::npos || (close + 1 < text.size() && text[close + 1] != ':'))
      throw UsageError{TrFormat("{}: '{}' is not [ADDRESS]:PORT", flag, text)};
    host = text.substr(1, close - 1);
    if (close + 1 < text.size()) port = text.substr(close + 2);
  } else if (const size_t colon = text.rfind(':'); colon != std::string::npos) {
    if (text.find(':') != colon)
      throw UsageError{TrFormat("{}: '{}': write an IPv6 address as [ADDRESS]:PORT", flag, text)};
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  } else if (port_only_ok && !text.empty() &&
             text.find_first_not_of("0123456789") == std::string::npos) {
    host = default_host;
    port = text;
  }
  if (host.empty()) throw UsageError{TrFormat("{}: '{}' has no host", flag, text)};
  e.host = host;
  if (!port.empty() || text.ends_with(':')) e.port = LinkPort(port, flag);
  return e;
}

bool IsLoopback(const std::string& address) {
  return address.starts_with("127.") || address == "::1" || address == "localhost";
}

// The secret: --peer-secret FILE, else HEADROOM_GROUP_SECRET (the guard group's), else none.
std::string LinkSecret(const PeerFlags& f) {
  if (!f.secret_file.empty()) {
    auto secret = group::ReadGroupSecretFile(f.secret_file);
    if (!secret) throw UsageError{"--peer-secret: " + TranslatedText(secret.error().what)};
    return *secret;
  }
  if (const char* value = std::getenv("HEADROOM_GROUP_SECRET"); value && *value) {
    auto secret = group::GroupSecretFromValue(value, "HEADROOM_GROUP_SECRET");
    if (!secret) throw UsageError{TranslatedText(secret.error().what)};
    return *secret;
  }
  return {};
}

// The interpreter: --python (an interpreter, or a prefix with bin/python3), else the active
// virtual environment's or conda's, else Debian's /usr/bin/python3.
std::string LinkPython(const std::string& flag) {
  std::error_code ec;
  if (!flag.empty()) {
    if (std::filesystem::is_directory(flag, ec)) return flag + "/bin/python3";
    return flag;
  }
  for (const char* name : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    const char* prefix = std::getenv(name);
    if (prefix && *prefix && std::filesystem::exists(std::string(prefix) + "/bin/python3", ec))
      return std::string(prefix) + "/bin/python3";
  }
  return "/usr/bin/python3";
}

group::Environment LinkLauncherEnvironment() {
  group::Environment env;
  for (const char* name : {"MASTER_ADDR", "MASTER_PORT", "NNODES", "NODE_RANK", "SLURM_JOB_ID",
                           "SLURM_NODEID", "SLURM_JOB_NUM_NODES", "SLURM_JOB_NODELIST"}) {
    if (const char* value = std::getenv(name)) env.emplace(name, value);
  }
  return env;
}

// --peer-group: this node's rank and the group's size from torchrun's or Slurm's variables.
void FromLauncher(LinkProbeRequest& r) {
  auto place = group::GroupPlaceFromEnvironment(LinkLauncherEnvironment());
  if (!place) throw UsageError{"--peer-group: " + TranslatedText(place.error().what)};
  if (!*place)
    throw UsageError{
        Tr("--peer-group: no torchrun (MASTER_ADDR, NNODES, NODE_RANK) or Slurm "
           "(SLURM_JOB_ID, SLURM_JOB_NUM_NODES) variables here")};
  const group::GroupPlace& p = **place;
  auto address = group::ResolveIPv4(p.host);
  if (!address) throw UsageError{"--peer-group: " + TranslatedText(address.error().what)};
  r.host = *address;
  if (p.port + kLinkPortAboveGroup >= 65535)
    throw UsageError{TrFormat("--peer-group: port {} leaves no room above it", p.port)};
  r.port = static_cast<uint16_t>(p.port + kLinkPortAboveGroup);
  r.rank = p.node_rank;
  r.world = p.nodes;
  r.role = p.node_rank == 0 ? "listen" : "connect";
}

LinkProbeRequest RequestFor(const PeerFlags& f) {
  const int modes = !f.peer.empty() + !f.listen.empty() + f.group;
  if (modes != 1)
    throw UsageError{Tr("give one of --peer HOST[:PORT], --peer-listen [ADDR:]PORT, --peer-group")};
  LinkProbeRequest r;
  if (!f.peer.empty()) {
    const LinkEndpoint e = ParseLinkEndpoint(f.peer, "--peer", false, "");
    r.role = "connect";
    r.host = e.host;
    r.port = e.port;
    r.rank = 1;
  } else if (!f.listen.empty()) {
    const LinkEndpoint e = ParseLinkEndpoint(f.listen, "--peer-listen", true, "127.0.0.1");
    r.role = "listen";
    r.host = e.host;
    r.port = e.port;
  } else {
    FromLauncher(r);
  }
  auto size = ParseBytes(f.size);
  if (!size) throw UsageError{"--peer-size: " + TranslatedText(size.error().what)};
  if (*size < 4 || *size > 64 * kGiB)
    throw UsageError{TrFormat("--peer-size: {} is not from 4 bytes to 64 GiB", f.size)};
  r.size_bytes = *size;
  if (f.repeats < 1 || f.repeats > 1000)
    throw UsageError{TrFormat("--peer-repeats: {} is not from 1 to 1000", f.repeats)};
  r.repeats = f.repeats;
  auto timeout = ParseDuration(f.timeout);
  if (!timeout) throw UsageError{"--peer-timeout: " + TranslatedText(timeout.error().what)};
  r.timeout_s = std::chrono::duration<double>(*timeout).count();
  if (r.timeout_s > 3600)
    throw UsageError{TrFormat("--peer-timeout: {} is over an hour", f.timeout)};
  if (f.expect < 0) throw UsageError{Tr("--peer-expect: give a positive GB/s")};
  r.secret = LinkSecret(f);
  // Off loopback, only nodes that hold the secret may meet (docs/doctor.md "Security").
  if (r.secret.empty() && !IsLoopback(r.host)) {
    throw UsageError{TrFormat(
        "{} is not a loopback address: give --peer-secret FILE or HEADROOM_GROUP_SECRET (the "
        "same secret on every node; docs/guard-group.md \"Security\")",
        r.host)};
  }
  if (f.group && r.role == "listen" && !IsLoopback(r.host)) r.host = "0.0.0.0";
  return r;
}

// One line for an answer without facts from the other nodes: the gate failed, or the probe
// did not answer.
// How long past --peer-timeout the probe may run before it is ended: --peer-timeout counts
// from the end of torch's import, which takes seconds warm and can take tens cold.
constexpr double kLinkImportGraceS = 60;

int PrintLinkFailure(const CliEnv& env, const std::string& line) {
  PrintError(env, "doctor: " + line);
  return ExitStatusFor(DoctorVerdict::kBlocked);
}

// The probe's own lines on stderr ("headroom link: refused ADDR: wrong secret ..."), passed
// on; torch's warnings are not.
void PrintProbeNotes(const CliEnv& env, const std::string& err) {
  size_t start = 0;
  while (start < err.size()) {
    size_t end = err.find('\n', start);
    if (end == std::string::npos) end = err.size();
    const std::string_view line(err.data() + start, end - start);
    if (line.starts_with("headroom link: "))
      std::fprintf(env.err, "%.*s\n", static_cast<int>(line.size()), line.data());
    start = end + 1;
  }
}

}  // namespace

void AddPeerFlags(CLI::App& app, PeerFlags& f) {
  app.add_option("--peer", f.peer,
                 Tr("measure the link to HOST[:PORT] (default port 29530), where the other node "
                    "runs doctor --peer-listen; and check that the two agree on torch, CUDA, "
                    "NCCL, nvcc and the NCCL and memory variables"));
  app.add_option("--peer-listen", f.listen,
                 Tr("wait for the other node's doctor --peer on [ADDR:]PORT (ADDR defaults to "
                    "127.0.0.1; any other needs --peer-secret); the port above is torch's store"));
  app.add_flag("--peer-group", f.group,
               Tr("the same, inside a torchrun or Slurm job: node rank 0 listens on the master "
                  "port + 2, the other nodes join"));
  app.add_option("--peer-secret", f.secret_file,
                 Tr("a file (mode 0600) with the secret both nodes share (default: "
                    "$HEADROOM_GROUP_SECRET)"));
  app.add_option("--peer-size", f.size, Tr("the all-reduced tensor (default 256MiB)"));
  app.add_option("--peer-repeats", f.repeats, Tr("timed all-reduces (default 5)"));
  app.add_option("--peer-timeout", f.timeout,
                 Tr("the most the whole check takes, waiting for the peer included (default 60s)"));
  app.add_option("--peer-expect", f.expect,
                 Tr("the bus bandwidth to judge against, in GB/s (default: two Sparks' NCCL, "
                    "about 21)"));
}

int RunDoctorLink(const CliEnv& env, const PeerFlags& f, const std::string& python_flag, bool json,
                  bool verbose, bool other_flags) {
  if (other_flags)
    throw UsageError{
        Tr("--peer, --peer-listen and --peer-group measure the link: --compare, --workload, "
           "--report and --config do not apply")};
  const LinkProbeRequest request = RequestFor(f);
  const std::string companion = FindCompanionDir();
  const std::string script = companion + "/headroom/link_probe.py";
  std::error_code ec;
  if (companion.empty() || !std::filesystem::is_regular_file(script, ec))
    throw UsageError{Tr("cannot find the companion's headroom/link_probe.py beside headroom")};
  const std::string python = LinkPython(python_flag);
  if (request.role == "listen") {
    std::fprintf(env.err, "headroom doctor: %s\n",
                 TrFormat("waiting up to {} for the other node on {}:{} (and {} for torch's "
                          "store)",
                          f.timeout, request.host, request.port, request.port + 1)
                     .c_str());
  }
  auto ran = RunLinkProbe(python, script, request, kLinkImportGraceS);
  if (!ran) return PrintLinkFailure(env, TranslatedText(ran.error().what));
  PrintProbeNotes(env, ran->err);
  if (ran->timed_out)
    return PrintLinkFailure(
        env, TrFormat("the link probe did not finish within {} (ended it)", f.timeout));
  auto probe = ParseLinkProbe(ran->out);
  if (!probe) {
    std::string tail = ran->err;
    while (!tail.empty() && tail.back() == '\n') tail.pop_back();
    if (const size_t nl = tail.rfind('\n'); nl != std::string::npos) tail.erase(0, nl + 1);
    return PrintLinkFailure(env,
                            TrFormat("{} did not answer (exit {}): {}", python, ran->status,
                                     tail.empty() ? TranslatedText(probe.error().what) : tail));
  }
  const std::optional<double> expect =
      f.expect > 0 ? std::optional<double>(f.expect) : std::nullopt;
  const std::vector<CheckResult> checks = {CheckLink(*probe, expect), CheckRanks(probe->ranks)};
  const DoctorVerdict verdict = OverallVerdict(checks, std::nullopt);
  if (json) {
    std::fputs((LinkJson(*probe, expect, checks, verdict).dump(2) + "\n").c_str(), env.out);
    if (!probe->ok && probe->stage == "gate") PrintError(env, "doctor: " + probe->error);
    return ExitStatusFor(verdict);
  }
  if (!probe->ok && probe->stage == "gate") return PrintLinkFailure(env, probe->error);
  PrintLinkReport(env, probe->rank, probe->world, checks, verdict, verbose);
  return ExitStatusFor(verdict);
}

}  // namespace headroom
