#include "plan/run_config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "base/safe_file.h"
#include "testing_files.h"

namespace headroom {
namespace {

using Keys = std::vector<std::string>;

Keys Sorted(Keys keys) {
  std::sort(keys.begin(), keys.end());
  return keys;
}

bool Has(const Keys& keys, const std::string& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// A real file from tests/fixtures/run_configs/ (SOURCES names each one's repository and commit),
// read with no Hugging Face cache, so a Hub id resolves to the catalog.
RunConfig Load(const std::string& name, const RunConfigContext& context = {}) {
  auto config = LoadRunConfig(testing::FixturePath("run_configs/" + name), context);
  EXPECT_TRUE(config) << (config ? "" : EnglishText(config.error().what));
  return config ? *config : RunConfig{};
}

std::string Fails(std::string_view text) {
  auto config = ParseRunConfig(text, "run.yaml", {});
  EXPECT_FALSE(config);
  return config ? "" : EnglishText(config.error().what);
}

TEST(RunConfigAxolotl, QloraExample) {
  const RunConfig c = Load("axolotl/llama-3-qlora.yml");
  EXPECT_EQ(c.format, RunFormat::kAxolotl);
  EXPECT_EQ(c.base_model, "NousResearch/Meta-Llama-3-8B");
  EXPECT_EQ(c.model_origin, "catalog");
  EXPECT_FALSE(c.model_error);
  EXPECT_EQ(c.text.model, "llama-3-8b");
  EXPECT_EQ(c.text.framework, "axolotl");
  EXPECT_EQ(c.text.method, "qlora");
  EXPECT_EQ(c.text.lora_rank, "32");
  EXPECT_EQ(c.text.lora_dropout, "0.05");
  EXPECT_EQ(c.text.lora_targets, "all-linear");
  EXPECT_EQ(c.text.batch, "2");
  EXPECT_EQ(c.text.seq, "4096");
  EXPECT_EQ(c.text.grad_ckpt, "on");
  EXPECT_EQ(c.text.optimizer, "adamw");  // paged_adamw_32bit: fp32 states
  EXPECT_EQ(c.text.attention, "sdpa");   // flash_attention: true
  EXPECT_TRUE(c.Sets("batch"));
  EXPECT_FALSE(c.Sets("loss"));
  EXPECT_FALSE(c.Sets("sharding"));
  EXPECT_EQ(c.not_modelled, Keys{});
}

TEST(RunConfigAxolotl, LigerFsdpFullFineTune) {
  const RunConfig c = Load("axolotl/llama-3-fft-8b-liger-fsdp.yaml");
  EXPECT_EQ(c.text.model, "llama-3.1-8b");
  EXPECT_EQ(c.text.method, "full");
  EXPECT_EQ(c.text.loss, "fused");  // liger_fused_linear_cross_entropy
  EXPECT_EQ(c.text.optimizer, "adamw");
  EXPECT_EQ(c.text.optimizer_step, "fused");  // adamw_torch_fused
  EXPECT_EQ(c.text.sharding, "fsdp");
  EXPECT_EQ(c.text.batch, "2");
  EXPECT_EQ(c.text.seq, "4096");
  EXPECT_EQ(Sorted(c.not_modelled),
            Sorted(Keys{"fsdp_config.fsdp_offload_params", "liger_rope", "liger_rms_norm",
                        "liger_glu_activation", "fsdp_config.fsdp_limit_all_gathers",
                        "fsdp_config.fsdp_cpu_ram_efficient_loading"}));
}

TEST(RunConfigAxolotl, EightBitLoraDpo) {
  const RunConfig c = Load("axolotl/llama-3-instruct-dpo-lora-8b.yml");
  EXPECT_EQ(c.text.model, "llama-3-8b");
  EXPECT_EQ(c.text.method, "qlora");  // adapter lora + load_in_8bit
  EXPECT_EQ(c.text.weight_dtype, "int8");
  EXPECT_EQ(c.text.workload, "dpo");
  EXPECT_EQ(c.text.optimizer, "adamw-8bit");
  EXPECT_EQ(c.not_modelled, Keys{});
}

TEST(RunConfigAxolotl, CutCrossEntropyOffloadedCheckpointing) {
  const RunConfig c = Load("axolotl/qwen3-32b-qlora.yaml");
  EXPECT_EQ(c.text.model, "qwen3-32b");
  EXPECT_EQ(c.text.method, "qlora");
  EXPECT_EQ(c.text.lora_rank, "16");
  EXPECT_EQ(c.text.lora_targets, "q_proj,k_proj,v_proj,o_proj,down_proj,up_proj");
  EXPECT_EQ(c.text.loss, "fused");
  EXPECT_EQ(c.text.grad_ckpt, "on");
  EXPECT_EQ(c.text.batch, "1");
  EXPECT_EQ(Sorted(c.not_modelled),
            Sorted(Keys{"gradient_checkpointing: offload", "optimizer: adamw_torch_4bit",
                        "lora_mlp_kernel", "lora_qkv_kernel", "lora_o_kernel"}));
  EXPECT_FALSE(c.Sets("optimizer"));  // the planner's default stands, and the key is listed
}

TEST(RunConfigLlamaFactory, LoraSftWithItsDefaults) {
  const RunConfig c = Load("llama-factory/llama3_lora_sft.yaml");
  EXPECT_EQ(c.format, RunFormat::kLlamaFactory);
  EXPECT_EQ(c.text.framework, "llama-factory");
  EXPECT_EQ(c.text.model, "llama-3-8b");
  EXPECT_EQ(c.text.method, "lora");
  EXPECT_EQ(c.text.lora_rank, "8");  // LLaMA-Factory's default, not the planner's 16
  EXPECT_EQ(c.text.lora_dropout, "0");
  EXPECT_EQ(c.text.lora_targets, "all-linear");
  EXPECT_EQ(c.text.batch, "1");
  EXPECT_EQ(c.text.seq, "1024");
  EXPECT_EQ(c.text.grad_ckpt, "on");
  EXPECT_EQ(c.not_modelled, Keys{});
}

TEST(RunConfigLlamaFactory, OnTheFlyQlora) {
  const RunConfig c = Load("llama-factory/llama3_lora_sft_otfq.yaml");
  EXPECT_EQ(c.text.method, "qlora");
  EXPECT_EQ(c.text.double_quant, "on");
  EXPECT_EQ(c.text.seq, "2048");
  EXPECT_EQ(c.not_modelled, Keys{});
}

TEST(RunConfigLlamaFactory, Dpo) {
  const RunConfig c = Load("llama-factory/llama3_lora_dpo.yaml");
  EXPECT_EQ(c.text.workload, "dpo");
  EXPECT_EQ(c.text.method, "lora");
  EXPECT_EQ(c.not_modelled, Keys{});
}

TEST(RunConfigLlamaFactory, DeepSpeedStageFromItsNameWhenTheFileIsNotHere) {
  const RunConfig c = Load("llama-factory/llama3_full_sft.yaml");
  EXPECT_EQ(c.text.method, "full");
  EXPECT_EQ(c.text.sharding, "zero3");  // examples/deepspeed/ds_z3_config.json
  EXPECT_EQ(c.not_modelled, Keys{});
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

TEST(RunConfigLlamaFactory, CutCrossEntropyAndUnknownKeys) {
  const RunConfig c = Load("llama-factory/qwen3_full_sft_cce.yaml");
  EXPECT_EQ(c.text.model, "qwen3-8b");
  EXPECT_EQ(c.text.loss, "fused");
  EXPECT_EQ(c.text.seq, "65536");
  EXPECT_EQ(c.text.sharding, "zero3");
  EXPECT_EQ(Sorted(c.not_modelled), Sorted(Keys{"deepspeed (offload)", "attn"}));
}

TEST(RunConfigTorchtune, QloraSingleDevice) {
  const RunConfig c = Load("torchtune/llama3_1-8B_qlora_single_device.yaml");
  EXPECT_EQ(c.format, RunFormat::kTorchtune);
  EXPECT_EQ(c.base_model, "torchtune.models.llama3_1.qlora_llama3_1_8b");
  EXPECT_EQ(c.text.model, "llama-3.1-8b");
  EXPECT_EQ(c.text.method, "qlora");
  EXPECT_EQ(c.text.lora_rank, "8");
  EXPECT_EQ(c.text.lora_dropout, "0");
  EXPECT_EQ(c.text.lora_targets, "q_proj,v_proj,k_proj,output_proj,gate,up,down");
  EXPECT_EQ(c.text.batch, "2");
  EXPECT_EQ(c.text.grad_ckpt, "on");
  EXPECT_EQ(c.text.optimizer, "adamw");
  EXPECT_EQ(c.text.optimizer_step, "fused");
  EXPECT_EQ(c.text.loss, "chunked");  // CEWithChunkedOutputLoss
  EXPECT_FALSE(c.Sets("seq"));
  EXPECT_EQ(c.not_modelled, Keys{"tokenizer.max_seq_len: null (sample lengths are the dataset's)"});
}

TEST(RunConfigTorchtune, LoraDpo) {
  const RunConfig c = Load("torchtune/llama3_1-8B_lora_dpo_single_device.yaml");
  EXPECT_EQ(c.text.method, "lora");
  EXPECT_EQ(c.text.workload, "dpo");
  EXPECT_EQ(c.text.seq, "1024");
  EXPECT_EQ(c.text.batch, "4");
  EXPECT_EQ(c.text.lora_targets, "q_proj,v_proj,output_proj,gate,up,down");
  EXPECT_EQ(c.not_modelled, Keys{});
}

TEST(RunConfigTorchtune, FullWithOptimizerInBackward) {
  const RunConfig c = Load("torchtune/llama3_1-8B_full_single_device.yaml");
  EXPECT_EQ(c.text.method, "full");
  EXPECT_EQ(c.text.optimizer, "adamw-8bit");  // bitsandbytes.optim.PagedAdamW8bit
  EXPECT_TRUE(Has(c.not_modelled, "optimizer_in_bwd"));
  EXPECT_TRUE(Has(c.not_modelled,
                  "tokenizer.max_seq_len: null (sample lengths are the "
                  "dataset's)"));
}

TEST(RunConfigTorchtune, GrpoWithAReferenceModel) {
  const RunConfig c = Load("torchtune/llama3_1-8B_full_grpo.yaml");
  EXPECT_EQ(c.text.model, "llama-3.1-8b");  // checkpoint_dir is ${base_model_path}: the builder
  EXPECT_EQ(c.text.method, "full");
  EXPECT_EQ(c.text.workload, "grpo");  // GRPOSimpleLoss
  EXPECT_EQ(c.text.batch, "1");
  EXPECT_EQ(Sorted(c.not_modelled),
            Sorted(Keys{"tokenizer.max_seq_len: null (sample lengths are the dataset's)",
                        "ref_checkpointer", "max_generated_tokens"}));
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

TEST(RunConfigTrl, OpenR1GrpoWithColocatedVllm) {
  const RunConfig c = Load("open-r1/qwen2.5-1.5b-instruct-grpo-config_demo.yaml");
  EXPECT_EQ(c.format, RunFormat::kTrl);
  EXPECT_EQ(c.text.model, "qwen2.5-1.5b");
  EXPECT_EQ(c.text.method, "full");
  EXPECT_EQ(c.text.workload, "grpo");
  EXPECT_EQ(c.text.seq, "1536");  // max_prompt_length 512 + max_completion_length 1024
  EXPECT_EQ(c.text.rollout_fraction, "0.7");
  EXPECT_EQ(c.text.batch, "16");
  EXPECT_EQ(c.text.grad_ckpt, "on");
  EXPECT_EQ(c.not_modelled, Keys{"vllm_device"});
}

TEST(RunConfigTrl, AlignmentHandbookQlora) {
  const RunConfig c = Load("alignment-handbook/zephyr-7b-beta-sft-config_qlora.yaml");
  EXPECT_EQ(c.format, RunFormat::kTrl);
  EXPECT_EQ(c.text.framework, "trl");
  EXPECT_EQ(c.text.model, "mistral-7b");
  EXPECT_EQ(c.text.method, "qlora");
  EXPECT_EQ(c.text.double_quant, "off");  // use_bnb_nested_quant defaults to False
  EXPECT_EQ(c.text.lora_rank, "16");
  EXPECT_EQ(c.text.lora_targets, "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj");
  EXPECT_EQ(c.text.attention, "sdpa");  // flash_attention_2
  EXPECT_EQ(c.text.batch, "4");
  EXPECT_EQ(c.text.seq, "2048");  // max_seq_length, the older SFTConfig key
  EXPECT_EQ(c.text.grad_ckpt, "on");
  // Evaluation at batch 8 against training at 4: a peak the plan of a training step misses.
  EXPECT_EQ(c.not_modelled, Keys{"per_device_eval_batch_size: 8"});
}

// A real JSON file: Firefly's training arguments (train_args/sft/qlora/*.json), which its
// train.py reads with transformers' HfArgumentParser.parse_json_file into TrainingArguments
// and its own CustomizedArguments (component/argument.py). Its own keys decide the adapter:
// train_mode qlora by default, the file's lora_rank 64, every linear layer, an NF4 base with
// double quantization, and Unsloth's loader (use_unsloth).
TEST(RunConfigFirefly, TrainingArgumentsWithItsOwnKeys) {
  const RunConfig c = Load("firefly/llama3-8b-sft-qlora.json");
  EXPECT_EQ(c.format, RunFormat::kFirefly);
  EXPECT_EQ(c.base_model, "NousResearch/Meta-Llama-3-8B-Instruct");
  EXPECT_EQ(c.model_origin, "catalog");
  EXPECT_EQ(c.text.model, "llama-3-8b");
  EXPECT_EQ(c.text.framework, "unsloth");  // use_unsloth: true
  EXPECT_EQ(c.text.method, "qlora");       // no train_mode: CustomizedArguments' default
  EXPECT_EQ(c.text.lora_rank, "64");
  EXPECT_EQ(c.text.lora_dropout, "0.05");
  EXPECT_EQ(c.text.lora_targets, "all");  // find_all_linear_names: every Linear4bit
  EXPECT_EQ(c.text.double_quant, "on");   // bnb_4bit_use_double_quant=True
  EXPECT_EQ(c.text.batch, "1");           // per_device_train_batch_size
  EXPECT_EQ(c.text.seq, "1024");          // max_seq_length
  EXPECT_EQ(c.text.grad_ckpt, "on");
  EXPECT_EQ(c.text.optimizer, "adamw");  // paged_adamw_32bit: fp32 states
  EXPECT_FALSE(c.Sets("workload"));      // task_type sft by default
  // Data loader workers hold host memory the plan does not count; the rest is data, logging
  // and the template.
  EXPECT_EQ(c.not_modelled, Keys{"dataloader_num_workers"});
}

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

TEST(RunConfigTrl, DpoRecipeWithAModelNotHere) {
  const RunConfig c = Load("alignment-handbook/zephyr-7b-beta-dpo-config_full.yaml");
  EXPECT_EQ(c.text.workload, "dpo");
  EXPECT_EQ(c.text.method, "full");
  EXPECT_EQ(c.text.batch, "8");
  EXPECT_EQ(c.text.seq, "1024");
  EXPECT_EQ(c.text.optimizer, "adamw");
  ASSERT_TRUE(c.model_error);
  const std::string why = EnglishText(*c.model_error);
  EXPECT_NE(why.find("zephyr-7b-beta-dpo-config_full.yaml: model_name_or_path: "
                     "'alignment-handbook/zephyr-7b-sft-full' is not in the catalog"),
            std::string::npos)
      << why;
}

TEST(RunConfigTrl, CliExampleTakesTrainingArgumentsDefaults) {
  const RunConfig c = Load("trl/example_config.yaml");
  EXPECT_EQ(c.text.model, "qwen2.5-0.5b");
  EXPECT_EQ(c.text.method, "full");
  EXPECT_EQ(c.text.batch, "8");   // TrainingArguments' per_device_train_batch_size
  EXPECT_EQ(c.text.seq, "1024");  // SFTConfig's max_length
  EXPECT_EQ(c.text.grad_ckpt, "on");
  EXPECT_EQ(c.not_modelled, Keys{});
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
