#include "cli/cli.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "base/safe_file.h"
#include "base/version.h"
#include "cli/cli11_i18n.h"
#include "cli/i18n.h"
#include "cli/message_text.h"

namespace headroom {

void PrintError(const CliEnv& env, std::string_view message) { PrintErrorLine(env.err, message); }

void PrintError(const CliEnv& env, const Message& message) {
  PrintError(env, TranslatedText(message));
}

void PrintError(const CliEnv& env, const Error& error) { PrintError(env, error.what); }

std::string TrText(std::string_view english) {
  const std::string msgid(english);
  return Tr(msgid.c_str());  // copied before msgid goes: Tr may return its argument
}

std::optional<int> ParseFlags(CLI::App& app, const CliEnv& env, std::string_view command,
                              const std::vector<std::string>& args) {
  LocalizeHelp(app);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses it reversed
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), env.out);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    PrintError(env, fmt::format("{}: {}", command, ParseErrorText(e)));
    return kExitUsage;
  }
  return std::nullopt;
}

bool GaveJson(const CLI::App& app) {
  if (const CLI::Option* json = app.get_option_no_throw("--json"); json && json->count() > 0)
    return true;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return s->parsed(); })) {
    if (GaveJson(*sub)) return true;
  }
  return false;
}

namespace {

// The last resort: an exception no code below caught (each command catches the ones it
// expects; docs/style.md rule 8) ends the command with one line and kExitInternal, never with
// std::terminate's abort (exit 134 and two lines). `command` names it in the line.
template <typename Run>
int CatchingEverything(std::string_view command, Run&& run) {
  const CliEnv env{"/", stdout, stderr, {}};
  try {
    return run();
  } catch (const std::exception& e) {
    PrintError(env, TrFormat("{}: internal error: {}", command, e.what()));
  } catch (...) {
    PrintError(env, TrFormat("{}: internal error: an unknown exception", command));
  }
  return kExitInternal;
}

// A command: its flags defined and parsed (--help and a parse error are printed in the user's
// language), then the configuration read once and the command run. A broken configuration
// file or variable stops every command but `config` (which shows what is wrong); --help works
// without one. --json output is data: from the parse on the whole command speaks English, so
// the same command gives the same bytes in every language (words after `--` belong to a job,
// and CLI11 leaves them to it).
int RunSubcommandOrThrow(const Subcommand& c, const std::filesystem::path& default_root,
                         const std::vector<std::string>& args) {
  CliEnv env{default_root, stdout, stderr, {}};
  const std::unique_ptr<CommandFlags> flags = c.define();
  if (auto status = ParseFlags(flags->App(), env, c.name, args)) {
    return *status == kExitUsage ? flags->UsageStatus() : *status;
  }
  if (GaveJson(flags->App())) UseEnglishMessages();
  env.config = LoadConfig(std::getenv);
  if (!env.config.errors.empty() && c.name != "config") {
    PrintError(env, env.config.errors.front());
    return flags->UsageStatus();
  }
  return c.run(env, *flags);
}

}  // namespace

int RunSubcommand(const Subcommand& c, const std::filesystem::path& default_root,
                  const std::vector<std::string>& args) {
  return CatchingEverything(c.name, [&] { return RunSubcommandOrThrow(c, default_root, args); });
}

// Where the message catalogs are: beside the binary in a build tree (build/locale), or
// ../share/locale from an installed bin/ (PREFIX/share/locale). Relative to the binary, so an
// installed tree can be moved and a build tree needs no install step.
std::string FindLocaleDir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const std::filesystem::path dir = exe.parent_path();
  for (const auto& candidate : {dir / "locale", dir.parent_path() / "share" / "locale"}) {
    if (std::filesystem::is_directory(candidate, ec)) return candidate.string();
  }
  return {};
}

void PrintUsage(std::FILE* out, std::span<const Subcommand> commands) {
  std::fprintf(out, "%s\n\n%s\n\n%s\n",
               TrFormat("headroom {}: keeps long ML training jobs alive on unified-memory machines",
                        std::string(HeadroomVersion()))
                   .c_str(),
               // TRANSLATORS: keep "headroom <command> [options]" and "--help" as they are.
               Tr("usage: headroom <command> [options]   (headroom help <command>, or headroom "
                  "<command> --help)"),
               Tr("commands:"));
  for (const auto& c : commands) {
    // The summaries are NUL-terminated literals (N_ in main.cc), translated here.
    std::fprintf(out, "  %-10s %s\n", std::string(c.name).c_str(), Tr(c.summary.data()));
  }
  std::fprintf(out, "\n%s\n",
               Tr("exit status: 0 success, 1 a negative answer (e.g. does not fit), 2 usage or "
                  "input error"));
}

int RunCli(std::span<const Subcommand> commands, int argc, char** argv) {
  if (const std::string dir = FindLocaleDir(); !dir.empty()) InitMessages(dir);
  if (argc < 2) {
    PrintUsage(stderr, commands);
    return kExitUsage;
  }
  const std::string_view first = argv[1];
  if (first == "--help" || first == "-h") {
    const CliEnv env{"/", stdout, stderr, LoadConfig(std::getenv)};
    PrintUsage(stdout, commands);
    for (const auto& e : env.config.errors) PrintError(env, e);
    return kExitOk;
  }
  if (first == "help") {
    const CliEnv env{"/", stdout, stderr, LoadConfig(std::getenv)};
    return CatchingEverything("help", [&] {
      return RunHelpCommand(env, commands, std::vector<std::string>(argv + 2, argv + argc));
    });
  }
  if (first == "--version" || first == "-V") {
    std::printf("headroom %s (git %s)\n", std::string(HeadroomVersion()).c_str(),
                std::string(GitRevision()).c_str());
    return kExitOk;
  }
  for (const auto& c : commands) {
    if (c.name == first)
      return RunSubcommand(c, "/", std::vector<std::string>(argv + 2, argv + argc));
  }
  const CliEnv env{"/", stdout, stderr, {}};
  PrintError(env, TrFormat("unknown command '{}' (see headroom --help)", first));
  return kExitUsage;
}

}  // namespace headroom

namespace headroom {

uint64_t SizeOrPercentFlag(const std::string& text, uint64_t total, std::string_view flag) {
  if (!text.empty() && text.back() == '%') {
    char* end = nullptr;
    const std::string num = text.substr(0, text.size() - 1);
    const double pct = std::strtod(num.c_str(), &end);
    if (num.empty() || end != num.c_str() + num.size() || !(pct > 0) || pct >= 100) {
      throw UsageError{TrFormat("{}: '{}' is not a percentage in (0, 100)", flag, text)};
    }
    return static_cast<uint64_t>(pct / 100.0 * static_cast<double>(total));
  }
  auto r = ParseBytes(text);
  if (!r) throw UsageError{fmt::format("{}: {}", flag, TranslatedText(r.error().what))};
  return *r;
}

void WriteFileAtomically(const std::string& path, const std::string& text, std::string_view flag,
                         std::span<const std::string> inputs) {
  if (auto e = ReplaceFile(path, text, inputs))
    throw UsageError{fmt::format("{}: {}", flag, TranslatedText(e->what))};
}

int StatusAfterWrites(const CliEnv& env, std::string_view command, int status,
                      std::initializer_list<const DurableLines*> files) {
  const std::optional<Error> lost = FirstWriteError(files);
  if (!lost) return status;
  PrintError(env, fmt::format("{}: {}", command, TranslatedText(lost->what)));
  return status == kExitOk ? kExitUsage : status;
}

void CheckOutputFlag(const std::string& path, std::string_view flag,
                     std::span<const std::string> inputs) {
  if (auto e = CheckOutputPath(path, inputs))
    throw UsageError{fmt::format("{}: {}", flag, TranslatedText(e->what))};
}

}  // namespace headroom
