// Man pages and shell completions made from the same CLI11 apps that print --help, so the
// three cannot drift apart.
//
// The seam: every row of the subcommand table has its command's Define function (cli.h),
// which builds the CLI::App and runs nothing. `headroom help --man` and `headroom help
// --completion` call each one, read the app as data (AppSpec below) and render roff or shell
// code; the build does it for the package (CMakeLists.txt: build/man, build/completions).
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.h"

namespace CLI {
class App;
}

namespace headroom {

// An app as data: {"name", "description", "footer", "options": [{"names": ["-o", "--out"],
// "positional", "value": bool, "type": "TEXT", "description", "required", "repeatable"}],
// "subcommands": [...]} with the help flag left out.
nlohmann::json AppSpec(const CLI::App& app);

// One command's spec and its row of the subcommand table.
struct CommandDoc {
  std::string name;     // "plan"
  std::string summary;  // the table's one-line summary, in the language of the messages
  nlohmann::json spec;  // AppSpec of its app
};

// Each command's definition (its Define, nothing run) as docs.
std::vector<CommandDoc> CollectCommandDocs(std::span<const Subcommand> commands);

// The man page of one command, headroom-NAME(1). `date` goes into .TH ("2026-12-01").
std::string RenderCommandManPage(const CommandDoc& doc, std::string_view version,
                                 std::string_view date);

// headroom(1): the command list, exit statuses, environment, files, and the per-command pages.
std::string RenderMainManPage(std::span<const CommandDoc> docs, std::string_view version,
                              std::string_view date);

// A bash completion script (for bash-completion's completions/ directory, or `source`).
std::string RenderBashCompletion(std::span<const CommandDoc> docs,
                                 std::span<const std::string> model_names);

// A zsh completion function file (_headroom, for a directory on $fpath).
std::string RenderZshCompletion(std::span<const CommandDoc> docs,
                                std::span<const std::string> model_names);

// Escapes text for roff: backslashes, leading dots and quotes, and '-' as \- where it
// means a minus or an option dash.
std::string RoffEscape(std::string_view text);

// RoffEscape for running text, with a zero-width break point (\:) after each CJK character
// that a line may end at: groff finds no spaces in Chinese to break a line at, and would
// run it past the page's width ("can't break line"). No break point comes before closing
// punctuation (，。）...) or after opening punctuation (（「...).
std::string RoffText(std::string_view text);

}  // namespace headroom
