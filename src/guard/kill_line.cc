#include "guard/kill_line.h"

#include <nlohmann/json.hpp>

#include "base/bytes.h"
#include "base/json_null.h"
#include "base/text.h"
#include "guard/guard.h"

namespace headroom {
namespace {

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool EndsWith(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The word that names the job: its script (train.py), else a module after -m, else what
// `sh -c SCRIPT NAME ...` runs as $0, else the program.
std::string JobWord(const std::vector<std::string>& command) {
  for (size_t i = 0; i < command.size(); ++i) {
    const std::string& w = command[i];
    if (!w.starts_with("-") && (EndsWith(w, ".py") || EndsWith(w, ".sh"))) return BaseName(w);
    if (w == "-m" && i + 1 < command.size()) return command[i + 1];
  }
  if (command.empty()) return {};
  const std::string program = BaseName(command[0]);
  const bool shell = program == "sh" || program == "bash" || program == "dash";
  if (shell && command.size() > 3 && command[1] == "-c") return BaseName(command[3]);
  return program;
}

// A ladder's JOB: the word without its extension, a dotted module's last part, and only
// letters, digits, '-' and '_' (the rest '-').
std::string JobName(std::string word) {
  if (EndsWith(word, ".py") || EndsWith(word, ".sh")) word.resize(word.size() - 3);
  if (const size_t dot = word.rfind('.'); dot != std::string::npos) word = word.substr(dot + 1);
  for (char& c : word) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_';
    if (!plain) c = '-';
  }
  return word.empty() ? std::string("job") : word.substr(0, 64);
}

}  // namespace

std::optional<JobPeak> JobOwnPeak(const GuardSummary& s) {
  std::optional<JobPeak> best;
  auto consider = [&](std::optional<uint64_t> bytes, std::string_view source) {
    if (bytes && *bytes > 0 && (!best || *bytes > best->bytes)) best = JobPeak{*bytes, source};
  };
  consider(s.cgroup_peak_bytes, "cgroup");
  consider(s.records_peak_bytes, "step-records");
  consider(s.peak_tree_rss_bytes, "tree-rss");
  return best;
}

Message KillReadingLine(const GuardSummary& s) {
  const std::string available = FormatGiB(s.trigger_available_bytes.value_or(0));
  const std::string level = FormatGiB(s.kill_level_bytes);
  if (s.kill_reason == "projected" && s.projected_s) {
    return Msg("MemAvailable {0}, falling {1}/s, was {2:.1f} s from the kill level {3}", available,
               FormatGiB(static_cast<uint64_t>(s.fall_rate_bytes_per_s.value_or(0))),
               *s.projected_s, level);
  }
  if (s.kill_reason == "psi") {
    return Msg("full memory pressure (PSI) held on with MemAvailable {0}, above the kill level {1}",
               available, level);
  }
  return Msg("MemAvailable {0} fell below the kill level {1}", available, level);
}

std::optional<Message> JobPeakLine(const GuardSummary& s) {
  const auto peak = JobOwnPeak(s);
  if (!peak) return std::nullopt;
  const std::string bytes = FormatGiB(peak->bytes);
  if (peak->source == "cgroup")
    return Msg("the job's own peak: {} (its cgroup's memory.peak)", bytes);
  if (peak->source == "step-records") {
    return Msg("the job's own peak: {} (its allocator and host peaks, from its step records)",
               bytes);
  }
  return Msg(
      "the job's own peak: {} (its process tree's RSS, sampled; GPU memory on unified "
      "memory is not in RSS)",
      bytes);
}

std::string NextStepCommand(const std::vector<std::string>& command) {
  const std::string word = JobWord(command);
  std::vector<std::string> argv = {"headroom",    "ladder",    "start",
                                   JobName(word), "--symptom", "step"};
  if (!word.empty()) argv.insert(argv.end(), {"--match", word});
  return ShellQuoted(argv);
}

nlohmann::json KillJson(const GuardSummary& s) {
  if (!s.killed) return nullptr;
  const auto peak = JobOwnPeak(s);
  return {
      {"reason", s.kill_reason},
      {"available_bytes", OrNull<nlohmann::json>(s.trigger_available_bytes)},
      {"level_bytes", s.kill_level_bytes},
      {"fall_rate_bytes_per_s", OrNull<nlohmann::json>(s.fall_rate_bytes_per_s)},
      {"projected_s", OrNull<nlohmann::json>(s.projected_s)},
      {"job_peak_bytes", peak ? nlohmann::json(peak->bytes) : nlohmann::json(nullptr)},
      {"job_peak_source", peak ? nlohmann::json(peak->source) : nlohmann::json(nullptr)},
      {"next_step", s.next_step.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.next_step)},
  };
}

}  // namespace headroom
