#include "plan/beside.h"

#include <gtest/gtest.h>

#include "base/bytes.h"

namespace headroom {
namespace {

constexpr uint64_t kTotal = 128 * kGB;

BesideCap Parse(std::string_view text) {
  Message error;
  auto cap = ParseBesideCap(text, kTotal, &error);
  EXPECT_TRUE(cap.has_value()) << text << ": " << EnglishText(error);
  return cap.value_or(BesideCap{});
}

std::string Refused(std::string_view text) {
  Message error;
  EXPECT_FALSE(ParseBesideCap(text, kTotal, &error)) << text;
  return EnglishText(error);
}

TEST(BesideCap, FractionSizeNameAndServe) {
  const auto half = Parse("0.5");
  EXPECT_EQ(half.fraction, 0.5);
  EXPECT_EQ(half.engine, "vllm");
  EXPECT_EQ(Parse("1").fraction, 1.0);
  const auto sized = Parse("40GiB");
  EXPECT_EQ(sized.bytes, 40 * kGiB);
  EXPECT_EQ(sized.engine, "");
  const auto named = Parse("chat:0.25");
  EXPECT_EQ(named.name, "chat");
  EXPECT_EQ(named.fraction, 0.25);
  EXPECT_EQ(Parse("ollama:20G").engine, "ollama");
  const auto served = Parse("serve:llama-3.1-8b:8192:4:llama.cpp");
  ASSERT_TRUE(served.serve);
  EXPECT_EQ(served.serve->model, "llama-3.1-8b");
  EXPECT_EQ(served.serve->context, 8192);
  EXPECT_EQ(served.serve->concurrency, 4);
  EXPECT_EQ(served.engine, "llama.cpp");
  EXPECT_EQ(Parse("big:serve:llama-3.1-8b:4096:1").name, "big");
}

TEST(BesideCap, BadValuesAreRefusedWithTheValue) {
  EXPECT_NE(Refused("1.5").find("at most 1"), std::string::npos);
  EXPECT_NE(Refused("0").find("above 0"), std::string::npos);
  EXPECT_NE(Refused("0.0").find("above 0"), std::string::npos);
  EXPECT_NE(Refused("128GB").find("MemTotal"), std::string::npos);
  EXPECT_NE(Refused("200GiB").find("MemTotal"), std::string::npos);
  EXPECT_NE(Refused("a b:0.5").find("NAME"), std::string::npos);
  EXPECT_NE(Refused(":0.5").find("NAME"), std::string::npos);
  EXPECT_NE(Refused("half").find("'half'"), std::string::npos);
  EXPECT_NE(Refused("serve:llama-3.1-8b:8192").find("serve:MODEL"), std::string::npos);
  EXPECT_NE(Refused("serve:llama-3.1-8b:0:1").find("positive"), std::string::npos);
  EXPECT_NE(Refused("serve:llama-3.1-8b:8:1:tgi").find("ENGINE"), std::string::npos);
}

TEST(BesideApply, CapsNotRunningComeOutOfTheBudget) {
  Budget b;
  b.mem_total_bytes = kTotal;
  b.budget_bytes = 100 * kGB;
  const auto entries = ApplyBeside({Parse("0.5"), Parse("10GB")}, {}, {}, kTotal, &b);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].cap_bytes, 64 * kGB);  // 0.5 x 128 GB
  EXPECT_EQ(entries[0].subtracted_bytes, 64 * kGB);
  EXPECT_EQ(entries[1].subtracted_bytes, 10 * kGB);
  EXPECT_EQ(b.budget_bytes, 26 * kGB);  // 100 - 64 - 10
  Budget small;
  small.budget_bytes = 10 * kGB;
  ApplyBeside({Parse("0.9")}, {}, {}, kTotal, &small);
  EXPECT_EQ(small.budget_bytes, 0u);
}

TEST(BesideApply, ARunningServerIsNotCountedTwice) {
  Budget b;
  b.budget_bytes = 50 * kGB;
  const std::vector<RunningServer> running = {
      {1111, "vllm", 0.5, std::nullopt, "--gpu-memory-utilization"}};
  const auto entries = ApplyBeside({Parse("0.5"), Parse("vllm:0.2")}, {}, running, kTotal, &b);
  ASSERT_EQ(entries.size(), 2u);
  ASSERT_TRUE(entries[0].running);
  EXPECT_EQ(entries[0].running->pid, 1111);
  EXPECT_EQ(entries[0].subtracted_bytes, 0u);
  EXPECT_NE(EnglishText(BesideLine(entries[0])).find("not counted twice"), std::string::npos);
  // The one server matches one cap: a second vLLM is not running yet.
  EXPECT_FALSE(entries[1].running);
  EXPECT_EQ(b.budget_bytes, 50 * kGB - entries[1].cap_bytes);
  // A size names no engine: it matches no running server.
  Budget c;
  c.budget_bytes = 50 * kGB;
  ApplyBeside({Parse("20GB")}, {}, running, kTotal, &c);
  EXPECT_EQ(c.budget_bytes, 30 * kGB);
}

}  // namespace
}  // namespace headroom
