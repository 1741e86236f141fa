// `headroom help COMMAND`, the man pages and both completions are made from the commands'
// definitions (a row's Define, with nothing run), so a flag added to a definition appears in
// all of them. The real commands' pages are checked against their --help through the binary
// (tests/cli/help_cli_test.cc).
#include "cli/help_docs.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "base/version.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/completion.h"
#include "cli/man_page.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::Contains;

struct FakeFlags final : CommandFlags {
  CLI::App app{"A command for the test.\n\nexit status: 0 always", "headroom fake"};
  std::string root, journal, added;
  bool json = false;
  CLI::App* sub = nullptr;
  std::string sub_added;
  CLI::App& App() override { return app; }
};

int runs = 0;

std::unique_ptr<CommandFlags> DefineFake() {
  auto f = std::make_unique<FakeFlags>();
  AddRootFlag(f->app, f->root);
  AddJournalFlag(f->app, f->journal);
  AddJsonFlag(f->app, f->json);
  f->app.add_option("--added-to-the-definition", f->added, "a flag only the definition names");
  f->sub = f->app.add_subcommand("part", "a subcommand");
  f->sub->add_option("--added-to-the-part", f->sub_added, "a flag of the subcommand");
  return f;
}

int RunFake(const CliEnv&, CommandFlags&) {
  ++runs;
  return 0;
}

constexpr Subcommand kFake[] = {{"fake", "a command for the test", DefineFake, RunFake}};

// What RunHelpCommand prints for `args`, and its status.
std::pair<int, std::string> Help(const std::vector<std::string>& args) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  CliEnv env;
  env.out = out;
  const int status = RunHelpCommand(env, kFake, args);
  std::fclose(out);
  std::string text(buffer, size);
  std::free(buffer);
  return {status, text};
}

TEST(HelpDocs, EveryPageAndCompletionListsTheDefinitionsFlags) {
  runs = 0;
  const auto docs = CollectCommandDocs(kFake);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0].name, "fake");
  const std::string man = RenderCommandManPage(docs[0], "0.0", "2026-01-01");
  const std::string bash = RenderBashCompletion(docs, {});
  const std::string zsh = RenderZshCompletion(docs, {});
  const auto [status, help] = Help({"fake"});
  EXPECT_EQ(status, 0);
  for (const std::string flag :
       {"--root", "--journal", "--json", "--added-to-the-definition", "--added-to-the-part"}) {
    std::string roff;
    for (char c : flag) roff += c == '-' ? std::string("\\-") : std::string(1, c);
    EXPECT_TRUE(Contains(man, "\\fB" + roff + "\\fR")) << flag << "\n" << man;
    EXPECT_TRUE(Contains(bash, flag)) << flag;
    EXPECT_TRUE(Contains(zsh, flag)) << flag;
    if (flag != "--added-to-the-part") {
      EXPECT_TRUE(Contains(help, flag)) << flag << "\n" << help;
    }
  }
  EXPECT_TRUE(Contains(help, "a flag only the definition names")) << help;
  EXPECT_TRUE(Contains(man, "a flag only the definition names")) << man;
  EXPECT_TRUE(Contains(zsh, "a flag only the definition names")) << zsh;
  EXPECT_EQ(Help({"--man", "fake", "--date", "2026-01-01"}).second, [] {
    const auto d = CollectCommandDocs(kFake);
    return RenderCommandManPage(d[0], HeadroomVersion(), "2026-01-01");
  }());
  // Defining is all it takes: no command ran.
  EXPECT_EQ(runs, 0);
}

TEST(HelpDocs, ManDirFilesAreTheMainPageThenOnePerCommand) {
  const auto docs = CollectCommandDocs(kFake);
  const auto all = ManPageFiles(docs, /*with_main=*/true, "0.0", "2026-01-01");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "headroom.1");
  EXPECT_EQ(all[0].text, RenderMainManPage(docs, "0.0", "2026-01-01"));
  EXPECT_EQ(all[1].name, "headroom-fake.1");
  EXPECT_EQ(all[1].text, RenderCommandManPage(docs[0], "0.0", "2026-01-01"));
  const auto one = ManPageFiles(docs, /*with_main=*/false, "0.0", "2026-01-01");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].name, "headroom-fake.1");
}

TEST(HelpDocs, CompletionForAShellCompletesPlansModels) {
  const auto docs = CollectCommandDocs(kFake);
  const std::string bash = RenderCompletion("bash", docs);
  const std::string zsh = RenderCompletion("zsh", docs);
  EXPECT_TRUE(bash.starts_with("# bash completion for headroom")) << bash;
  EXPECT_TRUE(zsh.starts_with("#compdef headroom")) << zsh;
  EXPECT_TRUE(Contains(bash, "llama-3.1-8b")) << bash;
}

TEST(HelpDocs, AValuesKindIsDecidedByTheOptionsName) {
  EXPECT_EQ(ValueKindOf("--journal"), ValueKind::kFile);
  EXPECT_EQ(ValueKindOf("-o"), ValueKind::kFile);
  EXPECT_EQ(ValueKindOf("--root"), ValueKind::kDirectory);
  EXPECT_EQ(ValueKindOf("--logs"), ValueKind::kDirectory);
  EXPECT_EQ(ValueKindOf("--interval"), ValueKind::kValue);
  const auto docs = CollectCommandDocs(kFake);
  const std::string man = RenderCommandManPage(docs[0], "0.0", "2026-01-01");
  EXPECT_TRUE(Contains(man, "\\fB\\-\\-root\\fR \\fIDIR\\fR")) << man;
  EXPECT_TRUE(Contains(man, "\\fB\\-\\-journal\\fR \\fIFILE\\fR")) << man;
  EXPECT_TRUE(Contains(man, "\\fB\\-\\-added\\-to\\-the\\-definition\\fR \\fIVALUE\\fR")) << man;
  const std::string zsh = RenderZshCompletion(docs, {});
  EXPECT_TRUE(Contains(zsh, "'--root[")) << zsh;
  EXPECT_TRUE(Contains(zsh, ":directory:_files -/'")) << zsh;
  EXPECT_TRUE(Contains(zsh, ":file:_files'")) << zsh;
}

}  // namespace
}  // namespace headroom
