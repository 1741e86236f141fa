// Implementation notes: every field is read with its type checked, so a hostile or foreign
// JSON file is one error line, never an exception (nlohmann's non-throwing parse, then
// is_string / is_object before each get). A check groups the nodes by the field's value and
// lists each value with its hosts, so the odd node out is named.
#include "doctor/fleet.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <limits>

namespace headroom {
namespace {

using Json = nlohmann::json;
using V = CheckVerdict;

// `object[key]` into `out` when it is a string; absent or null leaves it unset.
std::optional<Error> Text(const Json& object, std::string_view prefix, const char* key,
                          std::optional<std::string>& out) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) return Error{Msg("{}{}: not a string", prefix, key)};
  out = it->get<std::string>();
  return std::nullopt;
}

// `object[key]` when it is an object (or absent / null: nullptr).
Result<const Json*> Object(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return static_cast<const Json*>(nullptr);
  if (!it->is_object()) return Error{Msg("{}: not an object", key)};
  return &*it;
}

// The nodes grouped by a field's value; hosts whose report lacks it in `unknown`.
struct Spread {
  std::map<std::string, std::vector<std::string>> by_value;
  std::vector<std::string> unknown;
};

template <typename Get>
Spread SpreadOf(const std::vector<NodeReport>& nodes, Get get) {
  Spread s;
  for (const auto& n : nodes) {
    if (const std::optional<std::string> v = get(n)) {
      s.by_value[*v].push_back(n.host);
    } else {
      s.unknown.push_back(n.host);
    }
  }
  return s;
}

std::string Hosts(const std::vector<std::string>& hosts) {
  return fmt::format("{}", fmt::join(hosts, ", "));
}

// "580.95.05 on spark-1, spark-2; 575.57.08 on spark-3".
std::string Values(const Spread& s) {
  std::vector<std::string> parts;
  for (const auto& [value, hosts] : s.by_value)
    parts.push_back(fmt::format("{} on {}", value, Hosts(hosts)));
  return fmt::format("{}", fmt::join(parts, "; "));
}

CheckResult Start(std::string id, Message title, const Spread& s) {
  CheckResult r;
  r.id = std::move(id);
  r.title = std::move(title);
  for (const auto& [value, hosts] : s.by_value)
    r.details.push_back(Message::Literal(fmt::format("{}: {}", value, Hosts(hosts))));
  if (!s.unknown.empty()) r.details.push_back(Msg("not in the report of {}", Hosts(s.unknown)));
  return r;
}

// The common verdict of a field: one value everywhere passes; a node without it skips; more
// than one value is `differ` (warn or fail).
CheckResult Same(std::string id, Message title, const Spread& s, V differ, Message why) {
  CheckResult r = Start(std::move(id), std::move(title), s);
  if (s.by_value.size() > 1) {
    r.verdict = differ;
    r.summary = Msg("differs across nodes: {}", Values(s));
    r.details.push_back(std::move(why));
  } else if (!s.unknown.empty()) {
    r.verdict = V::kSkip;
    r.summary = Msg("unknown on {}", Hosts(s.unknown));
  } else {
    r.verdict = V::kPass;
    r.summary = Msg("{} on every node", s.by_value.begin()->first);
  }
  return r;
}

std::optional<std::string> Major(const std::optional<std::string>& version) {
  if (!version) return std::nullopt;
  return version->substr(0, version->find('.'));
}

CheckResult NodesCheck(const std::vector<NodeReport>& nodes) {
  CheckResult r;
  r.id = "F5";
  r.title = Msg("nodes");
  std::vector<std::string> blocked, warned, unknown;
  for (const auto& n : nodes) {
    r.details.push_back(Message::Literal(
        fmt::format("{}: {}", n.host, n.verdict.empty() ? std::string("?") : n.verdict)));
    if (const auto g11 = n.checks.find("G11");
        g11 != n.checks.end() && g11->second != "pass" && !g11->second.starts_with("info"))
      r.details.push_back(Message::Literal(fmt::format("{}: G11 {}", n.host, g11->second)));
    if (n.verdict == "blocked") {
      blocked.push_back(n.host);
    } else if (n.verdict == "ready-with-warnings") {
      warned.push_back(n.host);
    } else if (n.verdict != "ready") {
      unknown.push_back(n.host);
    }
  }
  if (!blocked.empty()) {
    r.verdict = V::kFail;
    r.summary = Msg("blocked on {}", Hosts(blocked));
  } else if (!warned.empty()) {
    r.verdict = V::kWarn;
    r.summary = Msg("warnings on {}", Hosts(warned));
  } else if (!unknown.empty()) {
    r.verdict = V::kSkip;
    r.summary = Msg("no verdict in the report of {}", Hosts(unknown));
  } else {
    r.verdict = V::kPass;
    r.summary = Msg("ready on every node");
  }
  return r;
}

}  // namespace

Result<NodeReport> ParseEnvReport(std::string_view text, const std::string& source) {
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error{Msg("not JSON")};
  if (!j.is_object()) return Error{Msg("not a JSON object")};
  const auto version = j.find("schema_version");
  if (version == j.end() || !version->is_number_integer())
    return Error{Msg("no integer schema_version: not an env-report.json of headroom doctor")};
  const auto v = version->get<int64_t>();
  if (v < 1 || v > 1) return Error{Msg("schema_version {}: this headroom reads 1", v)};
  NodeReport n;
  n.source = source;
  std::optional<std::string> host, verdict;
  if (auto e = Text(j, "", "host", host)) return *e;
  if (auto e = Text(j, "", "verdict", verdict)) return *e;
  n.host = host && !host->empty() ? *host : std::filesystem::path(source).filename().string();
  n.verdict = verdict.value_or("");
  auto platform = Object(j, "platform");
  if (!platform) return platform.error();
  if (const Json* p = *platform) {
    if (auto e = Text(*p, "platform.", "driver_version", n.driver_version)) return *e;
    if (auto e = Text(*p, "platform.", "cuda_driver_version", n.cuda_driver_version)) return *e;
  }
  auto software = Object(j, "software");
  if (!software) return software.error();
  if (const Json* s = *software) {
    if (auto e = Text(*s, "software.", "torch", n.torch)) return *e;
    if (auto e = Text(*s, "software.", "torch_cuda", n.torch_cuda)) return *e;
    if (auto e = Text(*s, "software.", "nccl", n.nccl)) return *e;
    if (auto e = Text(*s, "software.", "nccl_wheel", n.nccl_wheel)) return *e;
  }
  auto checks = Object(j, "checks");
  if (!checks) return checks.error();
  if (const Json* c = *checks) {
    for (const auto& [id, value] : c->items()) {
      if (!value.is_string()) return Error{Msg("checks.{}: not a string", id)};
      n.checks.emplace(id, value.get<std::string>());
    }
  }
  return n;
}

std::vector<CheckResult> CompareNodes(const std::vector<NodeReport>& nodes) {
  std::vector<CheckResult> out;
  out.push_back(Same("F1", Msg("driver"),
                     SpreadOf(nodes, [](const NodeReport& n) { return n.driver_version; }),
                     V::kWarn,
                     Msg("different driver builds: NCCL usually works across them, but a fix "
                         "or a regression of one build is then on some nodes only")));

  const Spread cuda = SpreadOf(nodes, [](const NodeReport& n) { return n.cuda_driver_version; });
  const Spread majors =
      SpreadOf(nodes, [](const NodeReport& n) { return Major(n.cuda_driver_version); });
  out.push_back(Same("F2", Msg("CUDA"), cuda, majors.by_value.size() > 1 ? V::kFail : V::kWarn,
                     majors.by_value.size() > 1
                         ? Msg("another CUDA major version: the same torch build cannot run on "
                               "every node")
                         : Msg("another CUDA minor version: a torch built for the newer one "
                               "fails on the older driver")));

  out.push_back(Same("F3", Msg("torch"),
                     SpreadOf(nodes,
                              [](const NodeReport& n) {
                                if (!n.torch) return std::optional<std::string>();
                                return std::optional<std::string>(
                                    n.torch_cuda ? *n.torch + " (CUDA " + *n.torch_cuda + ")"
                                                 : *n.torch);
                              }),
                     V::kFail,
                     Msg("torch differs between ranks: install the same build on every node (the "
                         "distributed protocol and its NCCL bindings change between releases)")));

  CheckResult nccl =
      Same("F4", Msg("NCCL"), SpreadOf(nodes, [](const NodeReport& n) { return n.nccl; }), V::kFail,
           Msg("NCCL differs between ranks: collectives may hang or fail at the first all-reduce; "
               "load one NCCL everywhere"));
  std::vector<std::string> from_wheel, from_system;
  for (const auto& n : nodes) {
    if (!n.nccl) continue;
    (n.nccl_wheel ? from_wheel : from_system).push_back(n.host);
  }
  if (!from_wheel.empty() && !from_system.empty()) {
    nccl.details.push_back(Msg("a pip NCCL wheel on {}; the system's library on {}",
                               Hosts(from_wheel), Hosts(from_system)));
  }
  out.push_back(std::move(nccl));
  out.push_back(NodesCheck(nodes));
  return out;
}

nlohmann::ordered_json CompareJson(const std::vector<NodeReport>& nodes,
                                   const std::vector<CheckResult>& checks, DoctorVerdict verdict) {
  using OJson = nlohmann::ordered_json;
  OJson listed = OJson::array();
  for (const auto& n : nodes) listed.push_back({{"source", n.source}, {"host", n.host}});
  OJson short_checks, details;
  ChecksJson(checks, short_checks, details);
  return {{"schema_version", 1},
          {"nodes", listed},
          {"checks", short_checks},
          {"check_details", details},
          {"verdict", std::string(DoctorVerdictName(verdict))}};
}

}  // namespace headroom
