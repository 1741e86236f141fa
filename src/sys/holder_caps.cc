// Implementation notes: flags are matched on CommandWords, so `--flag value`, `--flag=value`
// and a setproctitle'd single-argument command line all parse. vLLM's and SGLang's parsers
// accept underscores for dashes (vLLM's FlexibleArgumentParser rewrites them), so both
// spellings are listed. Defaults come from each project's argument definitions:
// vLLM EngineArgs.gpu_memory_utilization = 0.9; TGI launcher cuda_memory_fraction = 1.0
// (clap, env CUDA_MEMORY_FRACTION); Ollama OLLAMA_MAX_LOADED_MODELS 3 per GPU,
// OLLAMA_KEEP_ALIVE 5m (envconfig). SGLang picks its fraction from the GPU's memory size
// when not given, so no default is assumed for it.
#include "sys/holder_caps.h"

#include <fmt/format.h>

#include <cstdlib>

#include "base/message.h"

namespace headroom {
namespace {

constexpr double kVllmDefaultFraction = 0.9;
constexpr double kTgiDefaultFraction = 1.0;

void AddFlagSetting(HolderCap& cap, const std::vector<std::string>& words,
                    const std::vector<std::string>& names) {
  if (auto v = FlagValue(words, names)) cap.settings.push_back({names.front(), *v, "argv"});
}

void AddEnvSetting(HolderCap& cap, const std::optional<std::map<std::string, std::string>>& env,
                   const std::string& name) {
  if (!env) return;
  if (auto it = env->find(name); it != env->end())
    cap.settings.push_back({name, it->second, "environ"});
}

std::optional<std::string> EnvValue(const std::optional<std::map<std::string, std::string>>& env,
                                    const std::string& name) {
  if (!env) return std::nullopt;
  auto it = env->find(name);
  if (it == env->end()) return std::nullopt;
  return it->second;
}

// Where a server's pool fraction is set: its flag's spellings, the environment variable that
// may set it instead ("" for none), and the server's own default ("" and nullopt for none).
struct FractionSetting {
  std::vector<std::string> flags;
  std::string env_name;
  std::optional<double> default_fraction;
  std::string default_name;
};

// A fraction flag, its environment variable, then its default.
void ReadFraction(HolderCap& cap, const std::vector<std::string>& words,
                  const std::optional<std::map<std::string, std::string>>& env,
                  const FractionSetting& setting) {
  const std::vector<std::string>& flags = setting.flags;
  const std::string& env_name = setting.env_name;
  const std::optional<double>& default_fraction = setting.default_fraction;
  const std::string& default_name = setting.default_name;
  std::optional<std::string> text = FlagValue(words, flags);
  std::string source = flags.front();
  if (!text && !env_name.empty()) {
    text = EnvValue(env, env_name);
    source = env_name;
  }
  if (text) {
    if (auto f = ParseFraction(*text)) {
      cap.pool_fraction = f;
      cap.source = source;
      cap.settings.push_back({source, *text, source == env_name ? "environ" : "argv"});
    } else {
      cap.notes.push_back(
          Msg("{} '{}' is not a fraction in (0, 1]; taken as no cap", source, *text));
    }
    return;
  }
  if (default_fraction) {
    cap.pool_fraction = default_fraction;
    cap.source = default_name;
    cap.settings.push_back({flags.front(), fmt::format("{:.2f}", *default_fraction), "default"});
  }
}

}  // namespace

std::optional<std::string> FlagValue(const std::vector<std::string>& words,
                                     const std::vector<std::string>& names) {
  std::optional<std::string> found;
  for (size_t i = 0; i < words.size(); ++i) {
    for (const auto& name : names) {
      if (words[i] == name && i + 1 < words.size()) {
        found = words[i + 1];
      } else if (words[i].size() > name.size() && words[i].compare(0, name.size(), name) == 0 &&
                 words[i][name.size()] == '=') {
        found = words[i].substr(name.size() + 1);
      }
    }
  }
  return found;
}

bool HasFlag(const std::vector<std::string>& words, const std::vector<std::string>& names) {
  for (const auto& w : words) {
    for (const auto& name : names) {
      if (w == name) return true;
    }
  }
  return false;
}

std::optional<double> ParseFraction(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double f = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !(f > 0) || f > 1) return std::nullopt;
  return f;
}

HolderCap ParseHolderCap(HolderKind kind, const std::vector<std::string>& words,
                         const std::optional<std::map<std::string, std::string>>& environ) {
  HolderCap cap;
  switch (kind) {
    case HolderKind::kVllm:
      ReadFraction(cap, words, environ,
                   {{"--gpu-memory-utilization", "--gpu_memory_utilization"},
                    "",
                    kVllmDefaultFraction,
                    "vLLM default"});
      AddFlagSetting(cap, words, {"--kv-cache-memory", "--kv_cache_memory"});
      AddFlagSetting(cap, words, {"--max-model-len", "--max_model_len"});
      if (cap.source == "vLLM default" && HasFlag(words, {"--config"})) {
        cap.notes.push_back(
            Msg("--config FILE may set another --gpu-memory-utilization; not read"));
      }
      if (cap.pool_fraction) {
        cap.notes.push_back(
            Msg("--gpu-memory-utilization is not a hard cap on unified memory: startup profiling "
                "and CUDA-graph capture can go past it (vllm#46307)"));
      }
      break;
    case HolderKind::kSglang:
      ReadFraction(cap, words, environ,
                   {{"--mem-fraction-static", "--mem_fraction_static"}, "", std::nullopt, ""});
      if (cap.pool_fraction) {
        cap.notes.push_back(
            Msg("--mem-fraction-static is not a hard cap: CUDA-graph capture and autotune allocate "
                "outside it (sglang#35860)"));
      } else {
        cap.notes.push_back(Msg("no --mem-fraction-static: SGLang picks one from the GPU's size"));
      }
      break;
    case HolderKind::kTgi:
      ReadFraction(
          cap, words, environ,
          {{"--cuda-memory-fraction"}, "CUDA_MEMORY_FRACTION", kTgiDefaultFraction, "TGI default"});
      break;
    case HolderKind::kOllama:
      for (const char* name : {"OLLAMA_MAX_LOADED_MODELS", "OLLAMA_NUM_PARALLEL",
                               "OLLAMA_GPU_OVERHEAD", "OLLAMA_KEEP_ALIVE"}) {
        AddEnvSetting(cap, environ, name);
      }
      cap.notes.push_back(
          Msg("ollama has no pool cap: it loads models on request (up to OLLAMA_MAX_LOADED_MODELS, "
              "default 3 per GPU) and keeps them OLLAMA_KEEP_ALIVE (default 5m)"));
      break;
    case HolderKind::kLlamaCpp: {
      AddFlagSetting(cap, words, {"--ctx-size", "-c"});
      AddFlagSetting(cap, words, {"--n-gpu-layers", "-ngl", "--gpu-layers"});
      if (HasFlag(words, {"--no-mmap"})) cap.settings.push_back({"--no-mmap", "", "argv"});
      if (HasFlag(words, {"--mlock"})) cap.settings.push_back({"--mlock", "", "argv"});
      // llama-server also reads its flags from LLAMA_ARG_* variables.
      for (const char* name :
           {"LLAMA_ARG_CTX_SIZE", "LLAMA_ARG_N_GPU_LAYERS", "LLAMA_ARG_NO_MMAP"}) {
        AddEnvSetting(cap, environ, name);
      }
      cap.fixed_after_load = true;
      auto ngl = FlagValue(words, {"--n-gpu-layers", "-ngl", "--gpu-layers"});
      if (!ngl) ngl = EnvValue(environ, "LLAMA_ARG_N_GPU_LAYERS");
      cap.cpu_only = ngl && *ngl == "0";
      break;
    }
    case HolderKind::kTensorRtLlm:
      AddFlagSetting(cap, words, {"--kv_cache_free_gpu_memory_fraction"});
      break;
    default:
      break;
  }
  // A job started by `headroom guard --torch-cap` carries its cap in the environment, and
  // torch raises a catchable OOM at it (guard/torch_cap.h).
  if (!cap.pool_fraction) {
    if (auto text = EnvValue(environ, "HEADROOM_TORCH_CAP_BYTES")) {
      char* end = nullptr;
      const unsigned long long bytes = std::strtoull(text->c_str(), &end, 10);
      if (!text->empty() && end == text->c_str() + text->size() && bytes > 0) {
        cap.cap_bytes = bytes;
        cap.source = "HEADROOM_TORCH_CAP_BYTES";
        cap.settings.push_back({"HEADROOM_TORCH_CAP_BYTES", *text, "environ"});
      }
    }
  }
  if (!environ && kind != HolderKind::kGpuProcess) {
    cap.notes.push_back(Msg(
        "environment not readable (another user's process); settings made there are not shown"));
  }
  return cap;
}

std::vector<HolderCap> HolderCaps(const std::vector<PoolHolder>& holders) {
  std::vector<HolderCap> caps;
  caps.reserve(holders.size());
  for (const auto& h : holders) {
    caps.push_back(h.part_of ? HolderCap{}
                             : ParseHolderCap(h.kind, CommandWords(h.facts.argv), h.facts.environ));
  }
  return caps;
}

}  // namespace headroom
