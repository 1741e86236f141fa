// Implementation notes: the view only reads. For a ladder at step 1 it adds a live meminfo
// reading beside the one recorded when the step began, since the page cache refills while
// the user decides; plan numbers are shown as recorded (they were computed at entry).
#include "cli/ladder_view.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "ladder/ladder.h"
#include "ladder/ladder_advice.h"
#include "store/ladder_journal.h"
#include "sys/meminfo.h"

namespace headroom {
namespace {

constexpr int kLadderJsonSchemaVersion = 1;

nlohmann::json ParseObject(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

}  // namespace

int ShowLadders(const CliEnv& env, Journal* journal, const SysRoot& root, bool json) {
  std::vector<LadderRow> open;
  if (journal) {
    LadderJournal ladders(*journal);
    auto rows = ladders.Open();
    if (!rows) {
      PrintError(env, "ladder: " + rows.error().message);
      return kExitNegative;
    }
    open = std::move(rows).value();
  }
  nlohmann::json out = {{"schema_version", kLadderJsonSchemaVersion},
                        {"ladders", nlohmann::json::array()}};
  if (open.empty() && !json) std::fprintf(env.out, "no open ladders\n");
  for (const auto& l : open) {
    LadderJournal ladders(*journal);
    auto entries = ladders.Entries(l.id);
    if (!entries) {
      PrintError(env, "ladder: " + entries.error().message);
      return kExitNegative;
    }
    nlohmann::json j = {{"id", l.id},
                        {"job", l.job},
                        {"symptom", l.symptom},
                        {"match", l.match_text},
                        {"plan_args", l.plan_args},
                        {"status", std::string(Name(l.state.status))},
                        {"step", l.state.step},
                        {"step_name", std::string(LadderStepName(l.state.step))},
                        {"step_title", std::string(LadderStepTitle(l.state.step))},
                        {"started_at", l.started_at},
                        {"entries", nlohmann::json::array()}};
    std::fprintf(env.out, "%s", json ? "" : fmt::format(
        "ladder {}: job '{}' (OOM at {}), step {} of 4: {}\n  started {}; the job is running "
        "when a command line contains '{}'{}\n",
        l.id, l.job, l.symptom, l.state.step, LadderStepTitle(l.state.step), l.started_at,
        l.match_text, l.plan_args.empty() ? "" : "; plan: " + l.plan_args).c_str());
    const LadderEntryRow* current = nullptr;
    for (const auto& e : *entries) {
      j["entries"].push_back({{"step", e.step},
                              {"kind", e.kind},
                              {"text", e.text},
                              {"result", e.result ? nlohmann::json(*e.result) : nlohmann::json(nullptr)},
                              {"note", e.note},
                              {"evidence", ParseObject(e.evidence_json)},
                              {"at", e.at}});
      if (e.kind == "entered" && e.step == l.state.step) current = &e;
      if (!json) {
        std::fprintf(env.out, "  %s step %d %s: %s%s\n", e.at.c_str(), e.step, e.kind.c_str(),
                     e.text.c_str(), e.note.empty() ? "" : (" (note: " + e.note + ")").c_str());
      }
    }
    if (l.state.step == 1) {
      if (auto info = ReadMemInfo(root)) {
        const StepAdvice now = FlushAdvice(*info);
        j["live"] = now.evidence;
        if (!json) std::fprintf(env.out, "  now: %s\n", now.lines.front().c_str());
      }
    }
    if (current && !json) {
      const auto evidence = ParseObject(current->evidence_json);
      if (evidence.contains("symptom_note")) {
        std::fprintf(env.out, "  note: %s\n", evidence["symptom_note"].get<std::string>().c_str());
      }
    }
    if (!json) {
      std::fprintf(env.out, "  next: %s, rerun the job, then: headroom ladder record %s --result "
                   "ok|oom\n",
                   (l.state.step == 1 ? "flush (headroom ladder apply " + l.job + ", as root)"
                                      : std::string("change the settings as above"))
                       .c_str(),
                   l.job.c_str());
    }
    out["ladders"].push_back(std::move(j));
  }
  if (json) std::fprintf(env.out, "%s\n", out.dump(2).c_str());
  return kExitOk;
}

}  // namespace headroom
