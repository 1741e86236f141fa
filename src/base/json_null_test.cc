#include "base/json_null.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace headroom {
namespace {

TEST(JsonNull, AValueIsWrittenAndAMissingOneIsNull) {
  EXPECT_EQ(OrNull(std::optional<uint64_t>(0)).dump(), "0");  // 0 is a value, not "missing"
  EXPECT_EQ(OrNull(std::optional<double>()).dump(), "null");
  EXPECT_EQ(OrNull(std::optional<std::string>("x")).dump(), "\"x\"");
  const nlohmann::json plain = OrNull<nlohmann::json>(std::optional<int>(-3));
  EXPECT_EQ(plain.dump(), "-3");
}

}  // namespace
}  // namespace headroom
