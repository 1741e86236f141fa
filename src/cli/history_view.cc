#include "cli/history_view.h"

#include <cstdio>
#include <string>

#include "base/duration.h"
#include "base/table.h"
#include "base/text.h"
#include "base/wall_time.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "store/run_history.h"

namespace headroom {
namespace {

// Commands are cut to this many characters in the table so that a row fits a terminal
// beside the other columns (about 60 of 120); --json has them whole.
constexpr size_t kHistoryCommandChars = 60;

// "2025-03-14 09:26:53" from the stored "2025-03-14T09:26:53.589Z"; other text as it is.
std::string ShowStarted(const std::string& started_at) {
  if (!ParseUtcIso8601(started_at)) return ControlsAsQuestionMarks(started_at);
  std::string shown = started_at.substr(0, 19);
  shown[10] = ' ';
  return shown;
}

// A recorded note under its run's line, in the reader's language (the journal stores it as a
// message; rows from before schema version 6 hold English, shown as it is).
void PrintNote(const CliEnv& env, const Message& note) {
  std::fprintf(env.out, "    %s\n",
               TrFormat("note: {}", ControlsAsQuestionMarks(TranslatedText(note))).c_str());
}

void PrintHistoryTable(const CliEnv& env, const std::filesystem::path& path,
                       const std::vector<RunRow>& runs) {
  using A = TextTable::Align;
  TextTable table({A::kRight, A::kLeft, A::kLeft, A::kRight, A::kLeft, A::kRight, A::kLeft});
  // TRANSLATORS: headings of the history table; the KIND and STATUS cells are the journal's
  // own words (guard, sweep, watch; exited, killed-by-guard, ...) and stay as recorded.
  table.AddRow({Tr("ID"), Tr("KIND"), Tr("STARTED (UTC)"), Tr("DURATION"), Tr("STATUS"), Tr("EXIT"),
                Tr("COMMAND")});
  for (const RunRow& run : runs) {
    const auto seconds = RunDurationSeconds(run);
    table.AddRow(
        {std::to_string(run.id), ControlsAsQuestionMarks(run.kind), ShowStarted(run.started_at),
         seconds ? FormatElapsed(*seconds) : "-", ControlsAsQuestionMarks(run.status),
         run.exit_status ? std::to_string(*run.exit_status) : "-",
         ShortenUtf8(ControlsAsQuestionMarks(ShellQuoted(run.command)), kHistoryCommandChars)});
  }
  std::fprintf(env.out, "%s\n", TrFormat("journal: {}", path.string()).c_str());
  // The table's lines are its heading, then one per run: each run's notes follow its line.
  const std::string rendered = table.Render(0);
  size_t line_start = 0;
  for (size_t line = 0; line_start < rendered.size(); ++line) {
    size_t end = rendered.find('\n', line_start);
    end = end == std::string::npos ? rendered.size() : end + 1;
    std::fwrite(rendered.data() + line_start, 1, end - line_start, env.out);
    line_start = end;
    if (line == 0 || line > runs.size()) continue;
    for (const Message& note : runs[line - 1].notes) PrintNote(env, note);
  }
}

}  // namespace

void PrintRunHistory(const CliEnv& env, const std::filesystem::path& path,
                     const std::vector<RunRow>& runs) {
  if (runs.empty()) {
    std::fprintf(env.out, "%s\n", TrFormat("no runs recorded in {}", path.string()).c_str());
  } else {
    PrintHistoryTable(env, path, runs);
  }
}

}  // namespace headroom
