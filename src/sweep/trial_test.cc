#include "sweep/trial.h"

#include <gtest/gtest.h>

#include <csignal>

namespace headroom {
namespace {

TEST(SweepTrial, OomMessagesFromTheFrameworksAreFound) {
  const char* lines[] = {
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
      "capacity of 119.70 GiB",
      "RuntimeError: CUDA error: out of memory",
      "MemoryError: Unable to allocate 8.00 GiB for an array with shape (1073741824,) and data "
      "type float64",
      "terminate called after throwing an instance of 'std::bad_alloc'",
      "RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: can't allocate "
      "memory: you tried to allocate 4294967296 bytes.",
      "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
      "allocate 17179869184 bytes.",
      "OSError: [Errno 12] Cannot allocate memory",
  };
  for (const char* line : lines) {
    const std::string text = std::string("step 1\n  File \"train.py\", line 3\n") + line + "\n";
    auto found = FindOomMessage(text);
    ASSERT_TRUE(found) << line;
    EXPECT_EQ(*found, std::string(line).substr(0, 200));
  }
}

TEST(SweepTrial, OtherFailuresAreNotOoms) {
  for (const char* text : {"ValueError: batch_size should be a positive integer\n",
                           "FileNotFoundError: [Errno 2] No such file or directory: 'data.jsonl'\n",
                           "RuntimeError: NCCL error\n", "", "\r\r\n\n", "memory: 12 GB used\n"}) {
    EXPECT_FALSE(FindOomMessage(text)) << text;
  }
  // tqdm writes \r between updates: a message after one is still its own line.
  auto found =
      FindOomMessage("10%|#  | 1/10 [00:01<00:09]\rtorch.OutOfMemoryError: CUDA out of memory.");
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, "torch.OutOfMemoryError: CUDA out of memory.");
}

TEST(SweepTrial, ClassificationFollowsTheEvidence) {
  TrialFacts ok;
  ok.exit_code = 0;
  ok.peak_pool_bytes = 10;
  ok.limit_bytes = 20;
  EXPECT_EQ(ClassifyTrial(ok), TrialOutcome::kOk);
  TrialFacts over = ok;
  over.peak_pool_bytes = 21;
  EXPECT_EQ(ClassifyTrial(over), TrialOutcome::kOverLimit);
  TrialFacts killed = over;
  killed.killed_by_guard = true;
  killed.exit_code.reset();
  killed.signal = SIGTERM;
  EXPECT_EQ(ClassifyTrial(killed), TrialOutcome::kKilledByGuard);
  TrialFacts timeout;
  timeout.timed_out = true;
  timeout.signal = SIGTERM;
  EXPECT_EQ(ClassifyTrial(timeout), TrialOutcome::kTimeout);
  TrialFacts error;
  error.exit_code = 1;
  EXPECT_EQ(ClassifyTrial(error), TrialOutcome::kError);
  TrialFacts oom = error;
  oom.oom_message = "CUDA out of memory";
  EXPECT_EQ(ClassifyTrial(oom), TrialOutcome::kOom);
  TrialFacts sigkill;
  sigkill.signal = SIGKILL;
  EXPECT_EQ(ClassifyTrial(sigkill), TrialOutcome::kError);  // no evidence of an OOM
  sigkill.kernel_oom_kills = 1;
  EXPECT_EQ(ClassifyTrial(sigkill), TrialOutcome::kOom);
  TrialFacts segv;
  segv.signal = SIGSEGV;
  segv.kernel_oom_kills = 1;
  EXPECT_EQ(ClassifyTrial(segv), TrialOutcome::kError);
}

TEST(SweepTrial, VmstatValuesByKey) {
  const char* text = "nr_free_pages 123\noom_kill_extra 9\noom_kill 7\npgfault 1\n";
  EXPECT_EQ(ParseVmstatValue(text, "oom_kill"), std::optional<uint64_t>(7));
  EXPECT_EQ(ParseVmstatValue(text, "pgfault"), std::optional<uint64_t>(1));
  EXPECT_FALSE(ParseVmstatValue(text, "missing"));
  EXPECT_FALSE(ParseVmstatValue("oom_kill x1\n", "oom_kill"));
  EXPECT_FALSE(ParseVmstatValue("oom_kill 99999999999999999999999\n", "oom_kill"));
  EXPECT_FALSE(ParseVmstatValue("oom_kill \n", "oom_kill"));
}

}  // namespace
}  // namespace headroom
