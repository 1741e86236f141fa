// plan's input flags: their definitions (shared by `plan`, `ladder --plan-args`, `report
// --plan-args` and `doctor --workload`), --from FILE laid under them (ApplyRunConfig); the
// checks and the resolution are plan/plan_request.
#include "cli/plan_args.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "cli/cli11_i18n.h"
#include "cli/common_flags.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "config/pool_levels_config.h"
#include "plan/framework_profile.h"
#include "plan/plan_fields.h"
#include "plan/plan_words.h"

namespace headroom {

namespace {

// "hf, trl, unsloth, ...": the --framework names, with room for a help screen to break.
std::string FrameworkNamesForHelp() {
  std::string names;
  for (const auto& p : FrameworkProfiles())
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

}  // namespace

void AddPlanInputFlags(CLI::App& app, PlanFlags& fl) {
  // One option per field of the table (plan/plan_fields), in its order, --from after the
  // model; the help is the table's English msgid, translated here.
  for (const PlanField& f : PlanFields()) {
    const std::string flag(f.flag);
    std::string help = Tr(f.help);
    if (f.name == "framework") {  // its msgid has a field: the names
      const std::string names = FrameworkNamesForHelp();
      help = i18n_detail::FormatOrFallBack(help.c_str(), f.help, fmt::make_format_args(names));
    }
    if (f.kind == FieldKind::kFlag) {
      app.add_flag(flag, fl.master_weights, help);
    } else {
      app.add_option(flag, fl.*f.text, help);
    }
    if (f.name == "model") {
      app.add_option("--from", fl.from,
                     Tr("the run's own configuration file (axolotl, LLaMA-Factory, torchtune or "
                        "TRL YAML, or TRL JSON); flags beside it override it"));
    }
  }
}

std::vector<std::filesystem::path> HfCacheDirs(const GetEnvFn& getenv) {
  const auto var = [&](const char* name) -> std::string {
    const char* v = getenv(name);
    return v ? v : "";
  };
  if (!var("HF_HUB_CACHE").empty()) return {var("HF_HUB_CACHE")};
  if (!var("HF_HOME").empty()) return {std::filesystem::path(var("HF_HOME")) / "hub"};
  if (!var("XDG_CACHE_HOME").empty()) {
    return {std::filesystem::path(var("XDG_CACHE_HOME")) / "huggingface" / "hub"};
  }
  if (!var("HOME").empty()) return {std::filesystem::path(var("HOME")) / ".cache/huggingface/hub"};
  return {};
}

namespace {

// Whether the field's option (plan/plan_fields' flag) was on the command line.
bool Given(const CLI::App& app, std::string_view field) {
  const PlanField* f = FindPlanField(field);
  const CLI::Option* opt = f ? app.get_option_no_throw(std::string(f->flag)) : nullptr;
  return opt != nullptr && opt->count() > 0;
}

// The fields `given` says were given.
std::vector<std::string> GivenOf(const std::function<bool(std::string_view)>& given) {
  std::vector<std::string> names;
  for (const PlanField& f : PlanFields()) {
    if (given(f.name)) names.emplace_back(f.name);
  }
  return names;
}

}  // namespace

namespace {

// ApplyRunConfig with "given on the command line" asked of `given`.
RunConfig ApplyRunConfigGiven(const std::function<bool(std::string_view)>& given, PlanFlags& fl,
                              const GetEnvFn& getenv, PlanSources* sources) {
  RunConfigContext context;
  context.hf_cache_dirs = HfCacheDirs(getenv);
  auto loaded = LoadRunConfig(fl.from, context);
  if (!loaded) throw UsageError{"--from: " + TranslatedText(loaded.error().what)};
  RunConfig config = std::move(*loaded);
  const bool model_given = given("model") || given("config") || given("params");
  if (!model_given && config.model_error) {
    throw UsageError{"--from: " + TranslatedText(*config.model_error)};
  }
  if (model_given) config.model_origin.clear();  // the file's model is not the one planned
  // The file under the flags given (LayerPlanText decides what wins, and says so).
  PlanTextLayer flags{fl, GivenOf(given)};
  PlanTextLayer file{config.text, config.set};
  LayeredPlanText layered = LayerPlanText(flags, &file);
  static_cast<PlanFlagText&>(fl) = std::move(layered.text);
  if (sources) *sources = std::move(layered.sources);
  return config;
}

// The words with --from's value (--from FILE or --from=FILE) replaced by `path`.
std::vector<std::string> WithFromPath(std::vector<std::string> words, const std::string& path) {
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "--from" && i + 1 < words.size()) {
      words[++i] = path;
    } else if (words[i].starts_with("--from=")) {
      words[i] = "--from=" + path;
    }
  }
  return words;
}

}  // namespace

RunConfig ApplyRunConfig(const CLI::App& app, PlanFlags& fl, const GetEnvFn& getenv,
                         PlanSources* sources) {
  return ApplyRunConfigGiven([&](std::string_view field) { return Given(app, field); }, fl, getenv,
                             sources);
}

PlanSources FlagSources(const CLI::App& app, const PlanFlags& fl) {
  PlanTextLayer flags{fl, GivenOf([&](std::string_view field) { return Given(app, field); })};
  return LayerPlanText(flags).sources;
}

PlanContext CliPlanContext(const CliEnv& env, const std::string& default_root) {
  PlanContext context{default_root.empty() ? env.default_root : std::filesystem::path(default_root),
                      env.config.settings.reserve_bytes.value};
  context.unified_memory = env.config.settings.platform_kind.value != PlatformKind::kDiscrete;
  context.levels = LevelInputsOf(env.config.settings);
  return context;
}

PlanInputs ResolvePlanInputs(const PlanFlags& fl, const CliEnv& env) {
  Message error;
  auto request = ParsePlanRequest(fl, &error);
  if (!request) throw UsageError{TranslatedText(error)};
  auto in = ResolvePlanRequest(*request, CliPlanContext(env), &error);
  if (!in) throw UsageError{TranslatedText(error)};
  return std::move(*in);
}

std::vector<std::string> SplitWords(std::string_view text, std::string_view flag) {
  Message error;
  auto words = SplitShellWords(text, flag, &error);
  if (!words) throw UsageError{TranslatedText(error)};
  return std::move(*words);
}

PlanWords ReadPlanWords(const std::vector<std::string>& words, std::string_view flag,
                        PlanFlags base, const std::vector<std::string>& base_given) {
  PlanFlags fl = std::move(base);
  fl.from.clear();
  CLI::App app{"plan arguments", std::string(flag)};
  AddPlanInputFlags(app, fl);
  std::vector<std::string> reversed(words.rbegin(), words.rend());  // CLI11 parses it reversed
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw UsageError{fmt::format("{}: {}", flag, ParseErrorText(e))};
  }
  PlanWords out;
  out.words = words;
  PlanSources sources;  // with --from: which fields the file gave
  if (!fl.from.empty()) {
    // Made absolute now: the same file, whichever folder the words are read again from.
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(fl.from, ec);
    if (!ec) fl.from = absolute.lexically_normal().string();
    const auto given = [&](std::string_view field) {
      return Given(app, field) ||
             std::find(base_given.begin(), base_given.end(), field) != base_given.end();
    };
    try {
      RunConfig config = ApplyRunConfigGiven(given, fl, std::getenv, &sources);
      out.from = FromFile{fl.from, std::move(config)};
    } catch (const UsageError& e) {
      throw UsageError{fmt::format("{}: {}", flag, e.message)};
    }
    out.words = WithFromPath(words, fl.from);
  }
  Message error;
  auto request = ParsePlanRequest(fl, &error);
  if (!request) throw UsageError{fmt::format("{}: {}", flag, TranslatedText(error))};
  out.request = std::move(*request);
  if (!sources.empty()) out.request.sources = std::move(sources);
  return out;
}

PlanRequest ParsePlanWords(const std::vector<std::string>& words, std::string_view flag,
                           PlanFlags base) {
  return ReadPlanWords(words, flag, std::move(base)).request;
}

PlanRequest ParseWorkloadRequest(const std::string& text, std::optional<FromFile>* from) {
  std::vector<std::string> flags;
  std::vector<std::string> given;
  Message error;
  auto fields = ParseWorkloadWords(SplitWords(text, "--workload"), &flags, &error, &given);
  if (!fields) throw UsageError{TranslatedText(error)};
  PlanFlags fl;
  static_cast<PlanFlagText&>(fl) = std::move(*fields);
  PlanWords read = ReadPlanWords(flags, "--workload", std::move(fl), given);
  if (from) *from = std::move(read.from);
  return std::move(read.request);
}

PlanInputs ResolvePlanWords(const std::vector<std::string>& words, std::string_view flag,
                            const std::string& default_root, const CliEnv& env,
                            std::optional<FromFile>* from) {
  PlanWords read = ReadPlanWords(words, flag);
  if (from) *from = std::move(read.from);
  return ResolveRequest(read.request, flag, default_root, env);
}

PlanInputs ResolveRequest(const PlanRequest& request, std::string_view flag,
                          const std::string& default_root, const CliEnv& env) {
  Message error;
  auto in = ResolvePlanRequest(request, CliPlanContext(env, default_root), &error);
  if (!in) throw UsageError{fmt::format("{}: {}", flag, TranslatedText(error))};
  return std::move(*in);
}

}  // namespace headroom
