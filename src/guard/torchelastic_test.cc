// torchrun's error files (guard/torchelastic.h): found in a worker's environment, written in
// the shape torch's ErrorHandler writes and ProcessFailure reads, never over an existing one.
#include "guard/torchelastic.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace headroom {
namespace {

TEST(Torchelastic, FindsTheErrorFileInAnEnvironment) {
  using std::string_literals::operator""s;
  EXPECT_EQ(TorchelasticErrorFileIn("A=1\0TORCHELASTIC_ERROR_FILE=/tmp/x/error.json\0B=2\0"s),
            "/tmp/x/error.json");
  EXPECT_EQ(TorchelasticErrorFileIn("TORCHELASTIC_ERROR_FILE=/e"s), "/e");  // no final NUL
  EXPECT_FALSE(TorchelasticErrorFileIn("TORCHELASTIC_ERROR_FILE=\0"s));
  EXPECT_FALSE(TorchelasticErrorFileIn("XTORCHELASTIC_ERROR_FILE=/e\0"s));
  EXPECT_FALSE(TorchelasticErrorFileIn(""));
}

TEST(Torchelastic, ReadsItFromAProcessEnvironment) {
  ::setenv("TORCHELASTIC_ERROR_FILE", "/tmp/headroom-test-error.json", 1);
  // /proc/self/environ is the environment at exec: a child shows the variable.
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sleep", "sleep", "5", nullptr);
    ::_exit(127);
  }
  ::unsetenv("TORCHELASTIC_ERROR_FILE");
  std::optional<std::string> found;
  for (int i = 0; i < 200 && !found; ++i) {
    found = TorchelasticErrorFileOf(SysRoot("/"), pid);
    if (!found) ::usleep(5000);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  EXPECT_EQ(found, "/tmp/headroom-test-error.json");
}

TEST(Torchelastic, WritesTheShapeTorchrunReadsOnceAndNeverThroughALink) {
  char dir[] = "/tmp/hr-torchelastic-XXXXXX";
  ASSERT_TRUE(::mkdtemp(dir));
  const std::string path = std::string(dir) + "/error.json";
  const std::string json = TorchelasticErrorJson("node 1: out of \"unified\" memory", 1700000000);
  ASSERT_TRUE(WriteTorchelasticErrorFile(path, json).value());
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  // ProcessFailure._get_error_data: message is a dict, its timestamp an int-able string;
  // ChildFailedError shows extraInfo.py_callstack.
  EXPECT_EQ(j["message"]["message"], "node 1: out of \"unified\" memory");
  EXPECT_EQ(j["message"]["extraInfo"]["py_callstack"], "node 1: out of \"unified\" memory");
  EXPECT_EQ(j["message"]["extraInfo"]["timestamp"], "1700000000");
  EXPECT_FALSE(WriteTorchelasticErrorFile(path, "{}").value());  // the first one stays
  const std::string link = std::string(dir) + "/link.json";
  ASSERT_EQ(::symlink("/tmp/hr-should-not-exist", link.c_str()), 0);
  EXPECT_FALSE(WriteTorchelasticErrorFile(link, "{}").value());  // a link is "there"
  struct stat st {};
  EXPECT_NE(::stat("/tmp/hr-should-not-exist", &st), 0);
  EXPECT_FALSE(WriteTorchelasticErrorFile(std::string(dir) + "/no/such/dir/e.json", "{}"));
  std::remove(path.c_str());
  std::remove(link.c_str());
  ::rmdir(dir);
}

}  // namespace
}  // namespace headroom
