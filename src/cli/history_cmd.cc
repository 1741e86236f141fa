// `headroom history`: the journal's recent runs, newest first, as a table or as JSON
// (schema_version 1, docs/journal.md). It only reads: a journal that does not exist yet
// means nothing was recorded, and it is not created just to be listed.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "base/bytes.h"
#include "base/table.h"
#include "base/wall_time.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "run/guard_record.h"
#include "store/abandoned_runs.h"
#include "store/journal.h"

namespace headroom {
namespace {

constexpr int kDefaultLimit = 20;
// Commands are cut to this many characters in the table so that a row fits a terminal
// beside the other columns (about 60 of 120); --json has them whole.
constexpr size_t kCommandColumnChars = 60;

// Control characters (a newline in an argument, an escape sequence) would break the table
// or the terminal; they show as '?'.
std::string Printable(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  }
  return out;
}

// The argv as a shell would show it: arguments with spaces or quotes in single quotes.
std::string JoinCommand(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& arg : argv) {
    if (!line.empty()) line += ' ';
    const bool plain =
        !arg.empty() && arg.find_first_of(" \t'\"\\$`;&|<>()*?") == std::string::npos;
    if (plain) {
      line += arg;
    } else {
      line += '\'';
      for (char c : arg) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
      line += '\'';
    }
  }
  return Printable(line);
}

// Cuts to `max_chars` code points (never inside a UTF-8 sequence), ending in "...".
std::string Shorten(const std::string& text, size_t max_chars) {
  size_t chars = 0;
  size_t cut = std::string::npos;  // byte offset where the kept part ends
  for (size_t i = 0; i < text.size(); ++i) {
    if ((text[i] & 0xC0) == 0x80) continue;  // a continuation byte
    if (chars == max_chars - 3) cut = i;
    if (++chars > max_chars) return text.substr(0, cut) + "...";
  }
  return text;
}

std::optional<double> DurationSeconds(const RunRow& run) {
  if (!run.ended_at) return std::nullopt;
  const auto start = ParseUtcIso8601(run.started_at);
  const auto end = ParseUtcIso8601(*run.ended_at);
  if (!start || !end || *end < *start) return std::nullopt;
  return std::chrono::duration<double>(*end - *start).count();
}

// "12.3 s", "4 min 05 s", "2 h 03 min": the precision a person reads a run length in.
std::string FormatElapsed(double seconds) {
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  const auto whole = static_cast<long long>(seconds);
  if (whole < 3600) return fmt::format("{} min {:02} s", whole / 60, whole % 60);
  return fmt::format("{} h {:02} min", whole / 3600, whole / 60 % 60);
}

// "2025-03-14 09:26:53" from the stored "2025-03-14T09:26:53.589Z"; other text as it is.
std::string ShowStarted(const std::string& started_at) {
  if (!ParseUtcIso8601(started_at)) return Printable(started_at);
  std::string shown = started_at.substr(0, 19);
  shown[10] = ' ';
  return shown;
}

// A recorded note under its run's line, in the reader's language (the journal stores it as a
// message; rows from before schema version 6 hold English, shown as it is).
void PrintNote(const CliEnv& env, const Message& note) {
  std::fprintf(env.out, "    %s\n", TrFormat("note: {}", Printable(TranslatedText(note))).c_str());
}

void PrintTable(const CliEnv& env, const std::filesystem::path& path,
                const std::vector<RunRow>& runs) {
  using A = TextTable::Align;
  TextTable table({A::kRight, A::kLeft, A::kLeft, A::kRight, A::kLeft, A::kRight, A::kLeft});
  // TRANSLATORS: headings of the history table; the KIND and STATUS cells are the journal's
  // own words (guard, sweep, watch; exited, killed-by-guard, ...) and stay as recorded.
  table.AddRow({Tr("ID"), Tr("KIND"), Tr("STARTED (UTC)"), Tr("DURATION"), Tr("STATUS"), Tr("EXIT"),
                Tr("COMMAND")});
  for (const RunRow& run : runs) {
    const auto seconds = DurationSeconds(run);
    table.AddRow({std::to_string(run.id), Printable(run.kind), ShowStarted(run.started_at),
                  seconds ? FormatElapsed(*seconds) : "-", Printable(run.status),
                  run.exit_status ? std::to_string(*run.exit_status) : "-",
                  Shorten(JoinCommand(run.command), kCommandColumnChars)});
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

nlohmann::ordered_json RunJson(const RunRow& run) {
  using Json = nlohmann::ordered_json;  // keys in the order written: schema_version first
  auto or_null = [](const auto& v) { return v ? Json(*v) : Json(nullptr); };
  // The summary is stored as text; embedded as an object so readers need not parse twice.
  // Text that no longer parses (edited by hand) shows as null rather than failing the list.
  Json summary = nullptr;
  if (run.summary_json) {
    summary = Json::parse(*run.summary_json, nullptr, false);
    if (summary.is_discarded()) summary = nullptr;
  }
  return {
      {"id", run.id},
      {"kind", run.kind},
      {"host", run.host},
      {"started_at", run.started_at},
      {"ended_at", or_null(run.ended_at)},
      {"duration_s", or_null(DurationSeconds(run))},
      {"status", run.status},
      {"exit_status", or_null(run.exit_status)},
      {"command", run.command},
      {"summary", summary},
  };
}

void PrintJson(const CliEnv& env, const std::filesystem::path& path,
               const std::vector<RunRow>& runs) {
  nlohmann::ordered_json out = {{"schema_version", 1}, {"journal", path.string()}};
  out["runs"] = nlohmann::ordered_json::array();
  for (const RunRow& run : runs) out["runs"].push_back(RunJson(run));
  // replace: stored text need not be UTF-8 (hand edits); dump would otherwise throw.
  std::fprintf(env.out, "%s\n",
               out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
}

// history's flags: the app, then the variables its options write.
struct HistoryCommandFlags final : CommandFlags {
  CLI::App app{
      Tr("List recent guarded runs and sweeps from the journal, newest first.\n\n"
         "  headroom history [--journal PATH] [--limit N] [--json]\n\n"
         "The journal is --journal PATH, else $HEADROOM_JOURNAL, else journal in config.toml, else "
         "$XDG_STATE_HOME/headroom/journal.db, else ~/.local/state/headroom/journal.db. "
         "A journal that does not exist yet lists nothing and is not created.\n\n"
         "exit status: 0 (also when nothing is recorded); 2 usage error or unreadable journal"),
      "headroom history"};
  std::string journal_flag, limit_text = std::to_string(kDefaultLimit);
  bool json = false;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineHistoryFlags() {
  auto defined = std::make_unique<HistoryCommandFlags>();
  auto& [app, journal_flag, limit_text, json] = *defined;
  AddJournalFlag(app, journal_flag);
  app.add_option("--limit", limit_text, TrFormat("at most N runs (default {})", kDefaultLimit));
  AddJsonFlag(app, json);
  return defined;
}

int RunHistory(const CliEnv& env, CommandFlags& given_flags) {
  auto& [app, journal_flag, limit_text, json] = FlagsOf<HistoryCommandFlags>(given_flags);
  try {
    const auto limit = ParsePositiveInt(limit_text);
    if (!limit) throw UsageError{"--limit: " + TranslatedText(limit.error().what)};
    // More than an int can hold is as good as "all of them".
    const int max_runs = static_cast<int>(std::min<int64_t>(*limit, 1'000'000'000));
    auto path = JournalPath(env, journal_flag);
    if (!path) throw UsageError{TranslatedText(path.error().what)};

    std::vector<RunRow> runs;
    std::error_code ec;
    if (std::filesystem::exists(*path, ec)) {
      auto journal = Journal::Open(*path, JournalOptions{.read_only = true});
      if (!journal) throw UsageError{TranslatedText(journal.error().what)};
      auto recent = journal->RecentRuns(max_runs);
      if (!recent) throw UsageError{TranslatedText(recent.error().what)};
      runs = std::move(*recent);
      // A run whose recording process died stays "running" in the journal: shown abandoned.
      MarkAbandonedRuns(*journal, runs, LocalHostName(), [](pid_t pid, std::optional<uint64_t> t) {
        return ProcessAlive(SysRoot("/"), pid, t);
      });
    } else if (ec) {
      throw UsageError{TrFormat("journal: stat({}): {}", path->string(), ec.message())};
    }
    if (json) {
      PrintJson(env, *path, runs);
    } else if (runs.empty()) {
      std::fprintf(env.out, "%s\n", TrFormat("no runs recorded in {}", path->string()).c_str());
    } else {
      PrintTable(env, *path, runs);
    }
    return kExitOk;
  } catch (const UsageError& e) {
    PrintError(env, "history: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
