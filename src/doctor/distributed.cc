// Implementation notes: each finding is a detail line with its own verdict; the check's
// verdict is the worst of them. A setting left at torch's or Slurm's default is not a finding
// (the defaults tear a failed rank down, except Slurm's, which only a multi-node run cares
// about).
#include "doctor/distributed.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "doctor/checks.h"

namespace headroom {
namespace {

using V = CheckVerdict;

std::optional<std::string> Env(const DistributedFacts& d, std::string_view name) {
  const auto it = d.env.find(name);
  if (it == d.env.end()) return std::nullopt;
  return it->second;
}

std::optional<int64_t> Count(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  int64_t v = 0;
  const char* end = text->data() + text->size();
  auto [p, ec] = std::from_chars(text->data(), end, v);
  if (ec != std::errc() || p != end) return std::nullopt;
  return v;
}

bool SameWord(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// Worse of two verdicts for G11: fail > warn > skip > pass > info.
int Rank(V v) {
  switch (v) {
    case V::kFail:
      return 4;
    case V::kWarn:
      return 3;
    case V::kSkip:
      return 2;
    case V::kPass:
      return 1;
    case V::kInfo:
      break;
  }
  return 0;
}

}  // namespace

std::optional<int> ParseKillOnBadExit(std::string_view text) {
  std::optional<int> found;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    line = line.substr(0, line.find('#'));
    while (!line.empty()) {
      const size_t start = line.find_first_not_of(" \t\r");
      if (start == std::string_view::npos) break;
      line.remove_prefix(start);
      const size_t stop = line.find_first_of(" \t\r");
      const std::string_view pair = line.substr(0, stop);
      line.remove_prefix(stop == std::string_view::npos ? line.size() : stop);
      const size_t eq = pair.find('=');
      if (eq == std::string_view::npos || !SameWord(pair.substr(0, eq), "KillOnBadExit")) continue;
      const std::string_view value = pair.substr(eq + 1);
      int v = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      found = ec == std::errc() && p == value.data() + value.size() ? std::optional<int>(v)
                                                                    : std::nullopt;
    }
  }
  return found;  // the last one wins, as in Slurm's parser
}

std::string LibraryFileVersion(std::string_view filename, std::string_view stem) {
  if (!filename.starts_with(stem) || filename.size() <= stem.size() + 1 ||
      filename[stem.size()] != '.')
    return "";
  const std::string_view version = filename.substr(stem.size() + 1);
  if (!std::isdigit(static_cast<unsigned char>(version.front()))) return "";
  for (char c : version)
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') return "";
  return std::string(version);
}

std::optional<std::string> EffectiveNccl(const DistributedFacts& d) {
  return d.nccl_wheel ? d.nccl_wheel : d.nccl_system;
}

CheckResult CheckDistributed(const DoctorFacts& f) {
  const DistributedFacts& d = f.distributed;
  CheckResult r;
  r.id = "G11";
  r.title = Msg("distributed settings");
  V worst = V::kInfo;
  Message worst_summary;
  auto finding = [&](V v, Message summary, Message detail) {
    r.details.push_back(std::move(detail));
    if (Rank(v) > Rank(worst)) {
      worst = v;
      worst_summary = std::move(summary);
    }
  };
  for (const auto& [name, value] : d.env) r.details.push_back(Message::Literal(name + "=" + value));

  const auto world = Count(f.world_size), nnodes = Count(f.nnodes);
  const auto slurm_nodes =
      Count(Env(d, "SLURM_JOB_NUM_NODES") ? Env(d, "SLURM_JOB_NUM_NODES") : Env(d, "SLURM_NNODES"));
  const bool distributed =
      (world && *world > 1) || (nnodes && *nnodes > 1) || (slurm_nodes && *slurm_nodes > 1);
  const bool multi_node = (nnodes && *nnodes > 1) || (slurm_nodes && *slurm_nodes > 1);

  // Async error handling: the TORCH_NCCL_ name wins over the old NCCL_ one, as in torch.
  const char* handling_name = "TORCH_NCCL_ASYNC_ERROR_HANDLING";
  auto handling = Env(d, handling_name);
  if (!handling) {
    handling_name = "NCCL_ASYNC_ERROR_HANDLING";
    handling = Env(d, handling_name);
  }
  if (handling && Count(handling) == 0) {
    finding(V::kWarn, Msg("{}=0: a failed collective leaves the ranks waiting", handling_name),
            Msg("{}=0 turns off torch's NCCL error handling: when a peer dies or a collective "
                "times out the other ranks stay in the collective, holding their memory, "
                "instead of being torn down; unset it (torch's default is 3)",
                handling_name));
  }
  if (Count(Env(d, "TORCH_NCCL_ENABLE_MONITORING")) == 0) {
    finding(V::kWarn, Msg("TORCH_NCCL_ENABLE_MONITORING=0: a hung watchdog is never ended"),
            Msg("TORCH_NCCL_ENABLE_MONITORING=0 turns off the heartbeat monitor that ends a "
                "process whose NCCL watchdog itself hangs (a wedged driver); unset it"));
  }
  if (const auto beat = Count(Env(d, "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC")); beat && *beat > 480) {
    finding(V::kInfo, Msg("heartbeat timeout {} s", *beat),
            Msg("TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC={}: a hung rank is ended after {} s (torch's "
                "default is 480 s)",
                *beat, *beat));
  }

  // Which NCCL: a pip wheel shadows the system's.
  if (d.nccl_wheel && d.nccl_system && *d.nccl_wheel != *d.nccl_system) {
    finding(
        V::kWarn,
        Msg("torch loads the wheel's NCCL {}, not the system's {}", *d.nccl_wheel, *d.nccl_system),
        Msg("{} {} is in the Python environment, so a pip torch loads its NCCL, not {} "
            "({}); every node must load the same NCCL: install the matching wheel, or put "
            "the system library first with LD_PRELOAD",
            d.nccl_wheel_name, *d.nccl_wheel, d.nccl_system_path, *d.nccl_system));
  } else if (const auto nccl = EffectiveNccl(d)) {
    r.details.push_back(d.nccl_wheel ? Msg("NCCL {} from the {} wheel", *nccl, d.nccl_wheel_name)
                                     : Msg("NCCL {} from {}", *nccl, d.nccl_system_path));
  }

  // Ray's memory monitor on the unified pool.
  if (d.ray) {
    const auto refresh = Env(d, "RAY_memory_monitor_refresh_ms");
    if (f.platform.kind == PlatformKind::kGb10 && Count(refresh) != 0) {
      finding(V::kWarn, Msg("Ray {}'s memory monitor is on, on GB10's unified memory", *d.ray),
              Msg("Ray's memory monitor counts page cache and the GPU's allocations in the one "
                  "pool as pressure and kills workers that are not short of memory; set "
                  "RAY_memory_monitor_refresh_ms=0 on every node (headroom guard watches "
                  "MemAvailable instead)"));
    } else {
      r.details.push_back(Msg("Ray {} installed", *d.ray));
    }
  }

  // Slurm: does one task's failure end the others?
  if (!d.slurm.error.empty()) {
    finding(V::kSkip, Msg("slurm.conf could not be read"),
            Message::Literal(d.slurm.path + ": " + d.slurm.error));
  } else if (!d.slurm.path.empty() || Env(d, "SLURM_JOB_ID")) {
    const bool step_flag = Count(Env(d, "SLURM_KILL_BAD_EXIT")) == 1;
    const int conf = d.slurm.kill_on_bad_exit.value_or(0);
    if (!d.slurm.path.empty()) r.details.push_back(Msg("{}: KillOnBadExit={}", d.slurm.path, conf));
    if (conf != 1 && !step_flag && multi_node) {
      finding(V::kWarn, Msg("Slurm: one task's failure does not end the others"),
              Msg("KillOnBadExit is {} and SLURM_KILL_BAD_EXIT is not 1: when one node's task "
                  "ends (headroom guard ended it for memory) the other nodes' tasks wait in "
                  "NCCL; run the step with srun --kill-on-bad-exit=1, or set KillOnBadExit=1",
                  conf));
    }
  }

  if (worst != V::kInfo && worst != V::kPass) {
    r.verdict = worst;
    r.summary = std::move(worst_summary);
  } else if (distributed) {
    r.verdict = V::kPass;
    r.summary =
        Msg("distributed run: failures tear the ranks down (torch's NCCL error handling "
            "on)");
  } else {
    r.verdict = V::kInfo;
    r.summary = Msg("single node: no WORLD_SIZE, NNODES or Slurm nodes above 1");
  }
  return r;
}

}  // namespace headroom
