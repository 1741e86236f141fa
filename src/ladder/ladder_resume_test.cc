// The resume command's choice: by what wrote the checkpoint (the companion's "source"), the
// path quoted for the language it goes into, the next step; which run's checkpoint counts.
#include "ladder/ladder_resume.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace headroom {
namespace {

FinishedCheckpoint At(std::string path, int64_t step, std::string source) {
  FinishedCheckpoint c;
  c.path = std::move(path);
  c.step = step;
  c.source = std::move(source);
  return c;
}

TEST(ResumeFor, TransformersGetsTrainAndTheScriptFlag) {
  const ResumeAdvice a = ResumeFor(At("/out/checkpoint-41", 41, "transformers"));
  EXPECT_EQ(a.framework, ResumeFramework::kTransformers);
  ASSERT_EQ(a.commands.size(), 2U);
  EXPECT_EQ(a.commands[0], R"(trainer.train(resume_from_checkpoint="/out/checkpoint-41"))");
  EXPECT_EQ(a.commands[1], "--resume_from_checkpoint /out/checkpoint-41");
  EXPECT_EQ(a.next_step, 42);
}

TEST(ResumeFor, LightningGetsFitWithCkptPath) {
  const ResumeAdvice a = ResumeFor(At("/runs/headroom-step3.ckpt", 3, "lightning"));
  EXPECT_EQ(a.framework, ResumeFramework::kLightning);
  ASSERT_EQ(a.commands.size(), 1U);
  EXPECT_EQ(a.commands[0], R"(trainer.fit(model, ckpt_path="/runs/headroom-step3.ckpt"))");
  EXPECT_EQ(a.next_step, 4);
}

TEST(ResumeFor, APlainLoopLoadsTheFileItsFunctionWrote) {
  const ResumeAdvice a = ResumeFor(At("/ck/step-0.pt", 0, "loop"));
  EXPECT_EQ(a.framework, ResumeFramework::kLoop);
  ASSERT_EQ(a.commands.size(), 1U);
  EXPECT_EQ(a.commands[0], R"(torch.load("/ck/step-0.pt"))");
  EXPECT_EQ(a.next_step, 1);
}

TEST(ResumeFor, AnUnknownWriterGetsNoCommandButKeepsTheStep) {
  for (const char* source : {"", "hooks", "plain", "Transformers", "keras"}) {
    const ResumeAdvice a = ResumeFor(At("/c", 9, source));
    EXPECT_EQ(a.framework, ResumeFramework::kUnknown) << source;
    EXPECT_TRUE(a.commands.empty()) << source;
    EXPECT_EQ(a.next_step, 10) << source;
  }
  FinishedCheckpoint no_step = At("/c", 0, "loop");
  no_step.step.reset();
  EXPECT_FALSE(ResumeFor(no_step).next_step);
}

// A path with quotes, a backslash, a blank or a newline stays one argument in each language.
TEST(ResumeFor, QuotesTheHostilePathForPythonAndTheShell) {
  const std::string path = "/o u/it's \"x\"\\\n";
  const ResumeAdvice a = ResumeFor(At(path, 1, "transformers"));
  const std::string call = a.commands[0];
  const std::string literal = call.substr(call.find('=') + 1, call.size() - call.find('=') - 2);
  EXPECT_EQ(nlohmann::json::parse(literal).get<std::string>(), path);  // JSON == Python here
  EXPECT_EQ(literal.find('\n'), std::string::npos);
  EXPECT_EQ(a.commands[1], "--resume_from_checkpoint '/o u/it'\\''s \"x\"\\\n'");
  // Bytes that are not UTF-8 do not throw.
  EXPECT_NE(PythonStringLiteral("/c/\xff\xfe").find("/c/"), std::string::npos);
}

RunRow Guard(int64_t id, std::vector<std::string> command, std::optional<std::string> summary) {
  RunRow r;
  r.id = id;
  r.kind = "guard";
  r.started_at = "2026-12-03T07:00:0" + std::to_string(id) + "Z";
  r.command = std::move(command);
  r.summary_json = std::move(summary);
  return r;
}

std::string Summary(bool finished, bool ok, const char* path, const char* source) {
  nlohmann::json c = {{"asked", true},
                      {"finished", finished},
                      {"ok", ok},
                      {"step", 41},
                      {"duration_s", 1.5},
                      {"path", path ? nlohmann::json(path) : nullptr},
                      {"source", source ? nlohmann::json(source) : nullptr}};
  return nlohmann::json{{"status", "killed-by-guard"}, {"checkpoint", c}}.dump();
}

TEST(FinishedCheckpointOf, OnlyAFinishedSuccessfulSaveWithAPath) {
  auto good = FinishedCheckpointOf(
      Guard(3, {"python3", "train.py"}, Summary(true, true, "/out/checkpoint-41", "transformers")));
  ASSERT_TRUE(good);
  EXPECT_EQ(good->run_id, 3);
  EXPECT_EQ(good->path, "/out/checkpoint-41");
  EXPECT_EQ(good->step, 41);
  EXPECT_EQ(good->duration_s, 1.5);
  EXPECT_EQ(good->source, "transformers");
  EXPECT_FALSE(FinishedCheckpointOf(Guard(1, {"x"}, Summary(false, false, nullptr, nullptr))));
  EXPECT_FALSE(FinishedCheckpointOf(Guard(1, {"x"}, Summary(true, false, "/p", "loop"))));
  EXPECT_FALSE(FinishedCheckpointOf(Guard(1, {"x"}, Summary(true, true, nullptr, "loop"))));
  EXPECT_FALSE(FinishedCheckpointOf(Guard(1, {"x"}, Summary(true, true, "", "loop"))));
  // Summaries that are not what a guard writes: never a crash, never a checkpoint.
  for (const char* s : {"", "not json", "[]", R"({"checkpoint":null})", R"({"checkpoint":7})",
                        R"({"checkpoint":{"asked":"yes","finished":true,"ok":true,"path":"/p"}})",
                        R"({"checkpoint":{"asked":true,"finished":true,"ok":true,"path":3}})"}) {
    EXPECT_FALSE(FinishedCheckpointOf(Guard(1, {"x"}, std::string(s)))) << s;
  }
  EXPECT_FALSE(FinishedCheckpointOf(Guard(1, {"x"}, std::nullopt)));
  // A step that is not a step is left out, the rest kept.
  auto odd = FinishedCheckpointOf(Guard(
      1, {"x"},
      R"({"checkpoint":{"asked":true,"finished":true,"ok":true,"path":"/p","step":-1,"source":5}})"));
  ASSERT_TRUE(odd);
  EXPECT_FALSE(odd->step);
  EXPECT_TRUE(odd->source.empty());
}

TEST(LastJobCheckpoint, TheJobsNewestGuardedRunDecides) {
  const std::string saved = Summary(true, true, "/out/checkpoint-41", "transformers");
  const std::string none = Summary(false, false, nullptr, nullptr);
  RunRow sweep = Guard(9, {"python3", "train.py"}, saved);
  sweep.kind = "sweep";
  const std::vector<RunRow> runs = {
      sweep,                                                          // not a guarded run
      Guard(8, {"python3", "other.py"}, none),                        // another job
      Guard(7, {"headroom", "ladder", "record", "train.py"}, saved),  // ladder itself
      Guard(6, {"python3", "train.py", "--lr", "1e-4"}, saved),       // the job's newest
      Guard(5, {"python3", "train.py"}, Summary(true, true, "/old", "loop")),
  };
  auto c = LastJobCheckpoint(runs, "train.py");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->run_id, 6);
  EXPECT_EQ(c->path, "/out/checkpoint-41");
  // The newest run of the job saved nothing: no checkpoint, not the older run's.
  std::vector<RunRow> later = runs;
  later.insert(later.begin(), Guard(10, {"python3", "train.py"}, none));
  EXPECT_FALSE(LastJobCheckpoint(later, "train.py"));
  EXPECT_FALSE(LastJobCheckpoint(runs, "eval.py"));
  EXPECT_FALSE(LastJobCheckpoint({}, "train.py"));
}

}  // namespace
}  // namespace headroom
