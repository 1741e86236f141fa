#include "plan/beside.h"

#include <cctype>
#include <cmath>

#include "base/bytes.h"
#include "base/text.h"

namespace headroom {
namespace {

constexpr std::string_view kServerEngines[] = {"vllm",      "sglang", "ollama",
                                               "llama.cpp", "tgi",    "tensorrt-llm"};

bool IsServerEngine(std::string_view name) {
  for (const auto e : kServerEngines) {
    if (e == name) return true;
  }
  return false;
}

bool IsBesideName(std::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  for (const char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') {
      return false;
    }
  }
  return true;
}

// "0.5", ".9", "1": only digits and one dot, which a fraction is and a size never is.
bool LooksLikeFraction(std::string_view text) {
  if (text.empty()) return false;
  int dots = 0;
  for (const char c : text) {
    if (c == '.') {
      ++dots;
    } else if (!std::isdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return dots <= 1 && text != ".";
}

std::vector<std::string> SplitColons(std::string_view text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t colon = text.find(':', start);
    parts.emplace_back(
        text.substr(start, colon == std::string_view::npos ? text.npos : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  return parts;
}

// "serve:MODEL:CONTEXT:CONCURRENCY[:ENGINE]" into `*cap`.
bool ParseServeSpec(std::string_view text, BesideCap* cap, Message* error) {
  const auto parts = SplitColons(text);
  if (parts.size() < 4 || parts.size() > 5 || parts[1].empty()) {
    *error = Msg("--beside '{}': a served plan is serve:MODEL:CONTEXT:CONCURRENCY[:ENGINE]",
                 std::string(text));
    return false;
  }
  ServeRequest r;
  r.model = parts[1];
  const auto context = ParsePositiveInt(parts[2]);
  const auto concurrency = ParsePositiveInt(parts[3]);
  if (!context || !concurrency) {
    *error =
        Msg("--beside '{}': CONTEXT and CONCURRENCY must be positive integers", std::string(text));
    return false;
  }
  r.context = *context;
  r.concurrency = *concurrency;
  if (parts.size() == 5) {
    const auto engine = ParseServeEngine(parts[4]);
    if (!engine) {
      *error = Msg("--beside '{}': ENGINE must be vllm, llama.cpp or ollama", std::string(text));
      return false;
    }
    r.engine = *engine;
  }
  cap->engine = std::string(Name(r.engine));
  cap->serve = r;
  return true;
}

// A fraction or a size into `*cap`.
bool ParsePlainCap(std::string_view value, std::string_view text, uint64_t mem_total_bytes,
                   BesideCap* cap, Message* error) {
  if (LooksLikeFraction(value)) {
    const double f = std::strtod(std::string(value).c_str(), nullptr);
    if (!(f > 0) || f > 1) {
      *error =
          Msg("--beside '{}': a fraction of the pool must be above 0 and at most 1 (as "
              "vLLM's --gpu-memory-utilization)",
              std::string(text));
      return false;
    }
    cap->fraction = f;
    if (cap->engine.empty()) cap->engine = "vllm";
    return true;
  }
  const auto bytes = ParseBytes(value);
  if (!bytes) {
    *error =
        Msg("--beside '{}': not a fraction (0.5), a size (40GiB) or "
            "serve:MODEL:CONTEXT:CONCURRENCY",
            std::string(text));
    return false;
  }
  if (mem_total_bytes > 0 && *bytes >= mem_total_bytes) {
    *error = Msg("--beside '{}': {} is not below the pool's MemTotal, {}", std::string(text),
                 GB(*bytes), GB(mem_total_bytes));
    return false;
  }
  cap->bytes = *bytes;
  return true;
}

}  // namespace

std::optional<BesideCap> ParseBesideCap(std::string_view text, uint64_t mem_total_bytes,
                                        Message* error) {
  BesideCap cap;
  cap.text = std::string(text);
  std::string_view value = text;
  const size_t colon = text.find(':');
  if (colon != std::string_view::npos && text.substr(0, colon) != "serve") {
    const auto name = text.substr(0, colon);
    if (!IsBesideName(name)) {
      *error = Msg("--beside '{}': NAME must be 1 to 32 letters, digits, '.', '_' or '-'",
                   std::string(text));
      return std::nullopt;
    }
    cap.name = std::string(name);
    if (IsServerEngine(AsciiLower(name))) cap.engine = AsciiLower(name);
    value = text.substr(colon + 1);
  }
  const bool ok = value.rfind("serve:", 0) == 0
                      ? ParseServeSpec(value, &cap, error)
                      : ParsePlainCap(value, text, mem_total_bytes, &cap, error);
  if (!ok) return std::nullopt;
  return cap;
}

std::vector<RunningServer> RunningServers(const std::vector<PoolHolder>& holders,
                                          const std::vector<HolderCap>& caps) {
  std::vector<RunningServer> out;
  for (size_t i = 0; i < holders.size() && i < caps.size(); ++i) {
    const auto& h = holders[i];
    const std::string engine(HolderKindName(h.kind));
    if (h.part_of || !IsServerEngine(engine)) continue;
    out.push_back({h.facts.pid, engine, caps[i].pool_fraction, caps[i].cap_bytes, caps[i].source});
  }
  return out;
}

std::vector<BesideEntry> ApplyBeside(const std::vector<BesideCap>& caps,
                                     const std::vector<std::optional<ServeNeed>>& needs,
                                     const std::vector<RunningServer>& running, uint64_t pool_bytes,
                                     Budget* budget) {
  std::vector<BesideEntry> entries;
  std::vector<bool> taken(running.size(), false);
  uint64_t subtracted = 0;
  for (size_t i = 0; i < caps.size(); ++i) {
    BesideEntry e;
    e.cap = caps[i];
    if (i < needs.size()) e.need = needs[i];
    if (e.need) {
      e.cap_bytes = e.need->held_bytes;
    } else if (e.cap.fraction) {
      e.cap_bytes = static_cast<uint64_t>(std::llround(*e.cap.fraction * 1e4)) * pool_bytes / 10000;
    } else {
      e.cap_bytes = e.cap.bytes.value_or(0);
    }
    for (size_t k = 0; k < running.size() && !e.cap.engine.empty(); ++k) {
      if (taken[k] || running[k].engine != e.cap.engine) continue;
      taken[k] = true;
      e.running = running[k];
      break;
    }
    if (!e.running) {
      e.subtracted_bytes = e.cap_bytes;
      subtracted += e.cap_bytes;
    }
    entries.push_back(std::move(e));
  }
  if (subtracted > 0) {
    budget->budget_bytes =
        budget->budget_bytes > subtracted ? budget->budget_bytes - subtracted : 0;
    // The judge weighs the peak against what is available: the servers take it first.
    budget->judged_available_bytes = budget->judged_available_bytes > subtracted
                                         ? budget->judged_available_bytes - subtracted
                                         : 0;
    budget->source += " minus the servers beside it (--beside)";
  }
  return entries;
}

Message BesideLine(const BesideEntry& e) {
  const std::string label = e.cap.name.empty() ? e.cap.text : e.cap.name;
  Message held;
  if (e.need) {
    held = Msg("{} served by {} ({} tokens of KV cache), holding {}", e.need->request.model,
               std::string(Name(e.need->request.engine)), e.need->kv_tokens, GB(e.cap_bytes));
  } else if (e.cap.fraction) {
    held = Msg("{} of the pool, {}", fmt::format("{:.2f}", *e.cap.fraction), GB(e.cap_bytes));
  } else {
    held = Msg("a cap of {}", GB(e.cap_bytes));
  }
  if (e.running) {
    const std::string cap_text =
        e.running->fraction ? fmt::format("{} {:.2f}", e.running->cap_source, *e.running->fraction)
                            : std::string("no cap read");
    return Msg(
        "beside {}: {}; already running (pid {}, {}, {}): its memory is already out of "
        "MemAvailable, not counted twice",
        label, held, static_cast<int64_t>(e.running->pid), e.running->engine, cap_text);
  }
  return Msg("beside {}: {}; not running yet: taken from the budget", label, held);
}

nlohmann::json ServeNeedToJson(const ServeNeed& n) {
  nlohmann::json j = {
      {"model", n.request.model},
      {"engine", std::string(Name(n.request.engine))},
      {"context", n.request.context},
      {"concurrency", n.request.concurrency},
      {"dtype", n.dtype},
      {"params", n.params},
      {"weight_bytes", n.weight_bytes},
      {"kv_element_bytes", n.kv_element_bytes},
      {"kv_bytes_per_token", n.kv_bytes_per_token},
      {"kv_tokens", n.kv_tokens},
      {"kv_bytes", n.kv_bytes},
      {"overhead_bytes", n.overhead.bytes},
      {"overhead_source", EnglishText(n.overhead.source)},
      {"overhead_is_guess", n.overhead.guess},
      {"total_bytes", n.total_bytes},
      {"held_bytes", n.held_bytes},
  };
  j["vllm_cap"] = n.vllm_cap ? nlohmann::json(*n.vllm_cap) : nlohmann::json(nullptr);
  return j;
}

nlohmann::json BesideToJson(const std::vector<BesideEntry>& entries) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : entries) {
    nlohmann::json j = {{"text", e.cap.text},
                        {"name", e.cap.name},
                        {"engine", e.cap.engine},
                        {"cap_bytes", e.cap_bytes},
                        {"subtracted_bytes", e.subtracted_bytes},
                        {"running", e.running.has_value()}};
    j["fraction"] = e.cap.fraction ? nlohmann::json(*e.cap.fraction) : nlohmann::json(nullptr);
    if (e.running) {
      j["running_pid"] = e.running->pid;
      j["running_fraction"] =
          e.running->fraction ? nlohmann::json(*e.running->fraction) : nlohmann::json(nullptr);
      j["running_cap_source"] = e.running->cap_source;
    }
    if (e.need) j["serve"] = ServeNeedToJson(*e.need);
    j["text_en"] = EnglishText(BesideLine(e));
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace headroom
