#include "pool/pool_survey.h"

#include "base/json_null.h"
#include "gpu/nvml.h"

namespace headroom {
namespace {

using Json = nlohmann::ordered_json;

}  // namespace

GpuProcessList ReadGpuProcesses(GpuBackend& gpu) {
  GpuProcessList out;
  out.processes.emplace();
  for (unsigned i = 0; i < gpu.device_count(); ++i) {
    const GpuReading r = gpu.ReadDevice(i);
    if (r.processes) {
      out.processes->insert(out.processes->end(), r.processes->begin(), r.processes->end());
    } else {
      out.note = Msg("nvml: device {}: process list not readable", i);
    }
  }
  return out;
}

GpuProcessList ReadGpuProcesses(const std::string& library) {
  auto nvml = Nvml::Open(library);
  if (!nvml) {
    GpuProcessList out;
    out.note = nvml.error().what;
    return out;
  }
  return ReadGpuProcesses(**nvml);
}

PoolSurvey SurveyPool(const SysRoot& root, GpuProcessList gpu, pid_t self,
                      std::optional<uint64_t> mem_total_bytes, std::optional<uint64_t> need_bytes,
                      std::optional<uint64_t> reserve_bytes) {
  PoolSurvey s;
  s.mem_total_bytes = mem_total_bytes;
  s.gpu = std::move(gpu);
  s.holders = FindPoolHolders(root, s.gpu.processes, self);
  s.caps = HolderCaps(s.holders);
  if (need_bytes && mem_total_bytes)
    s.advice = AdviseBesideJob(s.holders, s.caps, *need_bytes, *mem_total_bytes, reserve_bytes);
  return s;
}

nlohmann::ordered_json HolderJson(const PoolHolder& h, const HolderCap& cap,
                                  const HolderAdvice* advice) {
  Json settings = Json::array();
  for (const auto& s : cap.settings)
    settings.push_back({{"name", s.name}, {"value", s.value}, {"source", s.source}});
  Json j = {
      {"pid", h.facts.pid},
      {"ppid", h.in_proc ? Json(h.facts.ppid) : Json(nullptr)},
      {"user", h.user},
      {"uid", OrNull(h.facts.uid)},
      {"kind", std::string(HolderKindName(h.kind))},
      {"command", h.in_proc ? Json(DisplayCommand(h.facts)) : Json(nullptr)},
      {"in_proc", h.in_proc},
      {"in_gpu_list", h.in_gpu_list},
      {"rss_bytes", OrNull(h.facts.rss_bytes)},
      {"pss_bytes", OrNull(h.facts.pss_bytes)},
      {"gpu_bytes", OrNull(h.gpu_bytes)},
      {"part_of", OrNull(h.part_of)},
      {"cap",
       {{"fraction", OrNull(cap.pool_fraction)},
        {"bytes", OrNull(cap.cap_bytes)},
        {"source", cap.source.empty() ? Json(nullptr) : Json(cap.source)},
        {"fixed_after_load", cap.fixed_after_load}}},
      {"settings", settings},
      {"notes", EnglishTexts(cap.notes)},
  };
  if (advice) {
    j["advice"] = {{"action", std::string(HolderActionName(advice->action))},
                   {"held_bytes", advice->held_bytes},
                   {"size_bytes", OrNull(advice->size_bytes)},
                   {"arithmetic", EnglishText(advice->arithmetic)},
                   {"stop_command",
                    advice->stop_command.empty() ? Json(nullptr) : Json(advice->stop_command)}};
  }
  return j;
}

nlohmann::ordered_json PoolSurveyToJson(const PoolSurvey& s) {
  const auto& advice = s.advice;
  Json out = {{"schema_version", 1},
              {"mem_total_bytes", OrNull(s.mem_total_bytes)},
              {"gpu",
               {{"nvml", s.gpu.processes.has_value()},
                {"note", s.gpu.note.empty() ? Json(nullptr) : Json(EnglishText(s.gpu.note))}}}};
  if (advice) {
    out["need"] = {{"need_bytes", advice->need_bytes},
                   {"reserve_bytes", advice->reserve_bytes},
                   {"budget_bytes", advice->budget_bytes},
                   {"kept_bytes", advice->kept_bytes},
                   {"fits", advice->fits},
                   {"summary", EnglishText(advice->summary)}};
  } else {
    out["need"] = nullptr;
  }
  out["processes"] = Json::array();
  for (size_t i = 0; i < s.holders.size(); ++i) {
    out["processes"].push_back(
        HolderJson(s.holders[i], s.caps[i], advice ? &advice->holders[i] : nullptr));
  }
  return out;
}

}  // namespace headroom
