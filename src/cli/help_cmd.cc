// headroom help: a command's --help by name, and the man pages and shell completions the
// package installs, rendered from the commands' own CLI11 apps (cli/help_docs.h).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <memory>

#include "base/version.h"
#include "cli/cli.h"
#include "cli/help_docs.h"
#include "cli/i18n.h"
#include "model/catalog.h"

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

const Subcommand* FindCommand(std::span<const Subcommand> commands, std::string_view name) {
  for (const auto& c : commands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::vector<std::string> ModelNames() {
  std::vector<std::string> names;
  for (const auto& m : Catalog()) names.push_back(m.name);
  return names;
}

void WriteOrPrint(const CliEnv& env, const std::string& out_path, const std::string& text) {
  if (out_path.empty()) {
    std::fputs(text.c_str(), env.out);
  } else {
    WriteFileAtomically(out_path, text, "-o");
  }
}

}  // namespace

int RunHelpCommand(const CliEnv& env, std::span<const Subcommand> commands,
                   const std::vector<std::string>& args) {
  std::string command, completion, man_dir, out_path, date;
  bool man = false;
  CLI::App app{Tr("Show a command's help, or write the man pages and shell completions the package "
                  "installs (they are made from the same definitions as --help, so they cannot "
                  "disagree with it).\n\n"
                  "  headroom help [COMMAND]\n"
                  "  headroom help --man [COMMAND] [-o FILE]\n"
                  "  headroom help --man-dir DIR\n"
                  "  headroom help --completion bash|zsh [-o FILE]\n\n"
                  "exit status: 0 shown or written, 2 usage error (an unknown command)"),
               "headroom help"};
  app.add_option("command", command, Tr("the command (default: the list of commands)"));
  app.add_flag("--man", man, Tr("print the man page (roff) of COMMAND, or headroom(1)"));
  app.add_option("--man-dir", man_dir,
                 Tr("write headroom.1 and headroom-COMMAND.1 for every command into DIR"));
  app.add_option("--completion", completion,
                 Tr("print the completion script for this shell: bash or zsh"));
  app.add_option("-o,--out", out_path, Tr("write to FILE instead of standard output"));
  app.add_option(
      "--date", date,
      Tr("the date on the man pages, YYYY-MM-DD (default: SOURCE_DATE_EPOCH, else today)"));
  if (auto status = ParseFlags(app, env, "help", args)) return *status;
  try {
    const Subcommand* target = nullptr;
    if (!command.empty()) {
      target = FindCommand(commands, command);
      if (target == nullptr) {
        throw UsageError{TrFormat("unknown command '{}' (see headroom --help)", command)};
      }
    }
    const int modes = (man ? 1 : 0) + (!man_dir.empty() ? 1 : 0) + (!completion.empty() ? 1 : 0);
    if (modes > 1) throw UsageError{Tr("give one of --man, --man-dir and --completion")};
    if (modes == 0) {
      if (target != nullptr) {
        const std::unique_ptr<CommandFlags> flags = target->define();
        return ParseFlags(flags->App(), env, target->name, {"--help"}).value_or(kExitOk);
      }
      PrintUsage(env.out, commands);
      return kExitOk;
    }
    // The usage errors, the man pages in the user's language (the build writes a set per
    // language: cmake/generate_docs.cmake); the completions in English, since one script
    // serves every user of the machine.
    if (!completion.empty()) {
      if (target != nullptr)
        throw UsageError{Tr("--completion covers every command: give no COMMAND")};
      if (completion != "bash" && completion != "zsh") {
        throw UsageError{TrFormat("--completion: '{}' is not bash or zsh", completion)};
      }
    }
    if (!man_dir.empty()) {
      if (!out_path.empty())
        throw UsageError{Tr("--man-dir writes several files: -o does not apply")};
      std::error_code ec;
      std::filesystem::create_directories(man_dir, ec);
      if (ec) throw UsageError{TrFormat("--man-dir: cannot create {}: {}", man_dir, ec.message())};
    }
    if (!completion.empty()) {
      const auto docs = CollectCommandDocs(commands);
      const auto models = ModelNames();
      WriteOrPrint(env, out_path,
                   completion == "bash" ? RenderBashCompletion(docs, models)
                                        : RenderZshCompletion(docs, models));
      return kExitOk;
    }
    const std::string day = ManDate(date);
    const std::span<const Subcommand> selected =
        target != nullptr ? std::span<const Subcommand>(target, 1) : commands;
    const auto docs = CollectCommandDocs(selected);
    if (man) {
      WriteOrPrint(env, out_path,
                   target != nullptr ? RenderCommandManPage(docs.front(), HeadroomVersion(), day)
                                     : RenderMainManPage(docs, HeadroomVersion(), day));
      return kExitOk;
    }
    const std::filesystem::path dir(man_dir);
    if (target == nullptr) {
      WriteFileAtomically((dir / "headroom.1").string(),
                          RenderMainManPage(docs, HeadroomVersion(), day), "--man-dir");
    }
    for (const auto& doc : docs) {
      WriteFileAtomically((dir / ("headroom-" + doc.name + ".1")).string(),
                          RenderCommandManPage(doc, HeadroomVersion(), day), "--man-dir");
    }
    return kExitOk;
  } catch (const UsageError& e) {
    PrintError(env, "help: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
