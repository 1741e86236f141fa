#include "ladder/ladder_plan.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "sys/meminfo.h"

namespace headroom {
namespace {

// "--plan-args: <why>", kept as a message: the engine renders it in English for the
// journal, `ladder start` in the user's language.
Message PlanArgsError(const Message& why) { return MsgFrom("--plan-args: {}", why); }

}  // namespace

std::optional<PlanRequest> LadderPlanRequest(const LadderRow& ladder,
                                             const PlanWordsReader& old_form, Message* error) {
  if (ladder.plan_request.empty()) return old_form(ladder.plan_args, error);
  Message why;
  auto request = PlanRequestFromJson(
      nlohmann::json::parse(ladder.plan_request, nullptr, /*allow_exceptions=*/false), &why);
  if (!request) *error = PlanArgsError(why);
  return request;
}

std::optional<LadderPlanInput> ResolveLadderPlan(const PlanRequest& request,
                                                 const PlanContext& context, Message* error) {
  Message why;
  auto in = ResolvePlanRequest(request, context, &why);
  if (!in) {
    *error = PlanArgsError(why);
    return std::nullopt;
  }
  return LadderPlanInput{in->spec, in->workload, in->budget, in->options};
}

LadderInputs LadderInputsFor(const SysRoot& root, PlanContext context, PlanWordsReader old_form) {
  context.default_root = root.root();
  return {[root] { return ReadMemInfo(root); },
          [context, old_form = std::move(old_form)](
              const LadderRow& ladder, Message* error) -> std::optional<LadderPlanInput> {
            auto request = LadderPlanRequest(ladder, old_form, error);
            if (!request) return std::nullopt;
            return ResolveLadderPlan(*request, context, error);
          }};
}

LadderRow NewLadderRow(const std::string& job, LadderSymptom symptom, const std::string& match,
                       const std::string& plan_args, const std::optional<PlanRequest>& request) {
  LadderRow row;
  row.job = job;
  row.symptom = std::string(Name(symptom));
  row.match_text = match.empty() ? job : match;
  row.plan_args = plan_args;
  if (request) row.plan_request = PlanRequestToJson(*request).dump();
  return row;
}

}  // namespace headroom
