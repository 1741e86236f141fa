// `headroom ps`: who else holds the pool. flags -> NVML compute processes (optional) ->
// FindPoolHolders (sys/pool_holders.h) -> caps (sys/holder_caps.h) -> with --need, the
// advice (pool/pool_advice.h) -> table or JSON (schema_version 1, docs/ps.md).
//
// It only reads: nothing is signalled. The command to stop a holder is printed for the
// user to run. Environments are read for the few named variables only; nothing else from
// them is printed (they hold tokens), and secret-looking flags are masked in command lines.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/i18n.h"
#include "cli/level_flag.h"
#include "cli/message_text.h"
#include "cli/ps_view.h"
#include "gpu/nvml.h"
#include "pool/pool_survey.h"
#include "sys/meminfo.h"

namespace headroom {
namespace {

// ps's flags: the app, then the variables its options write.
struct PsCommandFlags final : CommandFlags {
  CLI::App app{
      Tr("List the processes that hold the memory pool or will grab it: NVML's GPU processes, "
         "inference servers (vllm, sglang, ollama, llama.cpp, tgi, tensorrt-llm), trainers and "
         "launchers (trl, axolotl, torchrun, accelerate, deepspeed), ray workers and python with "
         "torch loaded, with RSS, PSS, GPU memory and the cap each was started with.\n\n"
         "With --need, says for each whether it can stay beside a job of that size (keep) or "
         "should stop first, with the arithmetic, and prints the command to stop it. Nothing is "
         "ever signalled.\n\n"
         "exit status: 0 listed (with --need: the job fits beside everything kept); 1 with --need: "
         "something must stop first, or the job does not fit at all; 2 usage error"),
      "headroom ps"};
  std::string need_text, nvml_lib, root_dir;
  bool json = false;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefinePsFlags() {
  auto defined = std::make_unique<PsCommandFlags>();
  auto& [app, need_text, nvml_lib, root_dir, json] = *defined;
  app.add_option("--need", need_text,
                 Tr("the job's memory: SIZE or PCT of MemTotal (e.g. 4GiB, 10%)"));
  AddJsonFlag(app, json);
  AddNvmlLibFlag(app, nvml_lib);
  AddRootFlag(app, root_dir);
  return defined;
}

int RunPsCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& [app, need_text, nvml_lib, root_dir, json] = FlagsOf<PsCommandFlags>(given_flags);
  try {
    const SysRoot root = RootFromFlag(env, root_dir);
    const auto meminfo = ReadMemInfo(root);
    const std::optional<uint64_t> total = meminfo ? meminfo->total_bytes() : std::nullopt;
    std::optional<uint64_t> need;
    if (app.count("--need") > 0) {
      if (!total) {
        throw UsageError{TrFormat("--need: MemTotal unknown: {}",
                                  meminfo ? std::string(Tr("no MemTotal in proc/meminfo"))
                                          : TranslatedText(meminfo.error().what))};
      }
      need = PoolAmountFlag(need_text, *total, "--need");
    }
    const std::string library = ResolveNvmlLibrary(nvml_lib, std::getenv);
    GpuProcessList gpu = ReadGpuProcesses(library);
    // Asked for by name: a library that does not load is worth a line on stderr.
    if (!library.empty() && !gpu.processes) PrintError(env, gpu.note);
    // The reserve kept free is the guard's kill level: [guard] kill_level where configured.
    std::optional<uint64_t> reserve;
    if (need) reserve = KillLevelBytes(env, "", "--need", *total);
    const PoolSurvey survey = SurveyPool(root, std::move(gpu), ::getpid(), total, need, reserve);
    if (json) {
      // replace: command lines need not be UTF-8.
      PrintJson(env, PoolSurveyToJson(survey));
    } else {
      PrintPoolSurvey(env, survey);
    }
    const auto& advice = survey.advice;
    if (advice && !advice->fits) return kExitNegative;
    return kExitOk;
  } catch (const UsageError& e) {
    PrintError(env, "ps: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
