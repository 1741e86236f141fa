// Replays the fuzz seed corpora (fuzz/corpus/<target>/) through the same bodies the libFuzzer
// targets run (fuzz/fuzz_targets.h), so every build checks them, clang or not. Inputs that a
// local fuzzing run finds worth keeping go into those folders and are checked here from then on.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../fuzz/companion_targets.h"
#include "../fuzz/config_targets.h"
#include "../fuzz/doctor_targets.h"
#include "../fuzz/explain_targets.h"
#include "../fuzz/fuzz_targets.h"
#include "../fuzz/gpu_targets.h"
#include "../fuzz/group_targets.h"
#include "../fuzz/guardian_targets.h"
#include "../fuzz/http_targets.h"
#include "../fuzz/plan_targets.h"
#include "testing_files.h"

namespace headroom {
namespace {

// Runs `body` on every file of fuzz/corpus/<target>; returns how many there were.
template <typename Body>
int Replay(const std::string& target, Body body) {
  const auto dir = std::filesystem::path(testing::SourcePath("fuzz/corpus")) / target;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    EXPECT_TRUE(body(bytes.str())) << entry.path();
    ++files;
  }
  return files;
}

TEST(DoctorInputsFuzzCorpus, Replays) {
  // Its own seeds, and the other corpora as more hostile text.
  for (const char* target : {"doctor_inputs", "json_reader", "step_log"}) {
    EXPECT_GT(Replay(target, fuzz::DoctorInputsHold), 0) << target;
  }
}

TEST(GuardianWorkerFuzzCorpus, Replays) {
  // Its own seeds, and other corpora's as hostile words.
  for (const char* target : {"guardian_worker", "config", "doctor_inputs"}) {
    EXPECT_GT(Replay(target, fuzz::GuardianWorkerHolds), 0) << target;
  }
}

TEST(HttpRequestFuzzCorpus, Replays) {
  for (const char* target : {"http_request", "doctor_inputs", "json_reader"}) {
    EXPECT_GT(Replay(target, fuzz::HttpRequestHolds), 0) << target;
  }
}

TEST(HttpAnswerFuzzCorpus, Replays) {
  // Its own seeds (chunked answers, hostile chunk sizes, cut short), and requests and pages.
  for (const char* target : {"http_answer", "http_request"}) {
    EXPECT_GT(Replay(target, fuzz::HttpAnswerHolds), 0) << target;
  }
}

TEST(ConfigFuzzCorpus, Replays) {
  // Its own seeds, and the other corpora as text that is no TOML (or, by chance, is).
  for (const char* target : {"config", "hf_config", "http_request", "step_log"}) {
    EXPECT_GT(Replay(target, fuzz::ConfigTomlHolds), 0) << target;
  }
}

TEST(ElfImageFuzzCorpus, Replays) {
  // Its own seeds (a real header, wrapping offsets), and other corpora as non-ELF bytes.
  for (const char* target : {"elf_image", "safetensors"}) {
    EXPECT_GT(Replay(target, fuzz::ElfImageHolds), 0) << target;
  }
}

TEST(HfConfigFuzzCorpus, Replays) { EXPECT_GT(Replay("hf_config", fuzz::HfConfigHolds), 0); }

TEST(SafetensorsFuzzCorpus, Replays) {
  EXPECT_GT(Replay("safetensors", fuzz::SafetensorsHolds), 0);
}

TEST(StepLogFuzzCorpus, Replays) {
  // The other corpora are no logs, which is a test of their own: nothing in them may break
  // an invariant either.
  for (const char* target : {"step_log", "json_reader", "hf_config"}) {
    EXPECT_GT(Replay(target, fuzz::StepLogHolds), 0) << target;
  }
}

TEST(RunConfigFuzzCorpus, Replays) {
  // Its own seeds (real run configs, hostile ones), and other text corpora as files that are
  // no run configuration.
  for (const char* target : {"run_config", "config", "hf_config", "step_log"}) {
    EXPECT_GT(Replay(target, fuzz::RunConfigHolds), 0) << target;
  }
}

TEST(PlanRequestFuzzCorpus, Replays) {
  // Its own seeds, and the other JSON corpora as requests that are not.
  for (const char* target : {"plan_request", "json_reader", "hf_config"}) {
    EXPECT_GT(Replay(target, fuzz::PlanRequestHolds), 0) << target;
  }
}

TEST(GroupMessageFuzzCorpus, Replays) {
  // Its own seeds (the seven kinds framed under the fuzz secret, wire version 3, and forged,
  // truncated, out-of-layout, older- and newer-version frames, and frames whose run or
  // challenge does not fit their kind), and another binary-ish corpus as frames that are not.
  for (const char* target : {"group_message", "safetensors"}) {
    EXPECT_GT(Replay(target, fuzz::GroupMessageHolds), 0) << target;
  }
  int decoded = 0;
  Replay("group_message", [&](const std::string& bytes) {
    decoded += group::DecodeMessage(bytes, fuzz::kGroupFuzzSecret, fuzz::kGroupFuzzJob).ok();
    return true;
  });
  // join, welcome, heartbeat, ended-for-memory, failed, abort, done; the rest refused (the
  // version 2 heartbeat among them)
  EXPECT_EQ(decoded, 7);
}

TEST(StepRecordFuzzCorpus, Replays) {
  // Its own seeds, and other corpora as JSON-ish lines that are no step records.
  for (const char* target : {"step_record", "json_reader", "step_log"}) {
    EXPECT_GT(Replay(target, fuzz::StepRecordsHold), 0) << target;
  }
}

TEST(SamplesCsvFuzzCorpus, Replays) { EXPECT_GT(Replay("samples_csv", fuzz::SamplesCsvHolds), 0); }

TEST(JsonReaderFuzzCorpus, Replays) {
  // Every corpus is JSON-ish, so each one also checks the reader against nlohmann.
  for (const char* target : {"json_reader", "hf_config", "safetensors"}) {
    EXPECT_GT(Replay(target, fuzz::JsonReaderAgrees), 0) << target;
  }
}

}  // namespace
}  // namespace headroom
