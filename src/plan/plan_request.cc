// Implementation notes: the checks are those `plan` made on its flags (moved here from
// cli/plan_args.cc with their messages unchanged, so po/zh_TW.po still matches them). A
// failure inside this file is thrown as a FlagFailure and caught at each public function, so no
// exception leaves the module. The JSON reader turns each value back into a flag's text and
// runs ParsePlanRequest, so a stored request passes exactly the checks a typed one does.
#include "plan/plan_request.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

#include "base/bytes.h"
#include "model/catalog.h"
#include "model/hf_config.h"
#include "plan/framework_profile.h"
#include "plan/plan_fields.h"
#include "sys/meminfo.h"
#include "sys/sysroot.h"

namespace headroom {
namespace {

struct FlagFailure {
  Message message;
};

// "--flag: reason": the flag and a parser's reason, as they are in every language.
[[noreturn]] void FailFlag(std::string_view flag, const Message& reason) {
  throw FlagFailure{MsgFrom("{}: {}", flag, reason)};
}

template <typename T>
T Need(Result<T> r, std::string_view flag) {
  if (!r) FailFlag(flag, r.error().what);
  return std::move(r).value();
}

std::optional<int64_t> OptionalInt(const std::string& text, std::string_view flag) {
  if (text.empty()) return std::nullopt;
  return Need(ParsePositiveInt(text), flag);
}

// A count's bound, from its row in plan/plan_fields (where each one's reason is given).
int64_t MaxOf(std::string_view flag) {
  for (const PlanField& f : PlanFields()) {
    if (f.flag == flag) return f.max;
  }
  return 0;
}

// A model dimension, refused by its own flag past its bound, where the architecture's check
// (model/model_spec.cc CompleteAndValidate) would blame --params.
std::optional<int64_t> ShapeInt(const std::string& text, std::string_view flag) {
  const std::optional<int64_t> v = OptionalInt(text, flag);
  const int64_t max = MaxOf(flag);
  if (v && *v > max) throw FlagFailure{Msg("{}: {} is absurdly large (at most {})", flag, *v, max)};
  return v;
}

bool OnOff(const std::string& v, std::string_view flag) {
  if (v == "on" || v == "true" || v == "yes" || v == "1") return true;
  if (v == "off" || v == "false" || v == "no" || v == "0") return false;
  throw FlagFailure{Msg("{}: '{}' is not on or off", flag, v)};
}

double Fraction(const std::string& v, std::string_view flag, double lo, double hi) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(d) || d < lo || d >= hi) {
    throw FlagFailure{Msg("{}: '{}' is not a number in [{:g}, {:g})", flag, v, lo, hi)};
  }
  return d;
}

// The model's source and, for --params, the count and the shape given.
void ParseModel(const PlanFlagText& fl, PlanRequest* r) {
  const int given = !fl.model.empty() + !fl.config.empty() + !fl.params.empty();
  if (given == 0) {
    throw FlagFailure{
        Msg("no model: give a catalog name, --config PATH or --params N "
            "(headroom plan --list-models lists the catalog)")};
  }
  if (given > 1) {
    throw FlagFailure{
        Msg("conflicting flags: give only one of a catalog name, --config and --params")};
  }
  const bool shape_flags = !fl.hidden.empty() || !fl.layers.empty() || !fl.heads.empty() ||
                           !fl.kv_heads.empty() || !fl.intermediate.empty() || !fl.vocab.empty() ||
                           !fl.experts.empty() || !fl.active_experts.empty();
  if (shape_flags && fl.params.empty()) {
    throw FlagFailure{
        Msg("conflicting flags: --hidden, --layers, --heads, --kv-heads, "
            "--intermediate, --vocab, --experts and --active-experts go with --params")};
  }
  if (!fl.model.empty()) {
    r->source = ModelSource::kCatalog;
    r->model = fl.model;
    return;
  }
  if (!fl.config.empty()) {
    r->source = ModelSource::kConfig;
    r->model = fl.config;
    return;
  }
  r->source = ModelSource::kParams;
  r->params = Need(ParseParamCount(fl.params), "--params");
  ModelShape& s = r->shape;
  s.hidden = ShapeInt(fl.hidden, "--hidden");
  s.layers = ShapeInt(fl.layers, "--layers");
  s.heads = ShapeInt(fl.heads, "--heads");
  s.kv_heads = ShapeInt(fl.kv_heads, "--kv-heads");
  s.intermediate = ShapeInt(fl.intermediate, "--intermediate");
  s.vocab = ShapeInt(fl.vocab, "--vocab");
  if (!fl.experts.empty()) {
    s.experts = ShapeInt(fl.experts, "--experts");
    s.active_experts = ShapeInt(fl.active_experts, "--active-experts");
  } else if (!fl.active_experts.empty()) {
    throw FlagFailure{Msg("--active-experts: needs --experts")};
  }
}

Workload ParseWorkload(const PlanFlagText& fl) {
  Workload w;
  w.method = Need(ParseMethod(fl.method), "--method");
  if (!IsLora(w.method) &&
      (!fl.lora_rank.empty() || !fl.lora_targets.empty() || !fl.lora_dropout.empty())) {
    throw FlagFailure{
        Msg("conflicting flags: --lora-rank, --lora-targets and --lora-dropout need a "
            "LoRA method (lora, qlora, nvfp4-lora), not --method full")};
  }
  if (!fl.lora_rank.empty()) {
    // A rank is at most a matrix's smaller side; 2^24 is the largest any model here has. The
    // model's own hidden size is checked once the model is known (ResolvePlanRequest).
    w.lora_rank = *ShapeInt(fl.lora_rank, "--lora-rank");
  }
  if (!fl.lora_targets.empty())
    w.lora_targets = Need(ParseLoraTargets(fl.lora_targets), "--lora-targets");
  if (!fl.lora_dropout.empty()) w.lora_dropout = Fraction(fl.lora_dropout, "--lora-dropout", 0, 1);
  w.weight_dtype = fl.weight_dtype.empty() ? DefaultWeightDType(w.method)
                                           : Need(ParseDType(fl.weight_dtype), "--weight-dtype");
  const DType d = w.weight_dtype;
  const bool four_bit = d == DType::kNf4 || d == DType::kInt4 || d == DType::kNvfp4;
  const bool eight_bit = d == DType::kFp8 || d == DType::kInt8;
  if (w.method == Method::kFull && (four_bit || eight_bit)) {
    throw FlagFailure{
        Msg("conflicting flags: --method full trains every weight, which "
            "cannot be stored as {}; use --method qlora or a 16/32-bit dtype",
            Name(d))};
  }
  if (w.method == Method::kQlora && !four_bit && !eight_bit) {
    throw FlagFailure{
        Msg("conflicting flags: --method qlora quantizes the base weights; "
            "--weight-dtype {} is plain LoRA (use --method lora)",
            Name(d))};
  }
  if (w.method == Method::kNvfp4Lora && d != DType::kNvfp4) {
    throw FlagFailure{Msg("conflicting flags: --method nvfp4-lora needs --weight-dtype nvfp4")};
  }
  if (w.method == Method::kLora && (four_bit || eight_bit)) {
    throw FlagFailure{
        Msg("conflicting flags: --weight-dtype {} quantizes the base "
            "weights: use --method qlora",
            Name(d))};
  }
  if (d == DType::kFp32) w.compute_dtype = DType::kFp32;
  w.double_quant = OnOff(fl.double_quant, "--double-quant");
  w.optimizer = Need(ParseOptimizer(fl.optimizer), "--optimizer");
  w.optimizer_step = Need(ParseOptimizerStep(fl.optimizer_step), "--optimizer-step");
  w.master_weights = fl.master_weights;
  w.batch = Need(ParsePositiveInt(fl.batch), "--batch");
  w.seq = Need(ParsePositiveInt(fl.seq), "--seq");
  // The bounds (plan/plan_fields) are far past any real run and keep the products inside
  // 64-bit arithmetic.
  if (w.seq > MaxOf("--seq")) throw FlagFailure{Msg("--seq: {} is absurdly large", w.seq)};
  if (w.batch > MaxOf("--batch")) throw FlagFailure{Msg("--batch: {} is absurdly large", w.batch)};
  if (fl.grad_ckpt == "offload") {
    w.grad_ckpt = w.offload_checkpoints = true;
  } else if (fl.grad_ckpt == "on" || fl.grad_ckpt == "off") {
    w.grad_ckpt = OnOff(fl.grad_ckpt, "--grad-ckpt");
  } else {
    try {
      w.grad_ckpt = OnOff(fl.grad_ckpt, "--grad-ckpt");  // true, yes, 1, false, no, 0
    } catch (const FlagFailure&) {
      throw FlagFailure{Msg("--grad-ckpt: '{}' is not on, off or offload", fl.grad_ckpt)};
    }
  }
  w.attention = Need(ParseAttention(fl.attention), "--attention");
  w.loss = Need(ParseLossKind(fl.loss), "--loss");
  w.kind = Need(ParseWorkloadKind(fl.workload), "--workload");
  if (!fl.rollout_fraction.empty()) {
    if (w.kind != WorkloadKind::kGrpo) {
      throw FlagFailure{Msg("conflicting flags: --rollout-fraction goes with --workload grpo")};
    }
    w.rollout_fraction = Fraction(fl.rollout_fraction, "--rollout-fraction", 0, 1);
  }
  return w;
}

// --devices N and --sharding NAME (plan/sharding.h): how many nodes share the run, and how.
Parallelism ParseParallel(const PlanFlagText& fl) {
  Parallelism p;
  if (!fl.devices.empty()) {
    p.devices = Need(ParsePositiveInt(fl.devices), "--devices");
    if (p.devices > MaxOf("--devices")) {
      throw FlagFailure{
          Msg("--devices: {} is absurdly large (at most {})", p.devices, MaxOf("--devices"))};
    }
  }
  if (!fl.sharding.empty()) {
    p.sharding = Need(ParseSharding(fl.sharding), "--sharding");
    p.sharding_given = true;
  }
  return p;
}

void ParseBudget(const PlanFlagText& fl, PlanRequest* r) {
  if (!fl.budget.empty()) {
    if (!fl.reserve.empty()) {
      throw FlagFailure{
          Msg("conflicting flags: --reserve applies to MemAvailable; --budget is "
              "already the whole budget")};
    }
    r->budget_bytes = Need(ParseBytes(fl.budget), "--budget");
  } else if (!fl.reserve.empty()) {
    r->reserve_bytes = Need(ParseBytes(fl.reserve, true), "--reserve");
  }
  if (!fl.overhead.empty()) r->overhead_bytes = Need(ParseBytes(fl.overhead, true), "--overhead");
  r->root = fl.root;
  if (fl.platform == "unified") {
    r->unified_memory = true;
  } else if (fl.platform == "discrete") {
    r->unified_memory = false;
  } else if (!fl.platform.empty()) {
    throw FlagFailure{Msg("--platform: '{}' is not unified or discrete", fl.platform)};
  }
}

double LogRatio(const ModelSpec& m, uint64_t params) {
  return std::fabs(std::log(static_cast<double>(TotalParams(m)) / static_cast<double>(params)));
}

// --params with optional shape flags. Shape fields not given are borrowed from the
// catalog's dense model nearest in size, which is said in the plan's notes.
ModelSpec SpecFromParams(const PlanRequest& r, std::vector<Message>* notes) {
  const uint64_t params = r.params;
  const ModelShape& shape = r.shape;
  const ModelSpec* nearest = nullptr;
  for (const ModelSpec& m : Catalog()) {
    if (m.num_experts > 0) continue;
    if (!nearest || LogRatio(m, params) < LogRatio(*nearest, params)) nearest = &m;
  }
  ModelSpec s = nearest ? *nearest : ModelSpec{};
  s.name = fmt::format("custom {}", FormatParamCount(params));
  s.family = "custom";
  s.published_params = 0;
  s.published_source.clear();
  bool borrowed = false;
  auto set = [&](const std::optional<int64_t>& given, int64_t* field) {
    if (!given) {
      borrowed = true;
      return;
    }
    *field = *given;
  };
  set(shape.hidden, &s.hidden_size);
  set(shape.layers, &s.num_layers);
  set(shape.heads, &s.num_heads);
  if (shape.heads || shape.hidden) s.head_dim = 0;  // recompute from the shape
  if (!shape.kv_heads && shape.heads) s.num_kv_heads = 0;
  set(shape.kv_heads, &s.num_kv_heads);
  set(shape.intermediate, &s.intermediate_size);
  set(shape.vocab, &s.vocab_size);
  if (shape.experts) {
    s.num_experts = *shape.experts;
    s.moe_intermediate_size = 0;
    s.experts_per_token =
        shape.active_experts ? *shape.active_experts : std::min<int64_t>(2, s.num_experts);
  }
  s.extra_params = 0;
  s.exact_params = params;  // the count the user gave wins over the shape's
  if (const Message err = CompleteAndValidate(&s); !err.empty()) {
    // The shape flags given are what made it invalid (the borrowed fields are a catalog
    // model's, valid): name them, not --params.
    std::string flags;
    const std::pair<const char*, bool> given[] = {
        {"--hidden", shape.hidden.has_value()},
        {"--layers", shape.layers.has_value()},
        {"--heads", shape.heads.has_value()},
        {"--kv-heads", shape.kv_heads.has_value()},
        {"--intermediate", shape.intermediate.has_value()},
        {"--vocab", shape.vocab.has_value()},
        {"--experts", shape.experts.has_value()},
        {"--active-experts", shape.active_experts.has_value()}};
    for (const auto& [flag, is_given] : given) {
      if (is_given) flags += (flags.empty() ? "" : ", ") + std::string(flag);
    }
    if (flags.empty()) throw FlagFailure{Msg("--params: the architecture is not valid: {}", err)};
    throw FlagFailure{Msg("{}: the architecture is not valid: {}", flags, err)};
  }
  if (borrowed && nearest) {
    notes->push_back(Msg(
        "architecture fields not given were taken from {} (the catalog's nearest dense model); "
        "give --hidden --layers --heads --kv-heads --intermediate --vocab for exact activations",
        nearest->name));
  }
  return s;
}

ModelSpec ResolveModel(const PlanRequest& r, std::vector<Message>* notes) {
  switch (r.source) {
    case ModelSource::kCatalog: {
      if (const ModelSpec* m = FindModel(r.model)) return *m;
      std::string names;
      for (const auto& n : ClosestModelNames(r.model, 3)) names += (names.empty() ? "" : ", ") + n;
      throw FlagFailure{
          Msg("unknown model '{}' (closest: {}; see --list-models, or use "
              "--config or --params)",
              r.model, names)};
    }
    case ModelSource::kConfig: {
      std::optional<uint64_t> inconsistent;
      auto spec = ReadModelPath(r.model, &inconsistent);
      if (!spec) FailFlag("--config", spec.error().what);
      if (spec->exact_params) {
        notes->push_back(
            Msg("exact parameter count {} read from safetensors headers", *spec->exact_params));
      }
      if (inconsistent) {
        notes->push_back(
            Msg("the safetensors headers in {} hold {} parameters where config.json describes "
                "{} (a partial download?): they are not used; the count is config.json's",
                r.model, *inconsistent, ArchitectureParams(*spec)));
      }
      return std::move(spec).value();
    }
    case ModelSource::kParams:
      break;
  }
  return SpecFromParams(r, notes);
}

Budget ResolveBudget(const PlanRequest& r, const PlanContext& context) {
  const SysRoot root(r.root.empty() ? context.default_root : std::filesystem::path(r.root));
  if (r.budget_bytes) {
    auto info = ReadMemInfo(root);
    return BudgetFromSize(*r.budget_bytes, info ? std::optional<MemInfo>(*info) : std::nullopt);
  }
  LevelInputs levels = context.levels;
  if (r.reserve_bytes) {
    levels.reserve = GivenLevel{*r.reserve_bytes, std::nullopt, LevelOrigin::kFlag, "--reserve"};
  } else if (!levels.reserve && context.default_reserve_bytes != kDefaultReserveBytes) {
    levels.reserve = GivenLevel{context.default_reserve_bytes, std::nullopt, LevelOrigin::kConfig,
                                "plan.reserve"};
  }
  auto info = ReadMemInfo(root);
  if (!info) throw FlagFailure{Msg("{} (or give --budget SIZE)", info.error().what)};
  if (!info->EstimatedAvailable()) {
    throw FlagFailure{
        Msg("{}: no MemAvailable and no MemFree to estimate it from "
            "(give --budget SIZE)",
            root.Path("proc/meminfo").string())};
  }
  return BudgetFromMemInfo(*info, levels, root.Path("proc/meminfo").string());
}

[[noreturn]] void FailKey(Message what) { throw FlagFailure{std::move(what)}; }

// One JSON value as the text its flag would have been given (the field's kind, from the
// table in plan/plan_fields).
void ReadKey(const PlanField& field, const nlohmann::json& v, PlanFlagText* text) {
  const std::string key(field.json_key);
  switch (field.kind) {
    case FieldKind::kText:
      if (!v.is_string()) FailKey(Msg("plan request: \"{}\" is not a string", key));
      SetFieldText(*text, field, v.get<std::string>());
      return;
    case FieldKind::kCount:
      // Signed or unsigned integers; a negative one is refused by the flag's own check.
      if (v.is_number_unsigned()) {
        SetFieldText(*text, field, std::to_string(v.get<uint64_t>()));
      } else if (v.is_number_integer()) {
        SetFieldText(*text, field, std::to_string(v.get<int64_t>()));
      } else {
        FailKey(Msg("plan request: \"{}\" is not an integer", key));
      }
      return;
    case FieldKind::kFraction:
      if (!v.is_number()) FailKey(Msg("plan request: \"{}\" is not a number", key));
      SetFieldText(*text, field, fmt::format("{}", v.get<double>()));  // reads back the same
      return;
    case FieldKind::kOnOff:
      if (!v.is_boolean()) FailKey(Msg("plan request: \"{}\" is not true or false", key));
      SetFieldText(*text, field, v.get<bool>() ? "on" : "off");
      return;
    case FieldKind::kCheckpoint:  // true, false or "offload"
      if (v.is_string() && v.get<std::string>() == "offload") {
        SetFieldText(*text, field, "offload");
        return;
      }
      if (!v.is_boolean())
        FailKey(Msg("plan request: \"{}\" is not true, false or \"offload\"", key));
      SetFieldText(*text, field, v.get<bool>() ? "on" : "off");
      return;
    case FieldKind::kFlag:
      if (!v.is_boolean()) FailKey(Msg("plan request: \"{}\" is not true or false", key));
      SetFieldText(*text, field, v.get<bool>() ? "on" : "");
      return;
    case FieldKind::kNames: {
      if (!v.is_array() || v.empty())
        FailKey(Msg("plan request: \"{}\" is not an array of names", key));
      std::string joined;
      for (const auto& name : v) {
        if (!name.is_string()) FailKey(Msg("plan request: \"{}\" is not an array of names", key));
        joined += (joined.empty() ? "" : ",") + name.get<std::string>();
      }
      SetFieldText(*text, field, joined);
      return;
    }
  }
}

// A field's text as its JSON value (the reverse of ReadKey).
nlohmann::json KeyValue(const PlanField& field, const std::string& text) {
  switch (field.kind) {
    case FieldKind::kText:
      return text;
    case FieldKind::kCount:
      return std::strtoull(text.c_str(), nullptr, 10);
    case FieldKind::kFraction:
      return std::strtod(text.c_str(), nullptr);
    case FieldKind::kOnOff:
    case FieldKind::kFlag:
      return text == "on";
    case FieldKind::kCheckpoint:
      return text == "offload" ? nlohmann::json(text) : nlohmann::json(text == "on");
    case FieldKind::kNames: {
      nlohmann::json names = nlohmann::json::array();
      size_t start = 0;
      while (start <= text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        names.push_back(text.substr(start, comma - start));
        start = comma + 1;
      }
      return names;
    }
  }
  return text;
}

}  // namespace

std::string_view Name(ModelSource s) {
  switch (s) {
    case ModelSource::kCatalog:
      return "catalog";
    case ModelSource::kConfig:
      return "config";
    case ModelSource::kParams:
      return "params";
  }
  return "catalog";
}

std::optional<PlanRequest> ParsePlanRequest(const PlanFlagText& text, Message* error) {
  try {
    PlanRequest r;
    ParseModel(text, &r);
    Framework framework = Framework::kHf;
    if (!text.framework.empty()) {
      auto parsed = ParseFramework(text.framework);
      if (!parsed) FailFlag("--framework", parsed.error().what);
      framework = *parsed;
    }
    const LayeredPlanText filled = LayerPlanText({text, GivenFields(text)});  // + the profile's
    r.workload = ParseWorkload(filled.text);
    r.workload.framework = framework;
    ApplyProfileMechanisms(&r.workload, !filled.text.lora_dropout.empty());
    r.parallel = ParseParallel(text);
    ParseBudget(text, &r);
    r.sources = filled.sources;
    return r;
  } catch (const FlagFailure& f) {
    *error = f.message;
    return std::nullopt;
  }
}

std::optional<PlanInputs> ResolvePlanRequest(const PlanRequest& request, const PlanContext& context,
                                             Message* error) {
  try {
    PlanInputs in;
    in.spec = ResolveModel(request, &in.model_notes);
    in.model_source = std::string(Name(request.source));
    in.workload = request.workload;
    if (IsLora(in.workload.method) && in.spec.hidden_size > 0 &&
        in.workload.lora_rank > in.spec.hidden_size) {
      throw FlagFailure{
          Msg("--lora-rank: {} is larger than the model's hidden size ({}): a rank "
              "past the adapted matrices' smaller side adds nothing",
              in.workload.lora_rank, in.spec.hidden_size)};
    }
    in.budget = ResolveBudget(request, context);
    in.options.pool_bytes = in.budget.pool_bytes();
    if (request.overhead_bytes) in.options.overhead_bytes = *request.overhead_bytes;
    in.options.parallel = request.parallel;
    in.options.unified_memory = request.unified_memory.value_or(context.unified_memory);
    in.sources = request.sources;
    return in;
  } catch (const FlagFailure& f) {
    *error = f.message;
    return std::nullopt;
  }
}

nlohmann::json PlanRequestToJson(const PlanRequest& r) {
  nlohmann::json j = {{"schema_version", kPlanRequestSchemaVersion}};
  for (const PlanField& f : PlanFields()) {
    const std::string text = f.of_request(r);
    if (!text.empty()) j[std::string(f.json_key)] = KeyValue(f, text);
  }
  return j;
}

std::optional<PlanRequest> PlanRequestFromJson(const nlohmann::json& json, Message* error) {
  try {
    if (!json.is_object()) throw FlagFailure{Msg("plan request: not a JSON object")};
    const auto version = json.find("schema_version");
    if (version == json.end() || !version->is_number_integer() ||
        version->get<int64_t>() != kPlanRequestSchemaVersion) {
      throw FlagFailure{Msg("plan request: schema_version is not {}", kPlanRequestSchemaVersion)};
    }
    PlanFlagText text;
    for (const auto& item : json.items()) {
      const std::string& name = item.key();
      if (name == "schema_version") continue;
      const PlanField* field = nullptr;
      for (const PlanField& f : PlanFields()) {
        if (name == f.json_key) field = &f;
      }
      if (!field) throw FlagFailure{Msg("plan request: unknown key \"{}\"", name)};
      ReadKey(*field, item.value(), &text);
    }
    return ParsePlanRequest(text, error);
  } catch (const FlagFailure& f) {
    *error = f.message;
    return std::nullopt;
  }
}

}  // namespace headroom
