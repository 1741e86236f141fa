#include "doctor/parallel_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace headroom {
namespace {

// One scan: the text and the settings it must find, in order (none: nothing is a setting).
struct ParallelScanCase {
  const char* name;
  std::string text;
  std::vector<ParallelSetting> want;  // key, value, line
};

// Each case's settings compared field by field, so a failure names the case and the field.
void ExpectScan(const ParallelScanCase& c) {
  SCOPED_TRACE(c.name);
  const auto s = ScanParallelSettings(c.text);
  ASSERT_EQ(s.size(), c.want.size());
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s[i].key, c.want[i].key) << "setting " << i;
    EXPECT_EQ(s[i].value, c.want[i].value) << "setting " << i;
    EXPECT_EQ(s[i].line, c.want[i].line) << "setting " << i;
  }
}

TEST(ParallelConfig, ScansEachFormAsATable) {
  const std::vector<ParallelScanCase> cases = {
      {"yaml key",
       "base_model: meta-llama/Llama-3.1-8B\ntensor_parallel_size: 2\n",
       {{"tensor_parallel_size", 2, 2}}},
      {"json key",
       "{\n"
       "  \"train_batch_size\": 16,\n"
       "  \"tp_size\": 2,\n"
       "  \"zero_optimization\": {\"stage\": 3}\n"
       "}\n",
       {{"tp_size", 2, 3}}},
      // The key as written, dashes included.
      {"command-line flags",
       "#!/bin/sh\n"
       "vllm serve meta-llama/Llama-3.1-70B \\\n"
       "  --tensor-parallel-size 2 \\\n"
       "  --max-model-len 8192\n"
       "vllm serve other --tensor-parallel-size=4\n",
       {{"--tensor-parallel-size", 2, 3}, {"--tensor-parallel-size", 4, 5}}},
      // vLLM's --config YAML spells keys with dashes.
      {"dashed yaml key as written",
       "model: x\ntensor-parallel-size: 2\n",
       {{"tensor-parallel-size", 2, 2}}},
      {"ini style and case",
       "[parallel]\ntensor_model_parallel_size = 8\nTP_Degree = 4\n",
       {{"tensor_model_parallel_size", 8, 2}, {"TP_Degree", 4, 3}}},
      {"quoted value and crlf",
       "tensor_parallel_degree: \"2\"\r\ntp_size: 4\r\n",
       {{"tensor_parallel_degree", 2, 1}, {"tp_size", 4, 2}}},
      {"comments ignored",
       "# tensor_parallel_size: 8\n"
       "tp_size: 2  # was tp_size: 4\n"
       "  #tp_degree: 16\n"
       "tp_degree: # 4\n",
       {{"tp_size", 2, 2}}},
      {"non-integer: auto", "tp_size: auto\n", {}},
      {"non-integer: 2.5", "tp_size: 2.5\n", {}},
      {"non-integer: 2x", "tp_size: 2x\n", {}},
      {"non-integer: -2", "tp_size: -2\n", {}},
      {"non-integer: null", "tp_size: null\n", {}},
      {"non-integer: empty", "tp_size:\n", {}},
      {"lookalike: tp_sizex", "tp_sizex: 2\n", {}},
      {"lookalike: max_tp_size", "max_tp_size: 2\n", {}},
      {"lookalike: pipeline", "pipeline_parallel_size: 2\n", {}},
      {"lookalike: tp_size.x", "tp_size.x: 2\n", {}},
      {"lookalike: no separator", "tp_size2\n", {}},
      {"nested yaml reports the value line",
       "model: x\n"
       "tensor_parallel:\n"
       "  enabled: true\n"
       "  tp_size: 2\n",
       {{"tp_size", 2, 4}}},
      {"line numbers are one-based",
       "tp_size: 1\n\n\n\ntp_degree: 2\n\ntensor_parallel: 3",
       {{"tp_size", 1, 1}, {"tp_degree", 2, 5}, {"tensor_parallel", 3, 7}}},
      {"several on one line",
       "{\"tp_size\": 2, \"tensor_parallel_degree\": 4}",
       {{"tp_size", 2, 1}, {"tensor_parallel_degree", 4, 1}}},
  };
  for (const auto& c : cases) ExpectScan(c);
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
  ExpectScan(
      {"a long line first", std::string(1 << 20, 'a') + "\ntp_size: 2\n", {{"tp_size", 2, 2}}});
}

}  // namespace
}  // namespace headroom
