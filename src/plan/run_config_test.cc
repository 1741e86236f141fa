#include "plan/run_config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "base/safe_file.h"
#include "plan/plan_fields.h"
#include "testing_files.h"

namespace headroom {
namespace {

using Keys = std::vector<std::string>;

// A real file from tests/fixtures/run_configs/ (SOURCES names each one's repository and commit),
// read with no Hugging Face cache, so a Hub id resolves to the catalog.
RunConfig Load(const std::string& name, const RunConfigContext& context = {}) {
  auto config = LoadRunConfig(testing::FixturePath("run_configs/" + name), context);
  EXPECT_TRUE(config) << (config ? "" : EnglishText(config.error().what));
  return config ? *config : RunConfig{};
}

// What a file read to, as its golden file holds it: every field of plan/plan_fields' table
// (the ones the file did not set hold their defaults), the fields set, the keys not modelled
// in the order listed, and the English of the model's error without the fixtures' folder.
nlohmann::json RunConfigGolden(const RunConfig& c) {
  nlohmann::json text = nlohmann::json::object();
  for (const PlanField& f : PlanFields()) text[std::string(f.name)] = FieldText(c.text, f);
  nlohmann::json error = nullptr;
  if (c.model_error) {
    std::string english = EnglishText(*c.model_error);
    const std::string dir = testing::FixturePath("run_configs/");
    for (size_t at; (at = english.find(dir)) != std::string::npos;) english.erase(at, dir.size());
    error = english;
  }
  return {{"format", std::string(Name(c.format))},
          {"base_model", c.base_model},
          {"model_origin", c.model_origin},
          {"model_error", error},
          {"text", text},
          {"set", c.set},
          {"not_modelled", c.not_modelled}};
}

std::string Fails(std::string_view text) {
  auto config = ParseRunConfig(text, "run.yaml", {});
  EXPECT_FALSE(config);
  return config ? "" : EnglishText(config.error().what);
}

TEST(RunConfigLlamaFactory, DeepSpeedStageFromTheFileWhenItIs) {
  // The LLaMA-Factory file beside a real DeepSpeed file at the path it names, stage 2 there.
  testing::TempDir dir("run-config");
  const std::string yaml = *ReadInputFile(
      testing::FixturePath("run_configs/llama-factory/llama3_full_sft.yaml"), 1 << 20);
  std::string ds =
      *ReadInputFile(testing::FixturePath("run_configs/trl/deepspeed_configs/zero3.json"), 1 << 20);
  ds.replace(ds.find("\"stage\": 3"), 10, "\"stage\": 2");
  testing::WriteFile(dir / "train.yaml", yaml);
  testing::WriteFile(dir / "examples/deepspeed/ds_z3_config.json", ds);
  auto c = LoadRunConfig(dir.File("train.yaml"), {});
  ASSERT_TRUE(c) << EnglishText(c.error().what);
  EXPECT_EQ(c->text.sharding, "zero2");  // the file's stage, not its name's
}

TEST(RunConfigTorchtune, CheckpointDirThroughOmegaConfInterpolation) {
  // The GRPO file with its base_model_path pointed at a folder holding a real config.json:
  // checkpoint_dir, "${base_model_path}", is that folder.
  testing::TempDir dir("run-config");
  testing::WriteFile(
      dir / "model/config.json",
      *ReadInputFile(testing::FixturePath("models/llama-3.1-8b/config.json"), 1 << 20));
  std::string yaml = *ReadInputFile(
      testing::FixturePath("run_configs/torchtune/llama3_1-8B_full_grpo.yaml"), 1 << 20);
  const std::string old = "/tmp/llama3B_gsm8k_sft_part0/epoch_0";
  yaml.replace(yaml.find(old), old.size(), dir.File("model"));
  testing::WriteFile(dir / "grpo.yaml", yaml);
  auto c = LoadRunConfig(dir.File("grpo.yaml"), {});
  ASSERT_TRUE(c) << EnglishText(c.error().what);
  EXPECT_EQ(c->model_origin, "local folder");
  EXPECT_EQ(c->text.config, dir.File("model"));
  EXPECT_FALSE(c->Sets("model"));
}

// A real JSON file: Firefly's training arguments (train_args/sft/qlora/*.json), which its
// train.py reads with transformers' HfArgumentParser.parse_json_file into TrainingArguments
// and its own CustomizedArguments (component/argument.py). Its own keys decide the adapter:
// train_mode qlora by default, the file's lora_rank 64, every linear layer, an NF4 base with
// double quantization, and Unsloth's loader (use_unsloth).
TEST(RunConfigFirefly, FullTrainingAndDpoAndWhatItRefuses) {
  const auto parse = [](std::string_view text) {
    auto c = ParseRunConfig(text, "args.json", {});
    EXPECT_TRUE(c) << (c ? "" : EnglishText(c.error().what));
    return c ? *c : RunConfig{};
  };
  // train_mode full with the Hugging Face loader: no adapter, TrainingArguments' default of
  // no gradient checkpointing.
  const RunConfig full = parse(R"({"model_name_or_path": "Qwen/Qwen2.5-7B", "train_file": "d",
      "template_name": "qwen", "train_mode": "full", "max_seq_length": 2048,
      "per_device_train_batch_size": 2})");
  EXPECT_EQ(full.format, RunFormat::kFirefly);
  EXPECT_EQ(full.text.framework, "hf");
  EXPECT_EQ(full.text.method, "full");
  EXPECT_FALSE(full.Sets("lora_rank"));
  EXPECT_EQ(full.text.grad_ckpt, "off");
  EXPECT_EQ(full.text.seq, "2048");
  EXPECT_EQ(full.text.batch, "2");
  // LoRA under Unsloth: its get_peft_model turns gradient checkpointing on; the rank's
  // default is 64. DPO is its own workload; an unknown task is listed.
  const RunConfig dpo = parse(R"({"model_name_or_path": "Qwen/Qwen2.5-7B", "train_file": "d",
      "train_mode": "lora", "use_unsloth": true, "task_type": "dpo", "max_seq_length": 1024,
      "max_prompt_length": 300, "beta": 0.1})");
  EXPECT_EQ(dpo.text.method, "lora");
  EXPECT_EQ(dpo.text.lora_rank, "64");
  EXPECT_FALSE(dpo.Sets("double_quant"));
  EXPECT_EQ(dpo.text.grad_ckpt, "on");
  EXPECT_EQ(dpo.text.workload, "dpo");
  EXPECT_TRUE(dpo.not_modelled.empty()) << dpo.not_modelled.front();
  const RunConfig odd = parse(R"({"model_name_or_path": "x/y", "train_file": "d",
      "task_type": "rm", "max_seq_length": 512})");
  EXPECT_EQ(odd.not_modelled, Keys{"task_type: rm"});
  // What Firefly's own parser refuses: a train mode it asserts against, no max_seq_length
  // (a required field), a rank that is no count.
  const auto fails = [](std::string_view text) {
    auto c = ParseRunConfig(text, "args.json", {});
    EXPECT_FALSE(c);
    return c ? "" : EnglishText(c.error().what);
  };
  EXPECT_EQ(fails(R"({"model_name_or_path": "x/y", "train_mode": "adapter",
      "max_seq_length": 512})"),
            "args.json: train_mode: 'adapter' is not one of full, lora, qlora (Firefly's train.py "
            "asserts it)");
  EXPECT_EQ(fails(R"({"model_name_or_path": "x/y", "train_file": "d"})"),
            "args.json: max_seq_length: not given (Firefly requires it)");
  EXPECT_NE(fails(R"({"model_name_or_path": "x/y", "train_file": "d", "max_seq_length": 512,
      "lora_rank": -4})")
                .find("args.json: lora_rank: "),
            std::string::npos);
}

// Every run configuration in tests/fixtures/run_configs/ (SOURCES) against its golden file,
// FILE.expected.json beside it: the format, the base model and where it was found, every
// field's text, the fields set and the keys not modelled, in order. What each reader takes
// from its stack's keys, and why, is in docs/plan.md ("Plan from the run's config") and the
// readers' comments. HEADROOM_UPDATE_GOLDEN=1 writes the files afresh (then read the diff:
// each change is a change of what a real file plans).
TEST(RunConfigFixtures, EachFileReadsAsItsGoldenFile) {
  namespace fs = std::filesystem;
  const fs::path dir = testing::FixturePath("run_configs");
  int compared = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const fs::path& path = entry.path();
    if (!entry.is_regular_file() || path.filename() == "SOURCES" ||
        path.string().ends_with(".expected.json") ||
        path.parent_path().filename() == "deepspeed_configs") {
      continue;
    }
    const std::string name = fs::relative(path, dir).string();
    SCOPED_TRACE(name);
    const nlohmann::json got = RunConfigGolden(Load(name));
    const std::string golden = path.string() + ".expected.json";
    if (std::getenv("HEADROOM_UPDATE_GOLDEN")) testing::WriteFile(golden, got.dump(2) + "\n");
    const auto want = nlohmann::json::parse(testing::Slurp(golden), nullptr, false);
    ASSERT_FALSE(want.is_discarded()) << "no golden file: " << golden;
    EXPECT_EQ(got, want) << got.dump(2);
    // Every field a file sets is one a run configuration can set (plan/plan_fields).
    for (const auto& field : got["set"]) {
      const PlanField* f = FindPlanField(field.get<std::string>());
      EXPECT_TRUE(f && f->run_config) << field;
    }
    ++compared;
  }
  EXPECT_EQ(compared, 20);
}

TEST(RunConfig, BaseModelFromTheHuggingFaceCache) {
  testing::TempDir hub("hf-hub");
  const auto repo = hub / "models--NousResearch--Meta-Llama-3-8B";
  const std::string config =
      *ReadInputFile(testing::FixturePath("models/llama-3.1-8b/config.json"), 1 << 20);
  testing::WriteFile(repo / "snapshots/0aaa/config.json", config);
  testing::WriteFile(repo / "snapshots/1bbb/config.json", config);
  testing::WriteFile(repo / "refs/main", "1bbb\n");
  RunConfigContext context;
  context.hf_cache_dirs = {hub / "elsewhere", hub.path()};
  const RunConfig c = Load("axolotl/llama-3-qlora.yml", context);
  EXPECT_EQ(c.model_origin, "hf cache");
  EXPECT_EQ(c.text.config, (repo / "snapshots/1bbb").string());  // the revision refs/main names
  EXPECT_TRUE(c.text.model.empty());
  EXPECT_FALSE(c.Sets("model"));
}

TEST(RunConfig, BaseModelAsALocalFolder) {
  testing::TempDir dir("run-config");
  const std::string folder = testing::FixturePath("models/qwen2.5-0.5b");
  testing::WriteFile(dir / "sft.yaml",
                     "model_name_or_path: " + folder + "\nper_device_train_batch_size: 2\n");
  auto c = LoadRunConfig(dir.File("sft.yaml"), {});
  ASSERT_TRUE(c) << EnglishText(c.error().what);
  EXPECT_EQ(c->model_origin, "local folder");
  EXPECT_EQ(c->text.config, folder);
  EXPECT_EQ(c->text.batch, "2");
}

TEST(RunConfig, FindInHfCacheRefusesWhatIsNoId) {
  testing::TempDir hub("hf-hub");
  testing::WriteFile(hub / "models--a--b/snapshots/x/config.json", "{}");
  EXPECT_TRUE(FindInHfCache("a/b", {hub.path()}));
  EXPECT_FALSE(FindInHfCache("a/b/c", {hub.path()}));
  EXPECT_FALSE(FindInHfCache("../b", {hub.path()}));
  EXPECT_FALSE(FindInHfCache("b", {hub.path()}));
  EXPECT_FALSE(FindInHfCache("a/c", {hub.path()}));
}

TEST(RunConfigHostile, WrongTypeNamesTheFileAndKey) {
  EXPECT_EQ(Fails("base_model: NousResearch/Meta-Llama-3-8B\nmicro_batch_size: [1]\n"),
            "run.yaml: micro_batch_size: expected an integer, got a sequence");
  EXPECT_EQ(Fails("base_model: x\nmicro_batch_size: two\n"),
            "run.yaml: micro_batch_size: expected an integer, got 'two'");
  EXPECT_EQ(Fails("base_model: x\ngradient_checkpointing: {a: 1}\n"),
            "run.yaml: gradient_checkpointing: expected true or false, got a mapping");
  EXPECT_EQ(Fails("model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n"
                  "  lora_rank: [8]\n"),
            "run.yaml: model.lora_rank: expected an integer, got a sequence");
  EXPECT_EQ(Fails("model_name_or_path: x\nstage: sft\nlora_target: {q: 1}\n"),
            "run.yaml: lora_target: expected a list of names, got a mapping");
}

TEST(RunConfigHostile, NotAMappingOrNoKnownFormat) {
  EXPECT_EQ(Fails("- a\n- b\n"), "run.yaml: expected a mapping of keys at the top, got a sequence");
  EXPECT_NE(Fails("learning_rate: 1\n").find("run.yaml: not a run configuration this reads"),
            std::string::npos);
  EXPECT_NE(Fails("{\"zero_optimization\": {\"stage\": 3}}").find("a DeepSpeed config"),
            std::string::npos);
  EXPECT_EQ(Fails(""), "run.yaml: no YAML document (the file is empty)");
}

TEST(RunConfigHostile, AliasBombAndDepthAreBoundedAndNamed) {
  std::string bomb = "base_model: x\na: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    bomb += fmt::format("{0}: &{0} [*{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}]\n", c,
                        static_cast<char>(c - 1));
  }
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(Fails(bomb).find("run.yaml: line "), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_NE(Fails("base_model: " + std::string(100, '[') + std::string(100, ']'))
                .find("nested deeper than 32 levels"),
            std::string::npos);
}

TEST(RunConfigHostile, HugeFileRefusedBeforeParsing) {
  const std::string huge(kMaxRunConfigBytes + 1, '#');
  EXPECT_EQ(Fails(huge), "run.yaml: larger than 1048576 bytes; no run configuration is");
  testing::TempDir dir("run-config");
  testing::WriteFile(dir / "huge.yaml", huge);
  auto c = LoadRunConfig(dir.File("huge.yaml"), {});
  ASSERT_FALSE(c);
  EXPECT_NE(EnglishText(c.error().what).find(dir.File("huge.yaml")), std::string::npos);
}

TEST(RunConfigHostile, FifoIsAOneLineError) {
  testing::TempDir dir("run-config");
  const std::string fifo = dir.File("run.yaml");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  auto c = LoadRunConfig(fifo, {});  // no writer: must not wait for one
  ASSERT_FALSE(c);
  EXPECT_NE(EnglishText(c.error().what).find("a FIFO"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
}  // namespace headroom
