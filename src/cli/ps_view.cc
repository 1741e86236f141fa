#include "cli/ps_view.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/table.h"
#include "cli/cli.h"
#include "cli/i18n.h"
#include "cli/labels.h"
#include "cli/message_text.h"

namespace headroom {
namespace {

// Command lines are cut to this many characters in the table (--json has them whole).
constexpr size_t kCommandColumnChars = 60;

std::string OptBytes(const std::optional<uint64_t>& bytes) {
  return bytes ? FormatGiB(*bytes) : "-";
}

std::string CapCell(const PoolHolder& h, const HolderCap& cap) {
  // TRANSLATORS: the CAP cell of a server's worker: its cap is the server's (pid {}).
  if (h.part_of) return TrFormat("(of pid {})", *h.part_of);
  if (cap.pool_fraction) return fmt::format("{:.2f} ({})", *cap.pool_fraction, cap.source);
  if (cap.cap_bytes) return TrFormat("{} (torch cap)", FormatGiB(*cap.cap_bytes));
  // TRANSLATORS: the CAP cell: the holder takes its memory when it loads and keeps it.
  if (cap.fixed_after_load) return Tr("fixed at load");
  // TRANSLATORS: the CAP cell: no cap at all.
  return Tr("none");
}

std::string Shorten(const std::string& text, size_t max_chars) {
  return text.size() <= max_chars ? text : text.substr(0, max_chars - 3) + "...";
}

void PrintTable(const CliEnv& env, const PoolSurvey& s) {
  const auto& holders = s.holders;
  const auto& caps = s.caps;
  const auto& advice = s.advice;
  using A = TextTable::Align;
  std::vector<A> aligns = {A::kRight, A::kLeft,  A::kLeft, A::kRight,
                           A::kRight, A::kRight, A::kLeft};
  // TRANSLATORS: headings of the ps table; RSS, PSS and GPU are kept as they are. KIND cells
  // are detection names (vllm, ollama, python-torch, ...) and stay as they are.
  std::vector<std::string> head = {"PID", Tr("USER"), Tr("KIND"), "RSS", "PSS", "GPU", Tr("CAP")};
  if (advice) {
    aligns.push_back(A::kLeft);
    head.push_back(Tr("ADVICE"));
  }
  aligns.push_back(A::kLeft);
  head.push_back(Tr("COMMAND"));
  TextTable table(aligns);
  table.AddRow(head);
  for (size_t i = 0; i < holders.size(); ++i) {
    const PoolHolder& h = holders[i];
    std::vector<std::string> row = {std::to_string(h.facts.pid),
                                    h.user,
                                    std::string(HolderKindName(h.kind)),
                                    OptBytes(h.facts.rss_bytes),
                                    OptBytes(h.facts.pss_bytes),
                                    OptBytes(h.gpu_bytes),
                                    CapCell(h, caps[i])};
    if (advice) row.emplace_back(HolderActionLabel(advice->holders[i].action));
    row.push_back(h.in_proc ? Shorten(DisplayCommand(h.facts), kCommandColumnChars)
                            : Tr("(not in this pid namespace)"));
    table.AddRow(std::move(row));
  }
  if (holders.empty()) {
    std::fprintf(env.out, "%s\n",
                 Tr("no process holds the pool or will grab it (none of: vllm, sglang, ollama, "
                    "llama.cpp, tgi, "
                    "tensorrt-llm, trl, axolotl, torchrun, accelerate, deepspeed, ray workers, "
                    "python with torch, "
                    "NVML's GPU processes)"));
  } else {
    std::fputs(table.Render(0).c_str(), env.out);
  }
}

void PrintSettingsAndNotes(const CliEnv& env, const PoolSurvey& survey) {
  const auto& holders = survey.holders;
  const auto& caps = survey.caps;
  bool first = true;
  for (size_t i = 0; i < holders.size(); ++i) {
    std::vector<std::string> lines;
    std::string settings;
    for (const auto& s : caps[i].settings) {
      if (!settings.empty()) settings += ", ";
      settings += s.value.empty() ? s.name : fmt::format("{}={} ({})", s.name, s.value, s.source);
    }
    if (!settings.empty()) lines.push_back(settings);
    for (const auto& n : caps[i].notes) lines.push_back(TranslatedText(n));
    for (const auto& l : lines) {
      if (first) std::fprintf(env.out, "\n%s\n", Tr("settings and notes:"));
      first = false;
      std::fprintf(env.out, "  %s\n", TrFormat("pid {}: {}", holders[i].facts.pid, l).c_str());
    }
  }
}

void PrintAdvice(const CliEnv& env, const PoolAdvice& advice) {
  std::fprintf(env.out, "\n%s\n",
               TrFormat("beside a job that needs {}:", FormatGiB(advice.need_bytes)).c_str());
  for (const auto& a : advice.holders) {
    if (a.action == HolderAction::kPartOf) continue;
    std::fprintf(env.out, "  %s\n",
                 TrFormat("pid {}: {}", a.pid, TranslatedText(a.arithmetic)).c_str());
    if (a.action == HolderAction::kStop) {
      std::fprintf(env.out, "    %s\n",
                   TrFormat("to stop it (not done by headroom): {}",
                            a.stop_command.empty() ? std::string(Tr("stop it where it runs"))
                                                   : a.stop_command)
                       .c_str());
    }
  }
  std::fprintf(env.out, "%s\n", TranslatedText(advice.summary).c_str());
}

}  // namespace

void PrintPoolSurvey(const CliEnv& env, const PoolSurvey& s) {
  PrintTable(env, s);
  PrintSettingsAndNotes(env, s);
  if (s.advice) PrintAdvice(env, *s.advice);
  if (!s.gpu.note.empty()) {
    std::fprintf(env.out, "\n%s\n",
                 TrFormat("gpu: {}; the GPU column is empty where NVML gave nothing",
                          TranslatedText(s.gpu.note))
                     .c_str());
  }
}

}  // namespace headroom
