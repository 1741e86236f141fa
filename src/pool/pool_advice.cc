// Implementation notes: holders are first grouped by part_of (a server and its workers are
// one holder for the advice: the cap is on the server's command line, the memory in its
// workers). Each group gets a size or a reason to stop; the capped ones are then kept
// smallest first, so that as many as possible stay. Sizes are bytes throughout; the text
// shows GiB with two decimals (base/bytes.h).
#include "pool/pool_advice.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/bytes.h"
#include "base/message.h"
#include "sys/pool_levels.h"  // DefaultKillLevelBytes: the reserve is the guard's kill level

namespace headroom {
namespace {

struct Candidate {
  size_t index;
  uint64_t size_bytes;
  Message what;  // "vllm cap 0.50 x 121.69 GiB = 60.85 GiB"
};

// `a` then `b`, as one message.
Message Then(const Message& a, Message b) { return JoinMessages({a, std::move(b)}, ""); }

}  // namespace

std::string_view HolderActionName(HolderAction action) {
  switch (action) {
    case HolderAction::kKeep:
      return "keep";
    case HolderAction::kStop:
      return "stop";
    case HolderAction::kPartOf:
      return "part-of";
  }
  return "?";
}

uint64_t HeldBytes(const PoolHolder& holder) {
  const auto& f = holder.facts;
  // PSS splits shared pages (a model file mapped by several workers) between them, so a
  // group's sum does not count them twice; RSS where smaps_rollup is not readable.
  const uint64_t host = f.pss_bytes ? *f.pss_bytes : f.rss_bytes.value_or(0);
  return host + holder.gpu_bytes.value_or(0);
}

namespace {

// Holders grouped by part_of: each group's root, its bytes (the root's own plus those of
// the holders that are part of it), and whether any member has a GPU figure (llama.cpp's
// size is only known with one).
struct Groups {
  std::vector<size_t> root;
  std::vector<uint64_t> held;
  std::vector<bool> gpu_known;
};

Groups GroupHolders(const std::vector<PoolHolder>& holders) {
  std::map<pid_t, size_t> index;
  for (size_t i = 0; i < holders.size(); ++i) index[holders[i].facts.pid] = i;
  Groups g{std::vector<size_t>(holders.size()), std::vector<uint64_t>(holders.size(), 0),
           std::vector<bool>(holders.size(), false)};
  for (size_t i = 0; i < holders.size(); ++i) {
    g.root[i] = i;
    if (const auto& p = holders[i].part_of) {
      if (auto it = index.find(*p); it != index.end()) g.root[i] = it->second;
    }
  }
  for (size_t i = 0; i < holders.size(); ++i) {
    g.held[g.root[i]] += HeldBytes(holders[i]);
    if (holders[i].gpu_bytes) g.gpu_known[g.root[i]] = true;
  }
  return g;
}

// The size a group's root will keep at most, as a candidate to keep; or none, and why in
// adv.arithmetic (not in this namespace, fixed size unknown, no cap).
std::optional<Candidate> Size(size_t i, const PoolHolder& h, const HolderCap& cap, const Groups& g,
                              uint64_t mem_total_bytes, HolderAdvice& adv) {
  const std::string name(HolderKindName(h.kind));
  const ByteCount held = GiB(g.held[i]);
  if (!h.in_proc) {
    adv.arithmetic =
        Msg("{} listed by NVML, not in this pid namespace (a container?): no cap known; stop it "
            "where it runs before this run",
            name);
    return std::nullopt;
  }
  if (cap.pool_fraction) {
    const auto cap_size =
        static_cast<uint64_t>(*cap.pool_fraction * static_cast<double>(mem_total_bytes));
    Message what = Msg("{} cap {:.2f} x {} = {}", name, *cap.pool_fraction, GiB(mem_total_bytes),
                       GiB(cap_size));
    if (g.held[i] > cap_size) what = Then(what, Msg(", but it holds {} now", held));
    return Candidate{i, std::max(cap_size, g.held[i]), what};
  }
  if (cap.cap_bytes) {
    Message what = Msg("{} torch cap {}", name, GiB(*cap.cap_bytes));
    if (g.held[i] > *cap.cap_bytes) what = Then(what, Msg(", but it holds {} now", held));
    return Candidate{i, std::max(*cap.cap_bytes, g.held[i]), what};
  }
  if (cap.fixed_after_load && (g.gpu_known[i] || cap.cpu_only))
    return Candidate{i, g.held[i], Msg("{} holds {} (fixed after load)", name, held)};
  if (cap.fixed_after_load) {
    adv.arithmetic =
        Msg("{} holds {} in host memory, and its GPU memory is not known (no NVML figure for "
            "it; CUDA pages appear in no RSS): size unknown: stop before this run",
            name, held);
  } else {
    adv.arithmetic =
        Msg("{} holds {} and has no cap: it grows to what it can get, one heavy job at a time: "
            "stop before this run",
            name, held);
  }
  return std::nullopt;
}

// Keeps candidates smallest first while the kept ones and the job fit in the budget.
void KeepSmallestFirst(std::vector<Candidate> candidates, const Message& budget, PoolAdvice& a) {
  std::stable_sort(
      candidates.begin(), candidates.end(),
      [](const Candidate& x, const Candidate& y) { return x.size_bytes < y.size_bytes; });
  for (const auto& c : candidates) {
    HolderAdvice& adv = a.holders[c.index];
    adv.size_bytes = c.size_bytes;
    const uint64_t sum = a.kept_bytes + c.size_bytes + a.need_bytes;
    const Message kept =
        a.kept_bytes > 0 ? Msg(" + {} kept", GiB(a.kept_bytes)) : Message::Literal("");
    const bool keep = sum <= a.budget_bytes;
    // TRANSLATORS: {0} the holder and its size, {1} empty or " + 20.00 GiB kept", {2} the
    // job's need, {3} the sum, {4} the budget with its arithmetic.
    adv.arithmetic = keep ? Msg("{0}{1} + need {2} = {3} of {4}: keep", c.what, kept,
                                GiB(a.need_bytes), GiB(sum), budget)
                          : Msg("{0}{1} + need {2} = {3} > {4}: stop before this run", c.what, kept,
                                GiB(a.need_bytes), GiB(sum), budget);
    if (keep) {
      adv.action = HolderAction::kKeep;
      adv.stop_command.clear();
      a.kept_bytes += c.size_bytes;
    }
  }
}

// The verdict and its one-line summary.
void Summarize(const Message& budget, PoolAdvice& a) {
  size_t stops = 0;
  for (const auto& adv : a.holders) stops += adv.action == HolderAction::kStop;
  const uint64_t need = a.need_bytes;
  const bool room = a.kept_bytes + need <= a.budget_bytes;
  a.fits = stops == 0 && room;
  if (!room) {
    a.summary = Msg("the job's need {} alone is more than the budget {}: it does not fit",
                    GiB(need), budget);
  } else if (stops > 0) {
    a.summary = Msg("{} holder(s) to stop before this run; then need {} + kept {} = {} of {}",
                    stops, GiB(need), GiB(a.kept_bytes), GiB(need + a.kept_bytes), budget);
  } else {
    a.summary = Msg("fits beside everything kept: need {} + kept {} = {} of {}", GiB(need),
                    GiB(a.kept_bytes), GiB(need + a.kept_bytes), budget);
  }
}

}  // namespace

PoolAdvice AdviseBesideJob(const std::vector<PoolHolder>& holders,
                           const std::vector<HolderCap>& caps, uint64_t need_bytes,
                           uint64_t mem_total_bytes, std::optional<uint64_t> reserve_bytes) {
  PoolAdvice a;
  a.mem_total_bytes = mem_total_bytes;
  a.need_bytes = need_bytes;
  a.reserve_bytes = reserve_bytes ? *reserve_bytes : DefaultKillLevelBytes(mem_total_bytes);
  a.budget_bytes = mem_total_bytes > a.reserve_bytes ? mem_total_bytes - a.reserve_bytes : 0;
  a.holders.resize(holders.size());
  const Groups g = GroupHolders(holders);
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < holders.size(); ++i) {
    const PoolHolder& h = holders[i];
    HolderAdvice& adv = a.holders[i];
    adv.pid = h.facts.pid;
    const size_t r = g.root[i];
    if (r != i) {
      adv.action = HolderAction::kPartOf;
      adv.part_of = holders[r].facts.pid;
      adv.held_bytes = HeldBytes(h);
      adv.arithmetic = Msg("part of pid {}: counted there", holders[r].facts.pid);
      continue;
    }
    adv.held_bytes = g.held[i];
    adv.stop_command = StopCommand(h);
    if (auto c = Size(i, h, caps[i], g, mem_total_bytes, adv)) candidates.push_back(std::move(*c));
  }
  const Message budget = Msg("{} (MemTotal {} - reserve {})", GiB(a.budget_bytes),
                             GiB(mem_total_bytes), GiB(a.reserve_bytes));
  KeepSmallestFirst(std::move(candidates), budget, a);
  Summarize(budget, a);
  return a;
}

}  // namespace headroom
