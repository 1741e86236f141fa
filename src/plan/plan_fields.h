// The plan's input fields, one table (docs/plan.md "Plan inputs"): each field's name, its
// flag, its key in the request's JSON form, its kind of value, its bound, its help text
// (English, marked for translation: the CLI translates it), whether a run configuration can
// set it, how a typed request gives it back as text and what a framework profile puts in it.
// `plan`'s flags (cli/plan_args), the request's JSON form (plan/plan_request) and the
// run-config setters (plan/run_config) are made from it; a field added here reaches all
// three. PlanFlagText holds the values; a static_assert in plan_fields.cc ties its members
// to the rows.
//
// Which value a field takes is decided once, by LayerPlanText: a flag given on the command
// line, else the run configuration's (--from FILE), else the framework profile's, else the
// default (PlanFlagText's initializer); `sources` says which, for every field.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "plan/framework_profile.h"
#include "plan/plan_request.h"

namespace headroom {

// How a field's text is written in the request's JSON form (and read back).
enum class FieldKind {
  kText,        // a string
  kCount,       // an integer (a count, a size in bytes)
  kFraction,    // a number
  kOnOff,       // true or false ("on" / "off")
  kFlag,        // true or false, a flag without a value (master_weights)
  kNames,       // an array of names ("q,k,v" as text)
  kCheckpoint,  // true, false or "offload"
};

struct PlanField {
  std::string_view name;      // RunConfig::set's name and the key of `sources`: "lora_rank"
  std::string_view flag;      // "--lora-rank"; "model", the positional, for the catalog name
  std::string_view json_key;  // the request's JSON form: "lora_rank", "budget_bytes"
  FieldKind kind = FieldKind::kText;
  std::string PlanFlagText::*text = nullptr;  // null for kFlag (PlanFlagText::master_weights)
  int64_t max = 0;                            // a count's largest value; 0 = its parser's
  const char* help = "";                      // English, marked N_; the CLI translates it
  bool run_config = false;                    // a run configuration can set it
  // The field's text as a typed request gives it back, "" when the request leaves it out
  // (the JSON form writes the fields whose text is not "").
  std::string (*of_request)(const PlanRequest&) = nullptr;
  // The profile's text for the field, "" when the profile leaves it alone; null for a field
  // no profile fills.
  std::string (*of_profile)(const FrameworkProfile&) = nullptr;
};

// Every field, in plan --help's order.
std::span<const PlanField> PlanFields();
// The field of that name (PlanField::name), nullptr for none.
const PlanField* FindPlanField(std::string_view name);

// A field's text in `text`: kFlag's is "on" or "".
std::string FieldText(const PlanFlagText& text, const PlanField& field);
// Sets it; kFlag is set by any text but "" and "off".
void SetFieldText(PlanFlagText& text, const PlanField& field, std::string value);

// A typed request as the flag text that gives it back (PlanField::of_request, every field).
PlanFlagText RequestText(const PlanRequest& request);

// One layer of text: the values, and the fields (PlanField::name) it gives.
struct PlanTextLayer {
  PlanFlagText text;
  std::vector<std::string> given;
};

struct LayeredPlanText {
  PlanFlagText text;
  PlanSources sources;
};

// The fields of `text` given, as ParsePlanRequest takes them: those whose text is not the
// default's (PlanFlagText{}); "" where the default is not "" is given, and refused.
std::vector<std::string> GivenFields(const PlanFlagText& text);

// The one place a field's value is chosen: the flag given, else the file's, else the
// profile's (of the framework the flags or the file name; none for a name that is no
// framework: ParsePlanRequest refuses it), else the default. The file's model (and --config)
// yields to a model, --config or --params among the flags, its weight dtype to a --method,
// its LoRA fields to --method full, its rollout fraction to a --workload; a profile's LoRA
// dropout is taken only by a LoRA method. Pure: reads nothing but its arguments.
LayeredPlanText LayerPlanText(const PlanTextLayer& flags, const PlanTextLayer* file = nullptr);

// {"batch": "flag", "seq": "file", ...}: every field.
nlohmann::json PlanSourcesToJson(const PlanSources& sources);

}  // namespace headroom
