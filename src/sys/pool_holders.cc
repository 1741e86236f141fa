// Implementation notes. Classification walks the first few words of the command line:
// argv[0]'s basename is matched against a table of programs; a launcher (env, nohup, uv run,
// conda run, numactl, ...) passes the walk on to the words after it; a Python interpreter
// passes it to `-m MODULE` or to the script's basename. Anything else ends the walk, so the
// table matches programs, not words in arguments. The walk looks at eight words at most: the
// program comes first on every real command line.
#include "sys/pool_holders.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <set>

#include "base/text.h"
#include "sys/processes.h"

namespace headroom {
namespace {

constexpr size_t kMaxWalkWords = 8;

struct NamedKind {
  std::string_view name;
  HolderKind kind;
};

// Executable (or script) basenames. Sources: each project's console scripts
// (vllm, sglang, trl, axolotl, accelerate, deepspeed, torchrun in their setup files),
// llama.cpp's tools (llama-server, llama-cli), Ollama's server and its older runner
// binary, TGI's launcher and its Python shard server, TensorRT-LLM's trtllm-serve.
constexpr std::array kPrograms = {
    NamedKind{"vllm", HolderKind::kVllm},
    NamedKind{"sglang", HolderKind::kSglang},
    NamedKind{"ollama", HolderKind::kOllama},
    NamedKind{"ollama_llama_server", HolderKind::kOllama},
    NamedKind{"llama-server", HolderKind::kLlamaCpp},
    NamedKind{"llama-cli", HolderKind::kLlamaCpp},
    NamedKind{"llama-run", HolderKind::kLlamaCpp},
    NamedKind{"llama-mtmd-cli", HolderKind::kLlamaCpp},
    NamedKind{"text-generation-launcher", HolderKind::kTgi},
    NamedKind{"text-generation-server", HolderKind::kTgi},
    NamedKind{"trtllm-serve", HolderKind::kTensorRtLlm},
    NamedKind{"trl", HolderKind::kTrl},
    NamedKind{"axolotl", HolderKind::kAxolotl},
    NamedKind{"torchrun", HolderKind::kTorchrun},
    NamedKind{"accelerate", HolderKind::kAccelerate},
    NamedKind{"deepspeed", HolderKind::kDeepspeed},
};

// `python -m X`: the top-level package of X ("vllm.entrypoints.openai.api_server").
constexpr std::array kModules = {
    NamedKind{"vllm", HolderKind::kVllm},
    NamedKind{"sglang", HolderKind::kSglang},
    NamedKind{"text_generation_server", HolderKind::kTgi},
    NamedKind{"tensorrt_llm", HolderKind::kTensorRtLlm},
    NamedKind{"trl", HolderKind::kTrl},
    NamedKind{"axolotl", HolderKind::kAxolotl},
    NamedKind{"accelerate", HolderKind::kAccelerate},
    NamedKind{"deepspeed", HolderKind::kDeepspeed},
};

// Process titles set with setproctitle by the engines' own worker processes.
constexpr std::array kTitlePrefixes = {
    NamedKind{"ray::", HolderKind::kRayWorker},
    NamedKind{"VLLM::", HolderKind::kVllm},      // vLLM v1: VLLM::EngineCore, VLLM::Worker_TP0
    NamedKind{"sglang::", HolderKind::kSglang},  // sglang::scheduler_TP0, sglang::detokenizer
};

constexpr std::array<std::string_view, 21> kLaunchers = {
    "env",        "nohup",  "uv",     "uvx",  "run",     "conda",   "mamba",
    "micromamba", "poetry", "pipx",   "pdm",  "numactl", "taskset", "nice",
    "ionice",     "stdbuf", "setsid", "sudo", "chrt",    "time",    "exec"};

// Launcher options whose value is the next word (conda run -n ENV, sudo -u USER).
constexpr std::array<std::string_view, 6> kOptionsWithValue = {"-n",       "--name", "-p",
                                                               "--prefix", "-u",     "--user"};

template <size_t N>
std::optional<HolderKind> Lookup(const std::array<NamedKind, N>& table, std::string_view name) {
  for (const auto& e : table) {
    if (e.name == name) return e.kind;
  }
  return std::nullopt;
}

template <typename Table>
bool Contains(const Table& table, std::string_view word) {
  return std::find(table.begin(), table.end(), word) != table.end();
}

// "/usr/bin/python3.12" -> "python3.12"; "serve.py" -> "serve".
std::string_view ProgramName(std::string_view word) {
  const size_t slash = word.rfind('/');
  if (slash != std::string_view::npos) word.remove_prefix(slash + 1);
  if (word.size() > 3 && word.substr(word.size() - 3) == ".py") word.remove_suffix(3);
  return word;
}

bool IsPython(std::string_view name) {
  if (name.substr(0, 6) != "python") return false;
  name.remove_prefix(6);
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
  });
}

// After an interpreter: `-m MODULE`, or the script. Interpreter options are skipped (-u, -O,
// -X dev and -W ignore take a value); `-c CODE` names no program.
std::optional<HolderKind> AfterPython(const std::vector<std::string>& words, size_t i) {
  for (; i < words.size() && i < kMaxWalkWords + 2; ++i) {
    const std::string_view w = words[i];
    if (w == "-c") return std::nullopt;
    if (w == "-m" && i + 1 < words.size()) {
      const std::string_view module = words[i + 1];
      if (module == "torch.distributed.run" || module == "torch.distributed.launch") {
        return HolderKind::kTorchrun;
      }
      return Lookup(kModules, module.substr(0, module.find('.')));
    }
    if (w == "-X" || w == "-W") {
      ++i;
      continue;
    }
    if (!w.empty() && w.front() == '-') continue;
    return Lookup(kPrograms, ProgramName(w));
  }
  return std::nullopt;
}

}  // namespace

std::string_view HolderKindName(HolderKind kind) {
  switch (kind) {
    case HolderKind::kVllm:
      return "vllm";
    case HolderKind::kSglang:
      return "sglang";
    case HolderKind::kOllama:
      return "ollama";
    case HolderKind::kLlamaCpp:
      return "llama.cpp";
    case HolderKind::kTgi:
      return "tgi";
    case HolderKind::kTensorRtLlm:
      return "tensorrt-llm";
    case HolderKind::kTrl:
      return "trl";
    case HolderKind::kAxolotl:
      return "axolotl";
    case HolderKind::kTorchrun:
      return "torchrun";
    case HolderKind::kAccelerate:
      return "accelerate";
    case HolderKind::kDeepspeed:
      return "deepspeed";
    case HolderKind::kRayWorker:
      return "ray worker";
    case HolderKind::kPythonTorch:
      return "python (torch loaded)";
    case HolderKind::kGpuProcess:
      return "gpu process";
  }
  return "?";
}

std::vector<std::string> CommandWords(const std::vector<std::string>& argv) {
  std::vector<std::string> words;
  for (const auto& arg : argv) {
    size_t at = 0;
    bool split = false;
    while (at < arg.size()) {
      const size_t start = arg.find_first_not_of(" \t\n", at);
      if (start == std::string::npos) break;
      const size_t end = arg.find_first_of(" \t\n", start);
      words.push_back(
          arg.substr(start, end == std::string::npos ? std::string::npos : end - start));
      split = true;
      at = end == std::string::npos ? arg.size() : end;
    }
    if (!split) words.push_back(arg);  // an empty (or all-blank) argument stays one word
  }
  return words;
}

std::optional<HolderKind> ClassifyCommand(const std::vector<std::string>& argv,
                                          bool* looks_like_python) {
  if (looks_like_python) *looks_like_python = false;
  const auto words = CommandWords(argv);
  if (words.empty()) return std::nullopt;
  for (const auto& e : kTitlePrefixes) {
    if (words[0].rfind(e.name, 0) == 0) return e.kind;
  }
  for (size_t i = 0; i < words.size() && i < kMaxWalkWords; ++i) {
    const std::string_view w = words[i];
    if (i > 0) {
      // Options and NAME=value settings of the launcher before the program.
      if (Contains(kOptionsWithValue, w)) {
        ++i;
        continue;
      }
      if (w.empty() || w.front() == '-' || w.find('=') != std::string_view::npos) continue;
      // taskset's CPU masks and lists, nice's levels: "0x3", "0-3", "10".
      if (w.find_first_not_of("0123456789abcdefABCDEFx,-") == std::string_view::npos) continue;
    }
    const std::string_view name = ProgramName(w);
    if (auto kind = Lookup(kPrograms, name)) return kind;
    if (IsPython(name)) {
      if (looks_like_python) *looks_like_python = true;
      return AfterPython(words, i + 1);
    }
    if (!Contains(kLaunchers, name)) return std::nullopt;
  }
  return std::nullopt;
}

std::vector<PoolHolder> FindPoolHolders(const SysRoot& root,
                                        const std::optional<std::vector<GpuProcess>>& gpu,
                                        pid_t self) {
  // NVML lists a process once per device it uses: sum its memory over devices. A process
  // with no figure on any device keeps nullopt ("unknown", not 0).
  std::map<pid_t, std::optional<uint64_t>> gpu_bytes;
  if (gpu) {
    for (const auto& p : *gpu) {
      if (p.pid == 0 || p.pid > static_cast<uint32_t>(INT32_MAX)) continue;
      auto& sum = gpu_bytes[static_cast<pid_t>(p.pid)];
      if (p.used_bytes) sum = sum.value_or(0) + *p.used_bytes;
    }
  }
  std::map<uid_t, std::string> names;
  if (auto passwd = root.ReadFile("etc/passwd", 16 << 20)) names = ParsePasswdNames(*passwd);
  auto user_of = [&](const std::optional<uid_t>& uid) -> std::string {
    if (!uid) return "?";
    auto it = names.find(*uid);
    return it != names.end() ? it->second : std::to_string(*uid);
  };

  std::vector<PoolHolder> out;
  std::set<pid_t> seen;
  std::map<pid_t, pid_t> parent_of;  // every process, for the part_of walk
  for (pid_t pid : ListPids(root)) {
    if (pid == self) continue;
    auto facts = ReadProcessBasics(root, pid);
    if (!facts) continue;  // gone since the directory listing
    parent_of[pid] = facts->ppid;
    bool python = false;
    auto kind = ClassifyCommand(facts->argv, &python);
    // Reading maps costs ~1 ms per CUDA process; only interpreters that named no known
    // program need it.
    if (!kind && python && ReadMapsHasTorch(root, pid)) kind = HolderKind::kPythonTorch;
    const auto on_gpu = gpu_bytes.find(pid);
    if (!kind && on_gpu != gpu_bytes.end()) kind = HolderKind::kGpuProcess;
    if (!kind) continue;
    ReadProcessDetails(root, *facts);
    PoolHolder h;
    h.kind = *kind;
    h.user = user_of(facts->uid);
    h.facts = std::move(*facts);
    if (on_gpu != gpu_bytes.end()) {
      h.in_gpu_list = true;
      h.gpu_bytes = on_gpu->second;
    }
    seen.insert(pid);
    out.push_back(std::move(h));
  }
  // NVML pids with no proc entry: a container's own pid namespace, or exited since.
  for (const auto& [pid, bytes] : gpu_bytes) {
    if (seen.count(pid) || pid == self) continue;
    PoolHolder h;
    h.facts.pid = pid;
    h.in_proc = false;
    h.in_gpu_list = true;
    h.gpu_bytes = bytes;
    h.user = "?";
    out.push_back(std::move(h));
  }
  for (auto& h : out) {
    // Walk up (bounded: pid reuse could make a cycle in a racy snapshot) and keep the last
    // holder met, so every worker of one server points at the same root.
    pid_t at = h.facts.ppid;
    for (int depth = 0; depth < 64 && at > 1; ++depth) {
      if (seen.count(at)) h.part_of = at;
      auto it = parent_of.find(at);
      if (it == parent_of.end()) break;
      at = it->second;
    }
  }
  std::sort(out.begin(), out.end(),
            [](const PoolHolder& a, const PoolHolder& b) { return a.facts.pid < b.facts.pid; });
  return out;
}

std::string StopCommand(const PoolHolder& holder) {
  const std::string kill = "kill -TERM " + std::to_string(holder.facts.pid);
  if (!holder.in_proc) return "";  // no such pid here: a kill would hit another process
  if (!holder.facts.cgroup) return kill;
  const std::string& path = *holder.facts.cgroup;
  const std::string leaf = path.substr(path.rfind('/') + 1);
  auto ends_with = [&](std::string_view s) {
    return leaf.size() > s.size() && leaf.compare(leaf.size() - s.size(), s.size(), s) == 0;
  };
  if (ends_with(".service") && leaf.rfind("user@", 0) != 0) {
    const std::string unit = leaf.substr(0, leaf.size() - 8);
    // Under user@UID.service it is the user's own systemd, which `systemctl --user` drives.
    if (path.find("/user@") != std::string::npos) return "systemctl --user stop " + unit;
    return "systemctl stop " + unit;
  }
  // systemd cgroup driver: docker-<64 hex>.scope; cgroupfs driver: /docker/<64 hex>.
  std::string id;
  if (leaf.rfind("docker-", 0) == 0 && ends_with(".scope")) id = leaf.substr(7, leaf.size() - 13);
  if (path.rfind("/docker/", 0) == 0) id = leaf;
  if (id.size() >= 12 && id.find_first_not_of("0123456789abcdef") == std::string::npos) {
    return "docker stop " + id.substr(0, 12);
  }
  return kill;
}

std::string DisplayCommand(const ProcessFacts& facts) {
  if (facts.argv.empty()) return "[" + facts.comm + "]";
  auto secret_flag = [](std::string_view flag) {
    std::string lower(flag);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lower.rfind("--", 0) == 0 &&
           (lower.find("key") != std::string::npos || lower.find("token") != std::string::npos ||
            lower.find("secret") != std::string::npos ||
            lower.find("password") != std::string::npos);
  };
  std::string line;
  bool mask_next = false;
  for (const auto& arg : facts.argv) {
    std::string shown = arg;
    if (mask_next) {
      shown = "***";
    } else if (const size_t eq = arg.find('=');
               eq != std::string::npos && secret_flag(arg.substr(0, eq))) {
      shown = arg.substr(0, eq + 1) + "***";
    }
    mask_next = shown == arg && secret_flag(arg);
    if (shown.empty() || shown.find_first_of(" \t'\"") != std::string::npos) {
      std::string quoted = "'";
      for (char c : shown) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      shown = quoted + "'";
    }
    if (!line.empty()) line += ' ';
    line += shown;
  }
  if (facts.argv_truncated) line += " ...";
  return ControlsAsQuestionMarks(line);
}

}  // namespace headroom
