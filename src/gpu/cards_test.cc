#include "gpu/cards.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

TEST(GpuCards, NamesFoldCaseBlanksAndDashes) {
  ASSERT_NE(FindGpuCard("h200"), nullptr);
  EXPECT_EQ(FindGpuCard("H200")->memory_bytes, 141'000'000'000ULL);
  EXPECT_EQ(FindGpuCard("a100_40gb")->memory_bytes, 40'000'000'000ULL);
  EXPECT_EQ(FindGpuCard("A100")->memory_bytes, 80'000'000'000ULL);
  EXPECT_EQ(FindGpuCard("rtx5090")->memory_bytes, 32'000'000'000ULL);
  EXPECT_EQ(FindGpuCard("l40s")->memory_bytes, 48'000'000'000ULL);
  EXPECT_EQ(FindGpuCard(""), nullptr);
  EXPECT_EQ(FindGpuCard("h300"), nullptr);
}

}  // namespace
}  // namespace headroom
