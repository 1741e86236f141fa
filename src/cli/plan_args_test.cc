// plan's input flags read from words (ReadPlanWords, ParseWorkloadRequest): a --from FILE
// among them is applied as plan applies it, the flags beside it win, a relative path is made
// absolute (what a ladder records), and a file that does not read is one line naming it.
// The files are the real ones in tests/fixtures/run_configs (SOURCES).
#include "cli/plan_args.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli/ladder_flags.h"
#include "plan/plan_fields.h"
#include "plan/plan_words.h"
#include "plan_field_samples.h"
#include "sys/sysroot.h"
#include "testing_files.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;

// No Hugging Face cache, so a Hub id in a file resolves to the catalog on every machine;
// the variable as it was is put back.
class PlanWordsFrom : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* v = std::getenv("HF_HUB_CACHE")) saved_ = v;
    had_ = std::getenv("HF_HUB_CACHE") != nullptr;
    ::setenv("HF_HUB_CACHE", "/nonexistent/headroom-test-hub", 1);
  }
  void TearDown() override {
    if (had_) {
      ::setenv("HF_HUB_CACHE", saved_.c_str(), 1);
    } else {
      ::unsetenv("HF_HUB_CACHE");
    }
  }
  static std::string Fixture(const std::string& name) {
    return testing::FixturePath("run_configs/" + name);
  }
  std::string saved_;
  bool had_ = false;
};

// The message of the UsageError `f` throws; "" (and a failure) when it throws none.
template <typename F>
std::string UsageMessage(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.message;
  }
  ADD_FAILURE() << "no usage error";
  return "";
}

TEST_F(PlanWordsFrom, AFileAmongTheWordsIsAppliedAsPlanDoes) {
  const std::string file = Fixture("axolotl/llama-3-qlora.yml");
  const PlanWords read = ReadPlanWords({"--from", file}, "--plan-args");
  EXPECT_EQ(read.request.model, "llama-3-8b");
  EXPECT_EQ(read.request.workload.method, Method::kQlora);
  EXPECT_EQ(read.request.workload.lora_rank, 32);
  EXPECT_EQ(read.request.workload.batch, 2);
  EXPECT_EQ(read.request.workload.seq, 4096);
  ASSERT_TRUE(read.from);
  EXPECT_EQ(read.from->path, file);
  EXPECT_EQ(read.from->config.format, RunFormat::kAxolotl);
  EXPECT_EQ(read.words, (std::vector<std::string>{"--from", file}));  // already absolute
  // Without --from: no file, the words as they were.
  const PlanWords plain = ReadPlanWords({"llama-3.1-8b", "--seq", "1024"}, "--plan-args");
  EXPECT_FALSE(plain.from);
  EXPECT_EQ(plain.request.workload.seq, 1024);
}

TEST_F(PlanWordsFrom, FlagsBesideTheFileOverrideIt) {
  const std::string file = Fixture("axolotl/llama-3-qlora.yml");
  for (const std::vector<std::string>& words :
       {std::vector<std::string>{"--from", file, "--batch", "4", "--seq", "1024"},
        std::vector<std::string>{"--seq", "1024", "--batch=4", "--from=" + file}}) {
    const PlanRequest r = ParsePlanWords(words, "--plan-args");
    EXPECT_EQ(r.workload.batch, 4);
    EXPECT_EQ(r.workload.seq, 1024);
    EXPECT_EQ(r.workload.lora_rank, 32);  // still the file's
    EXPECT_EQ(r.workload.method, Method::kQlora);
  }
  // A model named beside it replaces the file's; a full method drops its LoRA.
  const PlanRequest other = ParsePlanWords({"llama-3.2-1b", "--from", file}, "--plan-args");
  EXPECT_EQ(other.model, "llama-3.2-1b");
  EXPECT_EQ(other.workload.batch, 2);
  const PlanRequest full = ParsePlanWords({"--from", file, "--method", "full"}, "--plan-args");
  EXPECT_EQ(full.workload.method, Method::kFull);
}

TEST_F(PlanWordsFrom, ARelativePathIsRecordedAbsolute) {
  const fs::path before = fs::current_path();
  fs::current_path(Fixture(""));
  const PlanWords read =
      ReadPlanWords({"--from", "axolotl/llama-3-qlora.yml", "--batch", "4"}, "--plan-args");
  const PlanWords eq = ReadPlanWords({"--from=./axolotl/../axolotl/llama-3-qlora.yml"}, "x");
  LadderPlanArgs ladder = PlanArgsFlag(CliEnv{}, SysRoot("/nonexistent"),
                                       "--from axolotl/qwen3-32b-qlora.yaml --budget '100 GB'");
  fs::current_path(before);
  const std::string absolute = Fixture("axolotl/llama-3-qlora.yml");
  ASSERT_TRUE(read.from);
  EXPECT_EQ(read.from->path, absolute);
  EXPECT_EQ(read.words, (std::vector<std::string>{"--from", absolute, "--batch", "4"}));
  EXPECT_EQ(read.request.workload.batch, 4);
  EXPECT_EQ(read.request.workload.seq, 4096);
  ASSERT_TRUE(eq.from);
  EXPECT_EQ(eq.words, (std::vector<std::string>{"--from=" + absolute}));
  // ladder start records the words with that path, and reads them back the same from here.
  const std::string qwen = Fixture("axolotl/qwen3-32b-qlora.yaml");
  EXPECT_EQ(ladder.recorded, "--from " + qwen + " --budget '100 GB'");
  ASSERT_TRUE(ladder.request);
  EXPECT_EQ(ladder.request->budget_bytes, 100'000'000'000ULL);
  EXPECT_EQ(
      PlanRequestToJson(ParsePlanWords(SplitWords(ladder.recorded, "--plan-args"), "--plan-args")),
      PlanRequestToJson(*ladder.request));
  EXPECT_EQ(LadderFromNote(ladder),
            "from " + qwen +
                " (axolotl): not modelled: gradient_checkpointing: offload (with an adapter every "
                "activation is "
                "offloaded: planned as --grad-ckpt off), optimizer: "
                "adamw_torch_4bit, lora_mlp_kernel, lora_qkv_kernel, lora_o_kernel");
}

TEST_F(PlanWordsFrom, AFileThatDoesNotReadIsOneLineNamingIt) {
  const std::string missing = UsageMessage([] {
    ReadPlanWords({"llama-3.1-8b", "--from", "/nonexistent/run.yml"}, "--plan-args");
  });
  EXPECT_EQ(missing.rfind("--plan-args: --from: ", 0), 0u) << missing;
  EXPECT_NE(missing.find("/nonexistent/run.yml"), std::string::npos) << missing;
  EXPECT_EQ(missing.find('\n'), std::string::npos) << missing;
  // Relative and gone: the message names it by the absolute path the journal would hold.
  const std::string relative = UsageMessage([] {
    ReadPlanWords({"--from", "no-such-run.yml"}, "--plan-args");
  });
  EXPECT_NE(relative.find((fs::current_path() / "no-such-run.yml").string()), std::string::npos)
      << relative;
  // A row without its JSON request (the old form) whose words name a file that is gone.
  Message error;
  EXPECT_FALSE(ReadOldPlanWords("--from /nonexistent/run.yml --budget 10GB", &error));
  EXPECT_NE(EnglishText(error).find("--plan-args: --from: "), std::string::npos)
      << EnglishText(error);
  EXPECT_NE(EnglishText(error).find("/nonexistent/run.yml"), std::string::npos);
  // A directory is no run configuration.
  const std::string dir = UsageMessage([] {
    ReadPlanWords({"--from", testing::FixturePath("run_configs")}, "--workload");
  });
  EXPECT_NE(dir.find("--workload: --from: "), std::string::npos) << dir;
  EXPECT_NE(dir.find("a directory"), std::string::npos) << dir;
}

TEST_F(PlanWordsFrom, DoctorsWorkloadTakesAFileAndItsWordsOverrideIt) {
  const std::string file = Fixture("axolotl/llama-3-qlora.yml");
  std::optional<FromFile> from;
  const PlanRequest r = ParseWorkloadRequest("from " + file + " seq 1024", &from);
  ASSERT_TRUE(from);
  EXPECT_EQ(from->path, file);
  EXPECT_EQ(r.model, "llama-3-8b");
  EXPECT_EQ(r.workload.seq, 1024);  // the workload's word, not the file's 4096
  EXPECT_EQ(r.workload.batch, 2);   // the file's
  EXPECT_EQ(r.workload.method, Method::kQlora);
  // The method word and the flag form, and a model named beside the file.
  const PlanRequest lora = ParseWorkloadRequest("lora --from " + file + " batch 3");
  EXPECT_EQ(lora.workload.method, Method::kLora);
  EXPECT_EQ(lora.workload.batch, 3);
  EXPECT_EQ(lora.workload.lora_rank, 32);
  const PlanRequest named = ParseWorkloadRequest("llama-3.2-1b from " + file);
  EXPECT_EQ(named.model, "llama-3.2-1b");
  // No file, no model: still refused; "from" with nothing after it too.
  EXPECT_NE(UsageMessage([] { ParseWorkloadRequest("qlora seq 8192"); }).find("no model named"),
            std::string::npos);
  EXPECT_NE(UsageMessage([] { ParseWorkloadRequest("qlora from"); }).find("'from' needs"),
            std::string::npos);
  EXPECT_NE(UsageMessage([] {
              ParseWorkloadRequest("from /nonexistent/run.yml");
            }).find("--workload: --from: "),
            std::string::npos);
}

// Regression (issue 30): a field missing from one of the hand-kept lists (the flags, the JSON
// keys, the run-config names) was silently dropped when ladder or doctor re-planned a stored
// request. Every field of the table is a flag of plan's, and what the flag gives, read from
// words as `ladder start --plan-args` reads them, survives the JSON form the journal stores.
TEST(PlanArgsFields, EveryFieldIsAFlagWhoseValueSurvivesTheJournal) {
  for (const PlanField& f : PlanFields()) {
    SCOPED_TRACE(std::string(f.name));
    const auto sample = testing::PlanFieldSamples().find(std::string(f.name));
    ASSERT_NE(sample, testing::PlanFieldSamples().end());
    std::map<std::string, std::string> values = {{"model", "llama-3.1-8b"}};
    for (const auto& [name, value] : sample->second.with) values[name] = value;
    values[std::string(f.name)] = sample->second.value;
    std::vector<std::string> words;
    for (const auto& [name, value] : values) {
      const PlanField* field = FindPlanField(name);
      if (value.empty()) continue;
      if (field->name != "model") words.emplace_back(field->flag);
      if (field->kind != FieldKind::kFlag) words.push_back(value);
    }
    const PlanRequest request = ParsePlanWords(words, "--plan-args");
    Message error;
    const auto read = PlanRequestFromJson(PlanRequestToJson(request), &error);
    ASSERT_TRUE(read) << EnglishText(error);
    EXPECT_EQ(FieldText(RequestText(*read), f), sample->second.value);
    EXPECT_EQ(read->sources.at(f.name), PlanSource::kFlag);
  }
}

}  // namespace
}  // namespace headroom
