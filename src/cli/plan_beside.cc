#include "cli/plan_beside.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "base/bytes.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "pool/pool_survey.h"
#include "sys/meminfo.h"
#include "sys/sysroot.h"

namespace headroom {
namespace {

std::filesystem::path BesideRoot(const PlanFlags& fl, const CliEnv& env) {
  return fl.root.empty() ? env.default_root : std::filesystem::path(fl.root);
}

// --serve's request from the flags; nullopt without --serve. --context, --concurrency,
// --engine and --dtype need --serve.
std::optional<ServeRequest> ServeFromFlags(const PlanBesideFlags& f) {
  if (f.serve.empty()) {
    if (!f.context.empty() || !f.concurrency.empty() || !f.engine.empty() || !f.dtype.empty()) {
      throw UsageError{
          Tr("--context, --concurrency, --engine and --dtype describe --serve's "
             "server: give --serve MODEL")};
    }
    return std::nullopt;
  }
  ServeRequest r;
  r.model = f.serve;
  if (f.context.empty()) throw UsageError{Tr("--serve needs --context N (tokens per request)")};
  const auto context = ParsePositiveInt(f.context);
  if (!context) throw UsageError{"--context: " + TranslatedText(context.error().what)};
  r.context = *context;
  if (!f.concurrency.empty()) {
    const auto concurrency = ParsePositiveInt(f.concurrency);
    if (!concurrency) {
      throw UsageError{"--concurrency: " + TranslatedText(concurrency.error().what)};
    }
    r.concurrency = *concurrency;
  }
  if (!f.engine.empty()) {
    const auto engine = ParseServeEngine(f.engine);
    if (!engine) {
      throw UsageError{TrFormat("--engine: '{}' is not vllm, llama.cpp or ollama", f.engine)};
    }
    r.engine = *engine;
  }
  if (!f.dtype.empty() && !ServeDtypeCentibits(f.dtype)) {
    throw UsageError{
        TrFormat("--dtype: '{}' is not bf16, fp16, fp32, fp8, int8, int4 or nvfp4", f.dtype)};
  }
  r.dtype = f.dtype;
  return r;
}

ServeNeed NeedOf(const ServeRequest& r, std::string_view flag, uint64_t pool_bytes) {
  Message error;
  const auto spec = ResolveServeModel(r.model, &error);
  if (!spec) throw UsageError{std::string(flag) + ": " + TranslatedText(error)};
  return ComputeServeNeed(*spec, r, pool_bytes);
}

void PrintServeNeed(const CliEnv& env, const ServeNeed& n) {
  std::fprintf(env.out, "%s\n",
               TrFormat("server: {} on {}, {} tokens x {} requests, weights in {}", n.request.model,
                        Name(n.request.engine), n.request.context, n.request.concurrency, n.dtype)
                   .c_str());
  std::fprintf(env.out, "  %s\n",
               TrFormat("weights      {} ({} parameters)", FormatGB(n.weight_bytes),
                        FormatParamCount(n.params))
                   .c_str());
  std::fprintf(env.out, "  %s\n",
               TrFormat("KV cache     {} ({} bytes per token x {} tokens)", FormatGB(n.kv_bytes),
                        n.kv_bytes_per_token, n.kv_tokens)
                   .c_str());
  std::fprintf(
      env.out, "  %s\n",
      TrFormat("engine       {}: {}", FormatGB(n.overhead.bytes), TranslatedText(n.overhead.source))
          .c_str());
  std::fprintf(env.out, "  %s\n", TrFormat("total        {}", FormatGB(n.total_bytes)).c_str());
  if (n.vllm_cap) {
    std::fprintf(
        env.out, "  %s\n",
        TrFormat("smallest vLLM cap that holds it: --gpu-memory-utilization {:.2f}", *n.vllm_cap)
            .c_str());
  } else {
    std::fprintf(env.out, "  %s\n", Tr("no vLLM cap holds it: it needs more than the pool"));
  }
}

}  // namespace

void AddPlanBesideFlags(CLI::App& app, PlanBesideFlags& f) {
  app.add_option("--beside", f.beside,
                 Tr("plan beside an inference server: a fraction of the pool as vLLM's "
                    "--gpu-memory-utilization (0.5), a size (40GiB) or "
                    "serve:model:context:concurrency[:engine], optionally name:cap; repeatable"));
  app.add_option("--serve", f.serve,
                 Tr("the inference server's model: its need (weights, KV cache, engine), the "
                    "smallest vLLM cap, and the trainer planned beside it"));
  app.add_option("--context", f.context, Tr("--serve: tokens of context per request"));
  app.add_option("--concurrency", f.concurrency, Tr("--serve: requests at once (default 1)"));
  app.add_option("--engine", f.engine, Tr("--serve: vllm (default), llama.cpp or ollama"));
  app.add_option("--dtype", f.dtype,
                 Tr("--serve: the weights' dtype (bf16, fp16, fp32, fp8, int8, int4, nvfp4; "
                    "default the model's)"));
}

bool ServeOnly(const PlanBesideFlags& flags, const PlanFlags& fl) {
  return !flags.serve.empty() && fl.model.empty() && fl.config.empty() && fl.params.empty() &&
         fl.from.empty();
}

std::vector<BesideEntry> ResolvePlanBeside(const PlanBesideFlags& flags, const PlanFlags& fl,
                                           const CliEnv& env, PlanInputs* in) {
  const auto serve = ServeFromFlags(flags);
  if (flags.beside.empty() && !serve) return {};
  const uint64_t pool = in->budget.pool_bytes();
  std::vector<BesideCap> caps;
  std::vector<std::optional<ServeNeed>> needs;
  for (const auto& text : flags.beside) {
    Message error;
    auto cap = ParseBesideCap(text, in->budget.mem_total_bytes.value_or(0), &error);
    if (!cap) throw UsageError{TranslatedText(error)};
    needs.push_back(cap->serve ? std::optional(NeedOf(*cap->serve, "--beside", pool))
                               : std::nullopt);
    caps.push_back(std::move(*cap));
  }
  if (serve) {
    BesideCap cap;
    cap.text = "--serve " + serve->model;
    cap.engine = std::string(Name(serve->engine));
    cap.serve = serve;
    needs.push_back(NeedOf(*serve, "--serve", pool));
    caps.push_back(std::move(cap));
  }
  const SysRoot root(BesideRoot(fl, env));
  const auto survey = SurveyPool(root, GpuProcessList{}, getpid(), in->budget.mem_total_bytes);
  return ApplyBeside(caps, needs, RunningServers(survey.holders, survey.caps), pool, &in->budget);
}

int RunServeOnly(const CliEnv& env, const PlanBesideFlags& flags, const PlanFlags& fl) {
  const auto request = ServeFromFlags(flags);
  const SysRoot root(BesideRoot(fl, env));
  auto info = ReadMemInfo(root);
  if (!info) throw UsageError{TranslatedText(info.error().what)};
  const Budget budget = BudgetFromMemInfo(*info, 0, root.Path("proc/meminfo").string());
  const ServeNeed need = NeedOf(*request, "--serve", budget.pool_bytes());
  const uint64_t available = budget.mem_available_bytes.value_or(0);
  const bool fits = need.held_bytes > 0 && need.held_bytes <= available;
  if (fl.json) {
    nlohmann::json j = {{"serve", ServeNeedToJson(need)},
                        {"mem_total_bytes", budget.pool_bytes()},
                        {"mem_available_bytes", available},
                        {"fits", fits}};
    j["left_bytes"] = fits ? available - need.held_bytes : 0;
    std::fprintf(env.out, "%s\n", j.dump(2).c_str());
    return fits ? kExitOk : kExitNegative;
  }
  PrintServeNeed(env, need);
  if (fits) {
    std::fprintf(env.out, "%s\n",
                 TrFormat("it holds {} of MemAvailable {}; {} is left for a trainer",
                          FormatGB(need.held_bytes), FormatGB(available),
                          FormatGB(available - need.held_bytes))
                     .c_str());
  } else {
    std::fprintf(env.out, "%s\n",
                 TrFormat("it does not fit: it needs {}, MemAvailable is {}",
                          FormatGB(need.total_bytes), FormatGB(available))
                     .c_str());
  }
  return fits ? kExitOk : kExitNegative;
}

void PrintBeside(const CliEnv& env, const std::vector<BesideEntry>& entries) {
  for (const auto& e : entries) {
    if (e.need) PrintServeNeed(env, *e.need);
    std::fprintf(env.out, "%s\n", TranslatedText(BesideLine(e)).c_str());
  }
}

}  // namespace headroom
