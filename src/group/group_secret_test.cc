#include "group/group_secret.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <set>
#include <string>

#include "testing_files.h"

namespace headroom::group {
namespace {

std::string SecretWhy(const Result<std::string>& r) { return r ? "" : EnglishText(r.error().what); }

TEST(GroupSecret, ReadsAnOwnerOnlyFileDroppingOneNewline) {
  testing::TempDir dir;
  const std::string path = dir.File("secret");
  testing::WriteFile(path, "0123456789abcdef0123\n");
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  const auto secret = ReadGroupSecretFile(path);
  ASSERT_TRUE(secret.ok()) << SecretWhy(secret);
  EXPECT_EQ(*secret, "0123456789abcdef0123");
  ASSERT_EQ(chmod(path.c_str(), 0400), 0);
  EXPECT_TRUE(ReadGroupSecretFile(path).ok());
}

TEST(GroupSecret, RefusesAFileGroupOrOthersCanRead) {
  testing::TempDir dir;
  const std::string path = dir.File("secret");
  testing::WriteFile(path, "0123456789abcdef0123\n");
  for (const mode_t mode : {0640, 0604, 0620, 0644}) {
    ASSERT_EQ(chmod(path.c_str(), mode), 0);
    EXPECT_EQ(SecretWhy(ReadGroupSecretFile(path)).find(path + ": mode 0"), 0u) << std::oct << mode;
  }
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  EXPECT_EQ(SecretWhy(ReadGroupSecretFile(path)),
            path + ": mode 0644 lets group or others at the group secret: chmod 600 it");
}

TEST(GroupSecret, RefusesShortEmptyMissingAndNonRegular) {
  testing::TempDir dir;
  const std::string path = dir.File("secret");
  testing::WriteFile(path, "short\n");
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  EXPECT_EQ(SecretWhy(ReadGroupSecretFile(path)), path + ": group secret: shorter than 16 bytes");
  testing::WriteFile(path, "");
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  EXPECT_FALSE(ReadGroupSecretFile(path).ok());
  EXPECT_FALSE(ReadGroupSecretFile(dir.File("missing")).ok());
  EXPECT_FALSE(ReadGroupSecretFile(dir.path().string()).ok());  // a directory
  const std::string fifo = dir.File("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(ReadGroupSecretFile(fifo).ok());  // refused, never waits for a writer
  const std::string big = dir.File("big");
  testing::WriteFile(big, std::string(5000, 'k'));
  ASSERT_EQ(chmod(big.c_str(), 0600), 0);
  EXPECT_EQ(SecretWhy(ReadGroupSecretFile(big)), big + ": group secret: longer than 4096 bytes");
}

TEST(GroupSecret, ValueFromTheEnvironmentIsChecked) {
  EXPECT_EQ(*GroupSecretFromValue("0123456789abcdef\n", "HEADROOM_GROUP_SECRET"),
            "0123456789abcdef");
  EXPECT_EQ(SecretWhy(GroupSecretFromValue("", "HEADROOM_GROUP_SECRET")),
            "HEADROOM_GROUP_SECRET: group secret: shorter than 16 bytes");
}

TEST(GroupSecret, GeneratedSecretsAreHexAndDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 8; ++i) {
    const auto secret = GenerateGroupSecret();
    ASSERT_TRUE(secret.ok());
    EXPECT_EQ(secret->size(), 64u);
    EXPECT_EQ(secret->find_first_not_of("0123456789abcdef"), std::string::npos);
    seen.insert(*secret);
  }
  EXPECT_EQ(seen.size(), 8u);
}

}  // namespace
}  // namespace headroom::group
