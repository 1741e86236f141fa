#include "doctor/link.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace headroom {
namespace {

using LinkJsonValue = nlohmann::json;

Result<std::string> StringMember(const LinkJsonValue& o, const char* key) {
  if (!o.contains(key) || o[key].is_null()) return std::string();
  if (!o[key].is_string()) return Error{Msg("{}: not a string", key)};
  return o[key].get<std::string>();
}

Result<RankFacts> ParseRankFacts(const LinkJsonValue& o) {
  if (!o.is_object()) return Error{Msg("facts: not an object")};
  RankFacts f;
  if (o.contains("rank") && !o["rank"].is_number_integer())
    return Error{Msg("rank: not an integer")};
  f.rank = o.value("rank", 0);
  for (auto [key, field] : {std::pair{"host", &f.host},
                            {"torch", &f.torch},
                            {"torch_cuda", &f.torch_cuda},
                            {"nccl", &f.nccl},
                            {"nvcc", &f.nvcc}}) {
    auto v = StringMember(o, key);
    if (!v) return v.error();
    *field = std::move(*v);
  }
  if (o.contains("env")) {
    if (!o["env"].is_object()) return Error{Msg("env: not an object")};
    for (const auto& [name, value] : o["env"].items()) {
      if (!value.is_string()) return Error{Msg("env.{}: not a string", name)};
      f.env[name] = value.get<std::string>();
    }
  }
  return f;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string NodeName(const RankFacts& f) { return fmt::format("{} (rank {})", f.host, f.rank); }

}  // namespace

Result<LinkProbeResult> ParseLinkProbe(std::string_view text) {
  const auto o = LinkJsonValue::parse(text, nullptr, false);
  if (o.is_discarded() || !o.is_object()) return Error{Msg("the link probe's answer is not JSON")};
  LinkProbeResult r;
  if (!o.contains("ok") || !o["ok"].is_boolean()) return Error{Msg("ok: not a boolean")};
  r.ok = o["ok"].get<bool>();
  for (auto [key, field] :
       {std::pair{"stage", &r.stage}, {"error", &r.error}, {"backend", &r.backend}}) {
    auto v = StringMember(o, key);
    if (!v) return v.error();
    *field = std::move(*v);
  }
  for (auto [key, field] : {std::pair{"rank", &r.rank}, {"world", &r.world}}) {
    if (!o.contains(key)) continue;
    if (!o[key].is_number_integer()) return Error{Msg("{}: not an integer", key)};
    *field = o[key].get<int>();
  }
  if (o.contains("size_bytes")) {
    if (!o["size_bytes"].is_number_unsigned()) return Error{Msg("size_bytes: not a count")};
    r.size_bytes = o["size_bytes"].get<uint64_t>();
  }
  if (o.contains("seconds")) {
    if (!o["seconds"].is_array()) return Error{Msg("seconds: not an array")};
    for (const auto& s : o["seconds"]) {
      if (!s.is_number() || s.get<double>() <= 0)
        return Error{Msg("seconds: not a positive number")};
      r.seconds.push_back(s.get<double>());
    }
  }
  if (o.contains("facts")) {
    if (!o["facts"].is_array()) return Error{Msg("facts: not an array")};
    for (const auto& f : o["facts"]) {
      auto facts = ParseRankFacts(f);
      if (!facts) return facts.error();
      r.ranks.push_back(std::move(*facts));
    }
  }
  if (r.ok && (r.seconds.empty() || r.size_bytes == 0 || r.world < 2))
    return Error{Msg("the link probe answered ok without a measurement")};
  return r;
}

double AllReduceBusGBps(uint64_t bytes, double seconds, int ranks) {
  if (seconds <= 0 || ranks < 1) return 0;
  const double algbw = static_cast<double>(bytes) / seconds / 1e9;
  return algbw * 2.0 * (ranks - 1) / ranks;
}

LinkFigures FiguresOf(const LinkProbeResult& r) {
  LinkFigures f;
  if (r.seconds.empty()) return f;
  const auto [fast, slow] = std::minmax_element(r.seconds.begin(), r.seconds.end());
  const double median = Median(r.seconds);
  f.busbw_median = AllReduceBusGBps(r.size_bytes, median, r.world);
  f.busbw_fastest = AllReduceBusGBps(r.size_bytes, *fast, r.world);
  f.busbw_slowest = AllReduceBusGBps(r.size_bytes, *slow, r.world);
  f.algbw_median = static_cast<double>(r.size_bytes) / median / 1e9;
  return f;
}

std::vector<RankDifference> RankDifferences(const std::vector<RankFacts>& ranks) {
  std::vector<RankDifference> out;
  if (ranks.empty()) return out;
  const RankFacts& first = ranks.front();
  for (size_t i = 1; i < ranks.size(); ++i) {
    const RankFacts& other = ranks[i];
    auto differ = [&](std::string what, bool blocking, const std::string& mine,
                      const std::string& theirs) {
      if (mine == theirs) return;
      out.push_back({std::move(what), blocking, other.rank, other.host, theirs, first.host, mine});
    };
    differ("torch", true, first.torch, other.torch);
    differ("torch CUDA", true, first.torch_cuda, other.torch_cuda);
    differ("NCCL", true, first.nccl, other.nccl);
    differ("nvcc on PATH", true, first.nvcc, other.nvcc);
    std::set<std::string, std::less<>> names;
    for (const auto& [name, value] : first.env) names.insert(name);
    for (const auto& [name, value] : other.env) names.insert(name);
    for (const auto& name : names) {
      const auto a = first.env.find(name), b = other.env.find(name);
      differ(name, false, a == first.env.end() ? "unset" : a->second,
             b == other.env.end() ? "unset" : b->second);
    }
  }
  return out;
}

CheckResult CheckLink(const LinkProbeResult& r, std::optional<double> expected_gbps) {
  CheckResult c;
  c.id = "L1";
  c.title = Msg("link");
  if (!r.ok) {
    c.verdict = CheckVerdict::kFail;
    c.summary = Msg("no measurement: {}", r.error);
    return c;
  }
  const LinkFigures f = FiguresOf(r);
  c.details.push_back(
      Msg("all-reduce of {} bytes over {} between {} nodes, {} repeats: bus bandwidth median "
          "{:.3f} GB/s, fastest {:.3f}, slowest {:.3f}; algorithm bandwidth {:.3f} GB/s (GB = "
          "1e9 bytes; bus = algorithm x 2(n-1)/n, as nccl-tests counts an all-reduce)",
          r.size_bytes, r.backend, r.world, r.seconds.size(), f.busbw_median, f.busbw_fastest,
          f.busbw_slowest, f.algbw_median));
  const bool spark = !expected_gbps;
  if (spark && r.backend != "nccl") {
    c.verdict = CheckVerdict::kInfo;
    c.summary =
        Msg("{:.3f} GB/s bus bandwidth over gloo (GB = 1e9 bytes): no reference "
            "figure for gloo; two Sparks reach about {} GB/s over NCCL",
            f.busbw_median, kSparkLinkNcclGBps);
    c.details.push_back(
        Msg("gloo ran because not every node has CUDA and NCCL in torch; "
            "--peer-expect GBPS judges the figure against your own"));
    return c;
  }
  const double expected = expected_gbps.value_or(kSparkLinkNcclGBps);
  const double share = f.busbw_median / expected;
  if (share >= kLinkPassShare) {
    c.verdict = CheckVerdict::kPass;
    c.summary = Msg("{:.2f} GB/s bus bandwidth (GB = 1e9 bytes), expected about {} GB/s",
                    f.busbw_median, expected);
  } else if (share >= kLinkFailShare) {
    c.verdict = CheckVerdict::kWarn;
    c.summary = Msg("{:.2f} GB/s bus bandwidth (GB = 1e9 bytes), {:.0f} % of the expected {} GB/s",
                    f.busbw_median, share * 100, expected);
  } else {
    c.verdict = CheckVerdict::kFail;
    c.summary =
        Msg("{:.3f} GB/s bus bandwidth (GB = 1e9 bytes), under a quarter of the "
            "expected {} GB/s",
            f.busbw_median, expected);
  }
  if (spark) {
    c.details.push_back(
        Msg("expected: about {} GB/s NCCL all-reduce on a healthy ConnectX-7 "
            "link between two Sparks (RDMA reads {} GB/s on it)",
            kSparkLinkNcclGBps, kSparkLinkRdmaGBps));
  }
  if (spark && c.verdict == CheckVerdict::kFail) {
    c.details.push_back(
        Msg("a figure near {} GB/s is the link's known faulty state: NCCL falls to about {} "
            "GB/s while RDMA (ib_write_bw) still reads a healthy {} GB/s; only a full power "
            "cycle of the Sparks clears it, a reboot does not",
            kSparkLinkFaultGBps, kSparkLinkFaultGBps, kSparkLinkRdmaGBps));
  }
  return c;
}

CheckResult CheckRanks(const std::vector<RankFacts>& ranks) {
  CheckResult c;
  c.id = "L2";
  c.title = Msg("ranks agree");
  if (ranks.size() < 2) {
    c.verdict = CheckVerdict::kSkip;
    c.summary = Msg("the other nodes' facts never arrived");
    return c;
  }
  const auto diffs = RankDifferences(ranks);
  for (const auto& rf : ranks) {
    c.details.push_back(Msg("{}: torch {}, CUDA {}, NCCL {}, nvcc on PATH: {}", NodeName(rf),
                            rf.torch, rf.torch_cuda.empty() ? "none" : rf.torch_cuda,
                            rf.nccl.empty() ? "none" : rf.nccl, rf.nvcc));
  }
  if (diffs.empty()) {
    c.verdict = CheckVerdict::kPass;
    c.summary = Msg("{} nodes: the same torch, CUDA, NCCL, nvcc and variables", ranks.size());
    return c;
  }
  const bool blocking =
      std::any_of(diffs.begin(), diffs.end(), [](const RankDifference& d) { return d.blocking; });
  c.verdict = blocking ? CheckVerdict::kFail : CheckVerdict::kWarn;
  std::string names;
  for (const auto& d : diffs) {
    if (!names.empty()) names += ", ";
    names += fmt::format("{} on {} (rank {})", d.what, d.host, d.rank);
    c.details.push_back(Msg("{} differs: {} on {} (rank {}), {} on {} (rank 0)", d.what, d.value,
                            d.host, d.rank, d.rank0_value, d.rank0_host));
  }
  c.summary = blocking ? Msg("the nodes differ: {} (a collective that only some ranks enter waits "
                             "for its timeout)",
                             names)
                       : Msg("the nodes differ: {}", names);
  return c;
}

nlohmann::ordered_json LinkJson(const LinkProbeResult& r, std::optional<double> expected_gbps,
                                const std::vector<CheckResult>& checks, DoctorVerdict verdict) {
  using OJson = nlohmann::ordered_json;
  const LinkFigures f = FiguresOf(r);
  OJson ranks = OJson::array(), diffs = OJson::array();
  for (const auto& rf : r.ranks) {
    ranks.push_back({{"rank", rf.rank},
                     {"host", rf.host},
                     {"torch", rf.torch},
                     {"torch_cuda", rf.torch_cuda},
                     {"nccl", rf.nccl},
                     {"nvcc", rf.nvcc},
                     {"env", rf.env}});
  }
  for (const auto& d : RankDifferences(r.ranks)) {
    diffs.push_back({{"what", d.what},
                     {"blocking", d.blocking},
                     {"rank", d.rank},
                     {"host", d.host},
                     {"value", d.value},
                     {"rank0_value", d.rank0_value}});
  }
  OJson short_checks, details;
  ChecksJson(checks, short_checks, details);
  const bool measured = r.ok;
  return {{"schema_version", 1},
          {"ok", r.ok},
          {"error", r.ok ? OJson(nullptr) : OJson{{"stage", r.stage}, {"message", r.error}}},
          {"backend", r.backend.empty() ? OJson(nullptr) : OJson(r.backend)},
          {"world", r.world},
          {"size_bytes", r.size_bytes},
          {"seconds", r.seconds},
          {"gb", "1e9 bytes"},
          {"busbw_gbps", measured ? OJson(f.busbw_median) : OJson(nullptr)},
          {"busbw_fastest_gbps", measured ? OJson(f.busbw_fastest) : OJson(nullptr)},
          {"busbw_slowest_gbps", measured ? OJson(f.busbw_slowest) : OJson(nullptr)},
          {"algbw_gbps", measured ? OJson(f.algbw_median) : OJson(nullptr)},
          {"expected_gbps", expected_gbps.value_or(kSparkLinkNcclGBps)},
          {"ranks", ranks},
          {"differences", diffs},
          {"checks", short_checks},
          {"check_details", details},
          {"verdict", std::string(DoctorVerdictName(verdict))}};
}

}  // namespace headroom
