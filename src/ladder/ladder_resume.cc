#include "ladder/ladder_resume.h"

#include <nlohmann/json.hpp>

#include "base/text.h"
#include "ladder/flush.h"

namespace headroom {

std::string_view Name(ResumeFramework f) {
  switch (f) {
    case ResumeFramework::kTransformers:
      return "transformers";
    case ResumeFramework::kLightning:
      return "lightning";
    case ResumeFramework::kLoop:
      return "loop";
    case ResumeFramework::kUnknown:
      break;
  }
  return "unknown";
}

ResumeFramework ResumeFrameworkFromSource(std::string_view source) {
  if (source == "transformers") return ResumeFramework::kTransformers;
  if (source == "lightning") return ResumeFramework::kLightning;
  if (source == "loop") return ResumeFramework::kLoop;
  return ResumeFramework::kUnknown;
}

std::optional<FinishedCheckpoint> FinishedCheckpointOf(const RunRow& run) {
  if (!run.summary_json) return std::nullopt;
  const auto j = nlohmann::json::parse(*run.summary_json, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  const auto c = j.find("checkpoint");
  if (c == j.end() || !c->is_object()) return std::nullopt;
  auto flag = [&](const char* key) {
    const auto v = c->find(key);
    return v != c->end() && v->is_boolean() && v->get<bool>();
  };
  const auto path = c->find("path");
  if (!flag("asked") || !flag("finished") || !flag("ok") || path == c->end() ||
      !path->is_string() || path->get<std::string>().empty()) {
    return std::nullopt;
  }
  FinishedCheckpoint out;
  out.run_id = run.id;
  out.run_started_at = run.started_at;
  out.path = path->get<std::string>();
  if (const auto s = c->find("step");
      s != c->end() && s->is_number_integer() && s->get<int64_t>() >= 0) {
    out.step = s->get<int64_t>();
  }
  if (const auto d = c->find("duration_s"); d != c->end() && d->is_number()) {
    out.duration_s = d->get<double>();
  }
  if (const auto s = c->find("source"); s != c->end() && s->is_string()) {
    out.source = s->get<std::string>();
  }
  return out;
}

std::optional<FinishedCheckpoint> LastJobCheckpoint(const std::vector<RunRow>& newest_first,
                                                    std::string_view match) {
  for (const RunRow& run : newest_first) {
    if (run.kind != RunKindName(RunKind::kGuard) || !CmdlineMatchesJob(run.command, match))
      continue;
    return FinishedCheckpointOf(run);
  }
  return std::nullopt;
}

std::string PythonStringLiteral(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ResumeAdvice ResumeFor(const FinishedCheckpoint& c) {
  ResumeAdvice a;
  a.framework = ResumeFrameworkFromSource(c.source);
  if (c.step) a.next_step = *c.step + 1;
  const std::string py = PythonStringLiteral(c.path);
  switch (a.framework) {
    case ResumeFramework::kTransformers:
      a.commands = {"trainer.train(resume_from_checkpoint=" + py + ")",
                    "--resume_from_checkpoint " + ShellQuoted({c.path})};
      break;
    case ResumeFramework::kLightning:
      a.commands = {"trainer.fit(model, ckpt_path=" + py + ")"};
      break;
    case ResumeFramework::kLoop:
      a.commands = {"torch.load(" + py + ")"};
      break;
    case ResumeFramework::kUnknown:
      break;
  }
  return a;
}

}  // namespace headroom
