// The CLI layer's shared pieces: what main hands every subcommand, the exit statuses, and
// the one-line error format (docs/style.md rule 9: "headroom: what failed: reason").
#pragma once

#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/durable_lines.h"
#include "base/exit_status.h"
#include "base/message.h"
#include "base/result.h"
#include "cli/i18n.h"
#include "config/config_file.h"

namespace CLI {
class App;
}

namespace headroom {

// The exit statuses are in base/exit_status.h (one table for every command).

// What main hands a subcommand: its arguments and where the system lives. Only main
// chooses the real root ("/"); everything below takes it from here.
struct CliEnv {
  std::filesystem::path default_root;
  std::FILE* out = stdout;
  std::FILE* err = stderr;
  // config.toml and the HEADROOM_* variables, loaded once by main (docs/config.md); the
  // defaults a command uses when its flag is not given (cli/config_defaults.h).
  LoadedConfig config;
};

// A command's flags: the CLI11 app that defines them and the variables its options write.
// Each command derives its own (the app, then the variables, as members) and makes one in
// its Define function. Defining runs nothing: `headroom help`, the man pages and the
// completions read the definitions (cli/help_docs.h); main parses the words into one and
// hands it to the command's Run.
struct CommandFlags {
  virtual ~CommandFlags() = default;
  virtual CLI::App& App() = 0;
  // The status of a usage error (a bad flag, a broken configuration): kExitUsage, except
  // doctor's (kExitDoctorUsage).
  virtual int UsageStatus() const { return kExitUsage; }
};

// One row of the subcommand table in main.cc.
struct Subcommand {
  std::string_view name;
  std::string_view summary;
  std::unique_ptr<CommandFlags> (*define)();
  int (*run)(const CliEnv& env, CommandFlags& flags);
};

// Runs the command `c` on the words after its name, its output on stdout and stderr: defines
// and parses its flags, reads the configuration (in English after --json), runs it.
// An exception that escapes the command is caught here: one line, "headroom: COMMAND:
// internal error: WHAT", and kExitInternal.
int RunSubcommand(const Subcommand& c, const std::filesystem::path& default_root,
                  const std::vector<std::string>& args);

// The command's flags as `Flags` (the type its Define made).
template <typename Flags>
Flags& FlagsOf(CommandFlags& flags) {
  return static_cast<Flags&>(flags);
}

// TrFormat with a plural: the form for `n` of singular/plural, translated, formatted with
// `args` (English, and the English form, when the translation's placeholders do not fit).
// Extracted by scripts/update-pot as TrPluralFormat:1,2.
template <typename... Args>
std::string TrPluralFormat(const char* singular, const char* plural, unsigned long n,
                           Args&&... args) {
  return i18n_detail::FormatOrFallBack(TrPlural(singular, plural, n), n == 1 ? singular : plural,
                                       fmt::make_format_args(args...));
}

// The translation of `english`, or `english` itself: for text not written as a literal
// here, such as a library's names and titles (marked N_ where they are defined, and kept
// English in JSON) or an English record read back from the journal.
std::string TrText(std::string_view english);

// Prints "headroom: <message>" on one line to env.err (newlines in message are replaced).
void PrintError(const CliEnv& env, std::string_view message);
// The same for a message value or an Error, rendered in the user's language (TranslatedText).
void PrintError(const CliEnv& env, const Message& message);
void PrintError(const CliEnv& env, const Error& error);

// A usage or input error inside a subcommand's handler: thrown and caught within the same
// handler, printed as "headroom: <command>: <message>" with exit status 2.
struct UsageError {
  std::string message;
};

// Parses a subcommand's arguments. nullopt: go on. Otherwise the handler returns the value:
// 0 after printing --help, kExitUsage after printing a one-line parse error. Help screens
// and parse errors are in the user's language (cli/cli11_i18n.h).
std::optional<int> ParseFlags(CLI::App& app, const CliEnv& env, std::string_view command,
                              const std::vector<std::string>& args);

// Whether the parsed words gave --json (on the command or on its subcommand). --json output
// is data: main then runs the command in English, so the same command gives the same bytes
// in every language.
bool GaveJson(const CLI::App& app);

// A size ("4GiB", "100GB") or a percentage of `total` ("8%") given to `flag`; throws
// UsageError naming the flag.
uint64_t SizeOrPercentFlag(const std::string& text, uint64_t total, std::string_view flag);

// Writes `text` to `path` through a temporary file beside it and a rename, so a reader never
// sees half a file (base/safe_file.h ReplaceFile: only a regular file or nothing is replaced,
// never one of `inputs`); failures are a UsageError naming `flag`.
void WriteFileAtomically(const std::string& path, const std::string& text, std::string_view flag,
                         std::span<const std::string> inputs = {});
// The same checks before any work starts (base/safe_file.h CheckOutputPath); a UsageError
// naming `flag`.
void CheckOutputFlag(const std::string& path, std::string_view flag,
                     std::span<const std::string> inputs = {});

// A command's status once its files are written: when a write to one of `files` failed (a full
// disk), the first failure on stderr ("headroom: COMMAND: write(PATH): reason") and a success
// turned into kExitUsage; otherwise `status` as it is. A failed write is never silent.
int StatusAfterWrites(const CliEnv& env, std::string_view command, int status,
                      std::initializer_list<const DurableLines*> files);

// Each command: its flags (Define) and what it does with them (Run), for the table in main.cc.
std::unique_ptr<CommandFlags> DefinePlanFlags();
int RunPlan(const CliEnv& env, CommandFlags& flags);
std::unique_ptr<CommandFlags> DefineGuardFlags();
int RunGuardCommand(const CliEnv& env, CommandFlags& flags);
std::unique_ptr<CommandFlags> DefineHistoryFlags();
int RunHistory(const CliEnv& env, CommandFlags& flags);
std::unique_ptr<CommandFlags> DefineSweepFlags();
int RunSweepCommand(const CliEnv& env, CommandFlags& flags);
std::unique_ptr<CommandFlags> DefineWatchFlags();
int RunWatchCommand(const CliEnv& env, CommandFlags& flags);
std::unique_ptr<CommandFlags> DefinePsFlags();
int RunPsCommand(const CliEnv& env, CommandFlags& flags);
std::unique_ptr<CommandFlags> DefineTopFlags();
int RunTopCommand(const CliEnv& env, CommandFlags& flags);
std::unique_ptr<CommandFlags> DefineLadderFlags();
int RunLadderCommand(const CliEnv& env, CommandFlags& flags);
std::unique_ptr<CommandFlags> DefineExplainFlags();
int RunExplainCommand(const CliEnv& env, CommandFlags& flags);
std::unique_ptr<CommandFlags> DefineDoctorFlags();
int RunDoctorCommand(const CliEnv& env, CommandFlags& flags);
std::unique_ptr<CommandFlags> DefineBandwidthFlags();
int RunBandwidthCommand(const CliEnv& env, CommandFlags& flags);
std::unique_ptr<CommandFlags> DefineExportFlags();
std::unique_ptr<CommandFlags> DefineGuardianFlags();
int RunGuardianCommand(const CliEnv& env, CommandFlags& flags);
int RunExportCommand(const CliEnv& env, CommandFlags& flags);
std::unique_ptr<CommandFlags> DefineReportFlags();
int RunReportCommand(const CliEnv& env, CommandFlags& flags);
std::unique_ptr<CommandFlags> DefineConfigFlags();
int RunConfigCommand(const CliEnv& env, CommandFlags& flags);

// `headroom help [COMMAND]`, `--man`, `--man-dir`, `--completion`: over the table in main.cc.
int RunHelpCommand(const CliEnv& env, std::span<const Subcommand> commands,
                   const std::vector<std::string>& args);

// The program: `argv` run against the table of `commands` (main.cc's), the message catalogs
// found beside the binary first. Returns the exit status.
int RunCli(std::span<const Subcommand> commands, int argc, char** argv);
// Where the message catalogs are: build/locale beside a build tree's binary, else
// PREFIX/share/locale for an installed one; "" when neither exists.
std::string FindLocaleDir();
// The command list of `headroom --help`, in the user's language.
void PrintUsage(std::FILE* out, std::span<const Subcommand> commands);

}  // namespace headroom
