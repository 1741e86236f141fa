// headroom help: a command's --help by name, and the man pages and shell completions the
// package installs, rendered from the commands' own CLI11 apps (cli/help_docs.h).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <memory>

#include "base/version.h"
#include "cli/cli.h"
#include "cli/completion.h"
#include "cli/help_docs.h"
#include "cli/i18n.h"
#include "cli/man_page.h"

namespace headroom {
namespace {

// Today (UTC) as YYYY-MM-DD, or SOURCE_DATE_EPOCH's day for reproducible builds.
std::string ManDate(const std::string& flag) {
  if (!flag.empty()) return flag;
  std::time_t t = std::time(nullptr);
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"); epoch != nullptr && *epoch != '\0') {
    t = static_cast<std::time_t>(std::strtoll(epoch, nullptr, 10));
  }
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

void WriteOrPrint(const CliEnv& env, const std::string& out_path, const std::string& text) {
  if (out_path.empty()) {
    std::fputs(text.c_str(), env.out);
  } else {
    WriteFileAtomically(out_path, text, "-o");
  }
}

// help's flags: what the user asked for.
struct HelpRequest {
  std::string command, completion, man_dir, out_path, date;
  bool man = false;
};

void DefineHelpFlags(CLI::App& app, HelpRequest& r) {
  app.add_option("command", r.command, Tr("the command (default: the list of commands)"));
  app.add_flag("--man", r.man, Tr("print the man page (roff) of COMMAND, or headroom(1)"));
  app.add_option("--man-dir", r.man_dir,
                 Tr("write headroom.1 and headroom-COMMAND.1 for every command into DIR"));
  app.add_option("--completion", r.completion,
                 Tr("print the completion script for this shell: bash or zsh"));
  app.add_option("-o,--out", r.out_path, Tr("write to FILE instead of standard output"));
  app.add_option(
      "--date", r.date,
      Tr("the date on the man pages, YYYY-MM-DD (default: SOURCE_DATE_EPOCH, else today)"));
}

// The command named (null: none), after the usage errors: an unknown command, more than one
// mode, a mode given what it does not take; --man-dir's directory is made here.
const Subcommand* CheckRequest(std::span<const Subcommand> commands, const HelpRequest& r) {
  const Subcommand* target = nullptr;
  if (!r.command.empty()) {
    const auto found = std::ranges::find(commands, r.command, &Subcommand::name);
    if (found == commands.end())
      throw UsageError{TrFormat("unknown command '{}' (see headroom --help)", r.command)};
    target = &*found;
  }
  const int modes =
      (r.man ? 1 : 0) + (!r.man_dir.empty() ? 1 : 0) + (!r.completion.empty() ? 1 : 0);
  if (modes > 1) throw UsageError{Tr("give one of --man, --man-dir and --completion")};
  if (!r.completion.empty()) {
    if (target != nullptr)
      throw UsageError{Tr("--completion covers every command: give no COMMAND")};
    if (r.completion != "bash" && r.completion != "zsh") {
      throw UsageError{TrFormat("--completion: '{}' is not bash or zsh", r.completion)};
    }
  }
  if (!r.man_dir.empty()) {
    if (!r.out_path.empty())
      throw UsageError{Tr("--man-dir writes several files: -o does not apply")};
    std::error_code ec;
    std::filesystem::create_directories(r.man_dir, ec);
    if (ec) throw UsageError{TrFormat("--man-dir: cannot create {}: {}", r.man_dir, ec.message())};
  }
  return target;
}

// The command's --help (its definitions parsed with --help, nothing run), or the list.
int ShowHelp(const CliEnv& env, std::span<const Subcommand> commands, const Subcommand* target) {
  if (target == nullptr) {
    PrintUsage(env.out, commands);
    return kExitOk;
  }
  const std::unique_ptr<CommandFlags> flags = target->define();
  return ParseFlags(flags->App(), env, target->name, {"--help"}).value_or(kExitOk);
}

// --man: one page on stdout or -o; --man-dir: the pages into the directory.
void WriteManPages(const CliEnv& env, std::span<const Subcommand> commands,
                   const Subcommand* target, const HelpRequest& r) {
  const std::string day = ManDate(r.date);
  const auto docs = CollectCommandDocs(target != nullptr ? std::span(target, 1) : commands);
  if (r.man) {
    WriteOrPrint(env, r.out_path,
                 target != nullptr ? RenderCommandManPage(docs.front(), HeadroomVersion(), day)
                                   : RenderMainManPage(docs, HeadroomVersion(), day));
    return;
  }
  for (const auto& [name, text] : ManPageFiles(docs, target == nullptr, HeadroomVersion(), day))
    WriteFileAtomically((std::filesystem::path(r.man_dir) / name).string(), text, "--man-dir");
}

}  // namespace

int RunHelpCommand(const CliEnv& env, std::span<const Subcommand> commands,
                   const std::vector<std::string>& args) {
  HelpRequest request;
  CLI::App app{Tr("Show a command's help, or write the man pages and shell completions the "
                  "package installs (they are made from the same definitions as --help, so they "
                  "cannot disagree with it).\n\n"
                  "  headroom help [COMMAND]\n"
                  "  headroom help --man [COMMAND] [-o FILE]\n"
                  "  headroom help --man-dir DIR\n"
                  "  headroom help --completion bash|zsh [-o FILE]\n\n"
                  "exit status: 0 shown or written, 2 usage error (an unknown command)"),
               "headroom help"};
  DefineHelpFlags(app, request);
  if (auto status = ParseFlags(app, env, "help", args)) return *status;
  try {
    const Subcommand* target = CheckRequest(commands, request);
    // The usage errors, the man pages in the user's language (the build writes a set per
    // language: cmake/generate_docs.cmake); the completions in English, since one script
    // serves every user of the machine.
    if (!request.completion.empty()) {
      WriteOrPrint(env, request.out_path,
                   RenderCompletion(request.completion, CollectCommandDocs(commands)));
    } else if (request.man || !request.man_dir.empty()) {
      WriteManPages(env, commands, target, request);
    } else {
      return ShowHelp(env, commands, target);
    }
    return kExitOk;
  } catch (const UsageError& e) {
    PrintError(env, "help: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
