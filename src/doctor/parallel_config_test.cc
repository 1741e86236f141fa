#include "doctor/parallel_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace headroom {
namespace {

// One setting, compared field by field so a failure names the field.
void ExpectSetting(const ParallelSetting& s, std::string_view key, int64_t value, size_t line) {
  EXPECT_EQ(s.key, key);
  EXPECT_EQ(s.value, value);
  EXPECT_EQ(s.line, line);
}

TEST(ParallelConfig, YamlKey) {
  const auto s =
      ScanParallelSettings("base_model: meta-llama/Llama-3.1-8B\ntensor_parallel_size: 2\n");
  ASSERT_EQ(s.size(), 1u);
  ExpectSetting(s[0], "tensor_parallel_size", 2, 2);
}

TEST(ParallelConfig, JsonKey) {
  const auto s = ScanParallelSettings(
      "{\n"
      "  \"train_batch_size\": 16,\n"
      "  \"tp_size\": 2,\n"
      "  \"zero_optimization\": {\"stage\": 3}\n"
      "}\n");
  ASSERT_EQ(s.size(), 1u);
  ExpectSetting(s[0], "tp_size", 2, 3);
}

TEST(ParallelConfig, CommandLineFlags) {
  const auto s = ScanParallelSettings(
      "#!/bin/sh\n"
      "vllm serve meta-llama/Llama-3.1-70B \\\n"
      "  --tensor-parallel-size 2 \\\n"
      "  --max-model-len 8192\n"
      "vllm serve other --tensor-parallel-size=4\n");
  ASSERT_EQ(s.size(), 2u);
  // The key as written, dashes included.
  ExpectSetting(s[0], "--tensor-parallel-size", 2, 3);
  ExpectSetting(s[1], "--tensor-parallel-size", 4, 5);
}

TEST(ParallelConfig, DashedYamlKeyAsWritten) {
  // vLLM's --config YAML spells keys with dashes.
  const auto s = ScanParallelSettings("model: x\ntensor-parallel-size: 2\n");
  ASSERT_EQ(s.size(), 1u);
  ExpectSetting(s[0], "tensor-parallel-size", 2, 2);
}

TEST(ParallelConfig, IniStyleAndCase) {
  const auto s =
      ScanParallelSettings("[parallel]\ntensor_model_parallel_size = 8\nTP_Degree = 4\n");
  ASSERT_EQ(s.size(), 2u);
  ExpectSetting(s[0], "tensor_model_parallel_size", 8, 2);
  ExpectSetting(s[1], "TP_Degree", 4, 3);
}

TEST(ParallelConfig, QuotedValueAndCrlf) {
  const auto s = ScanParallelSettings("tensor_parallel_degree: \"2\"\r\ntp_size: 4\r\n");
  ASSERT_EQ(s.size(), 2u);
  ExpectSetting(s[0], "tensor_parallel_degree", 2, 1);
  ExpectSetting(s[1], "tp_size", 4, 2);
}

TEST(ParallelConfig, CommentsIgnored) {
  const auto s = ScanParallelSettings(
      "# tensor_parallel_size: 8\n"
      "tp_size: 2  # was tp_size: 4\n"
      "  #tp_degree: 16\n"
      "tp_degree: # 4\n");
  ASSERT_EQ(s.size(), 1u);
  ExpectSetting(s[0], "tp_size", 2, 2);
}

TEST(ParallelConfig, NonIntegerValuesIgnored) {
  EXPECT_TRUE(ScanParallelSettings("tp_size: auto\n").empty());
  EXPECT_TRUE(ScanParallelSettings("tp_size: 2.5\n").empty());
  EXPECT_TRUE(ScanParallelSettings("tp_size: 2x\n").empty());
  EXPECT_TRUE(ScanParallelSettings("tp_size: -2\n").empty());
  EXPECT_TRUE(ScanParallelSettings("tp_size: null\n").empty());
  EXPECT_TRUE(ScanParallelSettings("tp_size:\n").empty());
}

TEST(ParallelConfig, LookalikeKeysIgnored) {
  EXPECT_TRUE(ScanParallelSettings("tp_sizex: 2\n").empty());
  EXPECT_TRUE(ScanParallelSettings("max_tp_size: 2\n").empty());
  EXPECT_TRUE(ScanParallelSettings("pipeline_parallel_size: 2\n").empty());
  EXPECT_TRUE(ScanParallelSettings("tp_size.x: 2\n").empty());
  EXPECT_TRUE(ScanParallelSettings("tp_size2\n").empty());
}

TEST(ParallelConfig, NestedYamlReportsTheValueLine) {
  const auto s = ScanParallelSettings(
      "model: x\n"
      "tensor_parallel:\n"
      "  enabled: true\n"
      "  tp_size: 2\n");
  ASSERT_EQ(s.size(), 1u);
  ExpectSetting(s[0], "tp_size", 2, 4);
}

TEST(ParallelConfig, LineNumbersAreOneBased) {
  const auto s = ScanParallelSettings("tp_size: 1\n\n\n\ntp_degree: 2\n\ntensor_parallel: 3");
  ASSERT_EQ(s.size(), 3u);
  ExpectSetting(s[0], "tp_size", 1, 1);
  ExpectSetting(s[1], "tp_degree", 2, 5);
  ExpectSetting(s[2], "tensor_parallel", 3, 7);
}

TEST(ParallelConfig, SeveralOnOneLine) {
  const auto s = ScanParallelSettings("{\"tp_size\": 2, \"tensor_parallel_degree\": 4}");
  ASSERT_EQ(s.size(), 2u);
  ExpectSetting(s[0], "tp_size", 2, 1);
  ExpectSetting(s[1], "tensor_parallel_degree", 4, 1);
}

TEST(ParallelConfig, ValueDigitsBounded) {
  const auto nine = ScanParallelSettings("tp_size: 999999999\n");
  ASSERT_EQ(nine.size(), 1u);
  EXPECT_EQ(nine[0].value, 999'999'999);
  EXPECT_TRUE(ScanParallelSettings("tp_size: 1000000000\n").empty());
  EXPECT_TRUE(ScanParallelSettings("tp_size: 99999999999999999999999999\n").empty());
}

TEST(ParallelConfig, HostileText) {
  EXPECT_TRUE(ScanParallelSettings("").empty());
  EXPECT_TRUE(ScanParallelSettings("\n\n\n").empty());
  EXPECT_TRUE(ScanParallelSettings(std::string(1 << 20, 'a')).empty());
  EXPECT_TRUE(ScanParallelSettings(std::string(1 << 20, '-')).empty());
  std::string binary;
  for (int i = 0; i < 65536; ++i) binary.push_back(static_cast<char>((i * 97 + 3) & 0xFF));
  for (const auto& s : ScanParallelSettings(binary)) {
    EXPECT_GE(s.line, 1u);
    EXPECT_GE(s.value, 0);
  }
  // A megabyte-long line does not hide the lines after it.
  const auto s = ScanParallelSettings(std::string(1 << 20, 'a') + "\ntp_size: 2\n");
  ASSERT_EQ(s.size(), 1u);
  ExpectSetting(s[0], "tp_size", 2, 2);
}

}  // namespace
}  // namespace headroom
