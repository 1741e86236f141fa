// The programs the tests start speak English, whatever the shell that runs headroom_test
// says (LANG=zh_TW.UTF-8, LANGUAGE=zh_TW would translate what the English suites read): the
// test process gets LC_ALL=C and loses LANGUAGE before any test runs, so every child
// inherits them, those of RunCli and RunProgram (run_cli.h) and those the tests fork, popen
// or std::system themselves. gettext ignores LANGUAGE under the C locale; it is removed all
// the same, for a child that sets LC_ALL to a UTF-8 locale. A test of another language sets
// its own variables for its child (tests/cli/i18n_cli.h: Locale removes LC_ALL, LC_MESSAGES and
// LANGUAGE, then sets LANG). The tests ctest runs outside headroom_test get LC_ALL=C from it
// (CMakeLists.txt).
//
// The test process itself never calls InitMessages, so its own Tr() answers English, except
// on a thread that asks for the catalog (tests/support/testing_messages.h: newlocale, not the
// environment).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "run_cli.h"

namespace headroom {
namespace {

class EnglishChildren : public ::testing::Environment {
 public:
  void SetUp() override {
    ::setenv("LC_ALL", "C", 1);
    ::unsetenv("LANGUAGE");
  }
};

[[maybe_unused]] ::testing::Environment* const kEnglishChildren =
    ::testing::AddGlobalTestEnvironment(new EnglishChildren);

TEST(EnglishChildren, ChildrenGetTheCLocaleUnlessATestSetsItsOwn) {
  const auto plain =
      testing::RunProgram({"sh", "-c", "echo \"${LC_ALL-unset}/${LANGUAGE-unset}\""});
  EXPECT_EQ(plain.out, "C/unset\n");
  // glibc's putenv("NAME") unsets NAME: how a test clears the default for its child.
  const auto own = testing::RunProgram({"sh", "-c", "echo \"${LC_ALL-unset}/$LANG\""}, 20000,
                                       {"LC_ALL", "LANG=zh_TW.UTF-8"});
  EXPECT_EQ(own.out, "unset/zh_TW.UTF-8\n");
}

TEST(EnglishChildren, TheBinaryIsEnglishEvenWithLangSet) {
  // LANG alone loses to the inherited LC_ALL=C: a test must clear LC_ALL to change language.
  const auto r = testing::RunCli({"--help"}, 20000, {"LANG=zh_TW.UTF-8", "LANGUAGE=zh_TW"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("commands:"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace headroom
