#include "plan/serve.h"

#include <gtest/gtest.h>

#include "base/bytes.h"
#include "model/catalog.h"

namespace headroom {
namespace {

ModelSpec Llama31_8b() {
  Message error;
  auto spec = ResolveServeModel("llama-3.1-8b", &error);
  EXPECT_TRUE(spec.has_value());
  return spec.value_or(ModelSpec{});
}

TEST(ServeNeed, KvBytesPerTokenIsTwoLayersKvHeadsHeadDimBytes) {
  ModelSpec spec;
  spec.num_layers = 32;
  spec.num_kv_heads = 8;
  spec.head_dim = 128;
  // 2 x 32 x 8 x 128 x 2 = 131,072 bytes (128 KiB) per token in bf16.
  EXPECT_EQ(KvBytesPerToken(spec, 2), 131072u);
  EXPECT_EQ(KvBytesPerToken(spec, 4), 262144u);
  spec.num_kv_heads = 2;
  spec.num_layers = 24;
  spec.head_dim = 64;
  // Qwen2.5-0.5B's shape: 2 x 24 x 2 x 64 x 2 = 12,288 bytes.
  EXPECT_EQ(KvBytesPerToken(spec, 2), 12288u);
}

TEST(ServeNeed, DtypesInCentibits) {
  EXPECT_EQ(ServeDtypeCentibits("bf16"), 1600u);
  EXPECT_EQ(ServeDtypeCentibits("fp8"), 800u);
  EXPECT_EQ(ServeDtypeCentibits("int4"), 425u);
  EXPECT_EQ(ServeDtypeCentibits("nvfp4"), 450u);
  EXPECT_FALSE(ServeDtypeCentibits("q4"));
  ModelSpec stored;
  EXPECT_EQ(ModelStoredDtype(stored), "bf16");
  stored.stored_dtype_params = {{"F16", 100}, {"F32", 3}};
  EXPECT_EQ(ModelStoredDtype(stored), "fp16");
}

TEST(ServeNeed, SmallestVllmCapRoundsUpToHundredths) {
  EXPECT_EQ(SmallestVllmCap(50, 100), 0.50);
  EXPECT_EQ(SmallestVllmCap(501, 1000), 0.51);
  EXPECT_EQ(SmallestVllmCap(1, 1000), 0.01);
  EXPECT_EQ(SmallestVllmCap(100, 100), 1.00);
  EXPECT_FALSE(SmallestVllmCap(101, 100));
  EXPECT_FALSE(SmallestVllmCap(1, 0));
}

TEST(ServeNeed, Llama8bAt8kContextFourRequests) {
  const ModelSpec spec = Llama31_8b();
  ServeRequest r{"llama-3.1-8b", 8192, 4, ServeEngine::kVllm, ""};
  const uint64_t pool = 128 * kGB;
  const ServeNeed n = ComputeServeNeed(spec, r, pool);
  EXPECT_EQ(n.dtype, "bf16");
  EXPECT_EQ(n.weight_bytes, TotalParams(spec) * 2);
  EXPECT_EQ(n.kv_bytes_per_token, 131072u);
  EXPECT_EQ(n.kv_tokens, 32768u);
  // 131,072 x 32,768 = 4 GiB of KV cache.
  EXPECT_EQ(n.kv_bytes, 4 * kGiB);
  EXPECT_EQ(n.overhead.bytes, 2 * kGiB);
  EXPECT_TRUE(n.overhead.guess);
  EXPECT_EQ(n.total_bytes, n.weight_bytes + 6 * kGiB);
  // 16.06 GB + 6.44 GB = 22.5 GB of 128 GB: 0.176 -> 0.18.
  EXPECT_EQ(n.vllm_cap, 0.18);
  EXPECT_EQ(n.held_bytes, pool / 100 * 18);

  r.engine = ServeEngine::kLlamaCpp;
  r.dtype = "int4";
  const ServeNeed q = ComputeServeNeed(spec, r, pool);
  EXPECT_EQ(q.weight_bytes, (TotalParams(spec) * 425 + 799) / 800);
  EXPECT_EQ(q.kv_bytes, 4 * kGiB);  // the KV cache stays 16-bit
  EXPECT_EQ(q.held_bytes, q.total_bytes);
}

TEST(ServeNeed, UnknownModelSaysSo) {
  Message error;
  EXPECT_FALSE(ResolveServeModel("no-such-model-xyz", &error));
  EXPECT_NE(EnglishText(error).find("no-such-model-xyz"), std::string::npos);
}

}  // namespace
}  // namespace headroom
