// The commands' definitions read as data, for the man pages (cli/man_page.h) and the shell
// completions (cli/completion.h), so that they and --help cannot drift apart.
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

// What an option's value is, decided by the option's name: a file (completed with file
// names, FILE on a man page), a directory (--root and --logs), or anything else (a size, a
// duration: VALUE, completed with nothing, which is what bash and zsh users expect).
enum class ValueKind { kValue, kFile, kDirectory };
ValueKind ValueKindOf(std::string_view option_name);

// `words` with `sep` between them.
std::string JoinWords(std::span<const std::string> words, std::string_view sep);

}  // namespace headroom
