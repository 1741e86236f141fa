// `headroom history`: --limit and the journal's path -> ReadRunHistory (store/run_history.h:
// read-only, a missing journal lists nothing) -> the table (cli/history_view.h) or
// RunHistoryJson.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <string>

#include "base/bytes.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/history_view.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "guard/guard_record.h"
#include "store/run_history.h"

namespace headroom {
namespace {

constexpr int kDefaultLimit = 20;

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

    // A run whose recording process died stays "running" in the journal: shown abandoned.
    auto runs = ReadRunHistory(*path, max_runs, LocalHostName(), [](pid_t pid, auto start) {
      return ProcessAlive(SysRoot("/"), pid, start);
    });
    if (!runs) throw UsageError{TranslatedText(runs.error().what)};
    if (json) {
      PrintJson(env, RunHistoryJson(*path, *runs));
    } else {
      PrintRunHistory(env, *path, *runs);
    }
    return kExitOk;
  } catch (const UsageError& e) {
    PrintError(env, "history: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
