#include "guard/python_flags.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace headroom {
namespace {

std::optional<std::string> Flag(std::vector<std::string> command) {
  return PythonFlagSkippingHooks(command);
}

TEST(PythonFlags, FindsTheFlagsThatSkipTheSitecustomize) {
  EXPECT_EQ(Flag({"python3", "-S", "train.py"}), "-S");
  EXPECT_EQ(Flag({"python", "-E", "train.py"}), "-E");
  EXPECT_EQ(Flag({"/usr/bin/python3.11", "-I", "-c", "pass"}), "-I");
  EXPECT_EQ(Flag({"python3", "-IS", "train.py"}), "-I");  // clustered, the first one
  EXPECT_EQ(Flag({"python3", "-uS", "train.py"}), "-S");
  EXPECT_EQ(Flag({"python3", "-Ic", "pass"}), "-I");  // before -c's code
  EXPECT_EQ(Flag({"python3", "-u", "-O", "-E", "-m", "torch.distributed.run"}), "-E");
  EXPECT_EQ(Flag({"env", "A=1", "B=2", "python3", "-I", "x.py"}), "-I");
  EXPECT_EQ(Flag({"/usr/bin/env", "python3", "-S", "x.py"}), "-S");
  // Values of -W, -X and --check-hash-based-pycs are not flags.
  EXPECT_EQ(Flag({"python3", "-W", "ignore", "-S", "x.py"}), "-S");
  EXPECT_EQ(Flag({"python3", "-X", "dev", "-I", "x.py"}), "-I");
  EXPECT_EQ(Flag({"python3", "--check-hash-based-pycs", "never", "-E", "x.py"}), "-E");
}

TEST(PythonFlags, IgnoresWhatIsNotTheInterpretersOwn) {
  EXPECT_EQ(Flag({"python3", "train.py", "-S"}), std::nullopt);  // the script's argument
  EXPECT_EQ(Flag({"python3", "-c", "pass", "-I"}), std::nullopt);
  EXPECT_EQ(Flag({"python3", "-m", "pkg", "-E"}), std::nullopt);
  EXPECT_EQ(Flag({"python3", "-cS"}), std::nullopt);          // -c's code is "S"
  EXPECT_EQ(Flag({"python3", "-WS", "x.py"}), std::nullopt);  // -W's value is "S"
  EXPECT_EQ(Flag({"python3", "-X", "S", "x.py"}), std::nullopt);
  EXPECT_EQ(Flag({"python3", "-", "-S"}), std::nullopt);  // stdin's program
  EXPECT_EQ(Flag({"python3", "--", "-S"}), std::nullopt);
  EXPECT_EQ(Flag({"python3", "-u", "train.py"}), std::nullopt);
  EXPECT_EQ(Flag({"torchrun", "-S", "train.py"}), std::nullopt);  // not an interpreter
  EXPECT_EQ(Flag({"pythonista", "-S"}), std::nullopt);
  EXPECT_EQ(Flag({"sh", "-c", "python3 -S x.py"}), std::nullopt);
  EXPECT_EQ(Flag({"env", "python3"}), std::nullopt);
  EXPECT_EQ(Flag({"env"}), std::nullopt);
  EXPECT_EQ(Flag({}), std::nullopt);
  EXPECT_EQ(Flag({"python3", "-W"}), std::nullopt);  // a value missing: nothing read past it
}

}  // namespace
}  // namespace headroom
