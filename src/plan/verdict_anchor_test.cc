// ClosestAnchor compares like with like (plan/verdict.h): the same method, a model within
// kAnchorParamFactor of the anchor's size, else no anchor.
#include <gtest/gtest.h>

#include "model/catalog.h"
#include "plan/verdict.h"

namespace headroom {
namespace {

// An 8B LoRA has no anchor (the nearest LoRA anchor is a 27B), nor does a 70B full fine-tune
// (the full anchor is a 9B), nor a 70B LoRA beside the 70B QLoRA anchor.
TEST(Anchors, NoneUnlessTheSameMethodAndWithinTwiceTheSize) {
  Workload lora;
  EXPECT_EQ(ClosestAnchor(*FindModel("llama-3.1-8b"), lora, 1, {}).anchor, nullptr);
  EXPECT_EQ(ClosestAnchor(*FindModel("llama-3.1-70b"), lora, 1, {}).anchor, nullptr);
  Workload full;
  full.method = Method::kFull;
  EXPECT_EQ(ClosestAnchor(*FindModel("llama-3.1-70b"), full, 1, {}).anchor, nullptr);
  EXPECT_EQ(ClosestAnchor(*FindModel("qwen2.5-3b"), full, 1, {}).anchor, nullptr);  // 9B / 3.1B
  // Within the factor either way: a 14B LoRA is anchored to the 27B one (1.86x).
  const AnchorMatch m14 = ClosestAnchor(*FindModel("qwen2.5-14b"), lora, 1, {});
  ASSERT_NE(m14.anchor, nullptr);
  EXPECT_EQ(m14.anchor->id, "27b-lora-1024");
  EXPECT_EQ(kAnchorParamFactor, 2.0);
}

}  // namespace
}  // namespace headroom
