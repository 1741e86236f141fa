// Step-log parsing on the lines of docs/explain-logs.md "Formats and auto-detection" (real
// formats), on hostile input, and on the real-tqdm fixtures of tests/fixtures/logs/.
#include "explain/step_log.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "testing_files.h"

namespace headroom {
namespace {

// The one record a text gives; fails the test when it gives another number of them.
StepRecord One(std::string_view text) {
  const std::vector<StepRecord> r = ParseStepLog(text);
  EXPECT_EQ(r.size(), 1u) << text;
  return r.empty() ? StepRecord{} : r.front();
}

bool None(std::string_view text) { return ParseStepLog(text).empty(); }

// --- tqdm ---------------------------------------------------------------------------------

TEST(StepLogTqdm, ReferenceBar) {
  const StepRecord r = One("  3%|▎         | 30/1000 [00:15<08:05,  2.00it/s]");
  EXPECT_EQ(r.format, StepLogFormat::kTqdm);
  EXPECT_EQ(r.step, 30);
  EXPECT_EQ(r.total_steps, 1000);
  EXPECT_EQ(r.steps_per_second, 2.0);
  EXPECT_FALSE(r.seconds_per_step);
  EXPECT_FALSE(r.rate_is_measured);
  EXPECT_EQ(r.elapsed_seconds, 15.0);
  EXPECT_FALSE(r.time);
  EXPECT_EQ(r.line, 1u);
}

TEST(StepLogTqdm, SecondsPerIterationBelowOneIterationPerSecond) {
  const StepRecord r = One(" 40%|████      | 4/10 [01:30<02:15, 22.52s/it]");
  EXPECT_EQ(r.seconds_per_step, 22.52);
  EXPECT_FALSE(r.steps_per_second);
  EXPECT_EQ(r.elapsed_seconds, 90.0);
}

TEST(StepLogTqdm, NoRateBeforeTheFirstUpdate) {
  const StepRecord r = One("  0%|          | 0/1000 [00:00<?, ?it/s]");
  EXPECT_EQ(r.step, 0);
  EXPECT_FALSE(r.steps_per_second);
  EXPECT_FALSE(r.seconds_per_step);
}

TEST(StepLogTqdm, UnitScaledCountsAndRates) {
  const StepRecord r = One("Training:   6%|▋         | 1.25k/20.0k [00:00<00:12, 1.50kit/s]");
  EXPECT_EQ(r.step, 1250);
  EXPECT_EQ(r.total_steps, 20000);
  EXPECT_EQ(r.steps_per_second, 1500.0);
  EXPECT_EQ(One("x: 5%| | 5.00M/100M [1:02:03<20:00:00, 1.23Mit/s]").elapsed_seconds, 3723.0);
}

TEST(StepLogTqdm, LightningEpochBarWithPostfixLoss) {
  const StepRecord r =
      One("Epoch 0:  45%|████▌     | 450/1000 [01:23<01:42,  5.37it/s, v_num=0, train_loss=2.340]");
  EXPECT_EQ(r.step, 450);
  EXPECT_EQ(r.loss, 2.34);
  EXPECT_EQ(r.elapsed_seconds, 83.0);
}

TEST(StepLogTqdm, BarWithNoTotal) {
  const StepRecord r = One("Epoch 0: 24it [00:19,  1.25it/s, loss=1.760]");
  EXPECT_EQ(r.step, 24);
  EXPECT_FALSE(r.total_steps);
  EXPECT_EQ(r.loss, 1.76);
}

TEST(StepLogTqdm, BracketsInThePostfixAreSkipped) {
  const StepRecord r = One("  5%|▌    | 5/100 [00:05<01:35,  1.00it/s, shape=[4, 8]]");
  EXPECT_EQ(r.step, 5);
}

TEST(StepLogTqdm, OtherUnitsAreNotSteps) {
  // A checkpoint download and a datasets map: bars, but not of training steps.
  EXPECT_TRUE(None("model.safetensors: 100%|██████████| 4.97G/4.97G [00:20<00:00, 245MB/s]"));
  EXPECT_TRUE(None("Map: 100%|██████████| 1000/1000 [00:00<00:00, 12345.67 examples/s]"));
  EXPECT_TRUE(None("Downloading: 5.00kB [00:00, 1.00kB/s]"));
}

TEST(StepLogTqdm, TorchtuneDescriptionGivesTheGlobalStep) {
  const StepRecord r = One("1|25|Loss: 1.234: 25%|██▌       | 5/20 [00:30<01:30,  1.20s/it]");
  EXPECT_EQ(r.format, StepLogFormat::kTorchtuneProgress);
  EXPECT_EQ(r.step, 25);  // the description's global step, not the per-epoch n (5)
  EXPECT_EQ(r.total_steps, 20);
  EXPECT_EQ(r.loss, 1.234);
  EXPECT_EQ(r.epoch, 1.0);
  EXPECT_EQ(r.seconds_per_step, 1.2);
}

TEST(StepLogTqdm, LoadingBarIsAnotherStream) {
  const auto r = ParseStepLog(
      "Loading checkpoint shards: 100%|██████████| 4/4 [00:05<00:00,  1.30s/it]\n"
      "  1%|          | 4/500 [00:05<10:00,  1.20s/it]\n"
      "  1%|          | 5/500 [00:06<10:00,  1.20s/it]\n");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_NE(r[0].stream, r[1].stream);
  EXPECT_EQ(r[1].stream, r[2].stream);
  EXPECT_EQ(r[2].line, 3u);
}

// --- HF Trainer / TRL / axolotl dicts -------------------------------------------------------

TEST(StepLogHfDict, RawFloats) {
  const StepRecord r =
      One("{'loss': 3.2363, 'grad_norm': 1.2117664813995361, 'learning_rate': 0.00019984, 'epoch': "
          "0.0}");
  EXPECT_EQ(r.format, StepLogFormat::kHfDict);
  EXPECT_EQ(r.loss, 3.2363);
  EXPECT_EQ(r.epoch, 0.0);
  EXPECT_FALSE(r.step);
}

TEST(StepLogHfDict, QuotedNumbers) {
  const StepRecord r =
      One("{'loss': '2.007', 'grad_norm': '2.271', 'learning_rate': '0', 'epoch': '0.006593'}");
  EXPECT_EQ(r.loss, 2.007);
  EXPECT_EQ(r.epoch, 0.006593);
}

TEST(StepLogHfDict, TrlAndAxolotlKeys) {
  EXPECT_EQ(One("{'loss': '0.1629', 'grad_norm': '0.6445', 'learning_rate': '1e-06', 'entropy': "
                "'0.1693', 'num_tokens': '3.725e+04', 'mean_token_accuracy': '0.9537', 'epoch': "
                "'0.8'}")
                .loss,
            0.1629);
  const StepRecord a =
      One("{'loss': '0.7157', 'grad_norm': '12.79', 'learning_rate': '0', 'ppl': '2.046', "
          "'memory/max_active (GiB)': '2.98', 'memory/max_allocated (GiB)': '2.98', "
          "'memory/device_reserved (GiB)': '4.12', 'tokens/trainable': 93, 'tokens/total': 512, "
          "'epoch': '0.1333'}");
  EXPECT_EQ(a.loss, 0.7157);
  EXPECT_EQ(a.epoch, 0.1333);
}

TEST(StepLogHfDict, NanAndInfLossesAreKept) {
  EXPECT_TRUE(std::isnan(*One("{'loss': nan, 'epoch': 0.5}").loss));
  EXPECT_TRUE(std::isnan(*One("{'loss': 'nan', 'epoch': 0.5}").loss));
  EXPECT_EQ(One("{'loss': inf, 'epoch': 0.5}").loss, INFINITY);
  EXPECT_EQ(One("{'loss': -inf, 'epoch': 0.5}").loss, -INFINITY);
  EXPECT_EQ(One("{'loss': 1e308}").loss, 1e308);
  // Past a double: unreadable, not infinity; a dict with no other field is then no record.
  EXPECT_FALSE(One("{'loss': 1e309, 'step': 5}").loss);
  EXPECT_TRUE(None("{'loss': 1e309}"));
}

TEST(StepLogHfDict, NumpyAndTorchWrappers) {
  EXPECT_EQ(One("{'loss': np.float64(1.5), 'epoch': 1.0}").loss, 1.5);
  EXPECT_EQ(One("{'loss': tensor(2.25, device='cuda:0'), 'epoch': 1.0}").loss, 2.25);
}

TEST(StepLogHfDict, TrainingSummary) {
  const StepRecord r =
      One("{'train_runtime': 1234.5678, 'train_samples_per_second': 12.345, "
          "'train_steps_per_second': 0.772, 'train_loss': 1.4321, 'epoch': 3.0}");
  EXPECT_EQ(r.elapsed_seconds, 1234.5678);
  EXPECT_EQ(r.steps_per_second, 0.772);
  EXPECT_TRUE(r.rate_is_measured);
  EXPECT_EQ(r.loss, 1.4321);  // train_loss, for want of a loss
}

TEST(StepLogHfDict, EvalDictIsNoStep) {
  EXPECT_TRUE(
      None("{'eval_loss': 1.9, 'eval_runtime': 3.2, 'eval_samples_per_second': 31.2, "
           "'eval_steps_per_second': 3.9, 'epoch': 1.0}"));
}

TEST(StepLogHfDict, MalformedDictsAreNotRecords) {
  for (const char* bad :
       {"{'loss': 1.2", "{'loss' 1.2}", "{'loss': 1.2,}", "{'loss': 1.2} trailing",
        "{'loss': [1, 2}", "{loss: 1.2}", "{'loss': 'unterminated}", "{'lo\\'ss: 1}"}) {
    EXPECT_TRUE(None(bad)) << bad;
  }
}

// --- torchtune --------------------------------------------------------------------------------

TEST(StepLogTorchtune, MetricLoggerLine) {
  const StepRecord r = One(
      "Step 120 | loss:1.0438 lr:2e-05 tokens_per_second_per_gpu:1523.41 peak_memory_active:17.2 ");
  EXPECT_EQ(r.format, StepLogFormat::kTorchtuneStep);
  EXPECT_EQ(r.step, 120);
  EXPECT_EQ(r.loss, 1.0438);
}

TEST(StepLogTorchtune, DescriptionAlone) {
  const StepRecord r = One("1|25|Loss: 1.234");
  EXPECT_EQ(r.format, StepLogFormat::kTorchtuneProgress);
  EXPECT_EQ(r.step, 25);
  EXPECT_EQ(r.epoch, 1.0);
  EXPECT_EQ(r.loss, 1.234);
  EXPECT_TRUE(None("1|25|Loss: x"));
  EXPECT_TRUE(None("Step x | loss:1"));
  EXPECT_TRUE(None("Step -5 | loss:1"));
}

// --- Megatron ---------------------------------------------------------------------------------

constexpr const char* kMegatronLine =
    " [2025-08-01 07:19:37] iteration        1/    5000 | consumed samples:          128 | "
    "elapsed time per iteration (ms): 19138.8 | throughput per GPU (TFLOP/s/GPU): 80.2 | "
    "learning rate: 6.976744E-08 | global batch size:   128 | lm loss: 1.043863E+01 | loss "
    "scale: 1.0 | grad norm: 26.203 | number of skipped iterations:   0 | number of nan "
    "iterations:   0 |";

TEST(StepLogMegatron, ReferenceLine) {
  const StepRecord r = One(kMegatronLine);
  EXPECT_EQ(r.format, StepLogFormat::kMegatron);
  EXPECT_EQ(r.step, 1);
  EXPECT_EQ(r.total_steps, 5000);
  EXPECT_DOUBLE_EQ(*r.seconds_per_step, 19.1388);
  EXPECT_TRUE(r.rate_is_measured);
  EXPECT_DOUBLE_EQ(*r.loss, 10.43863);
  EXPECT_EQ(r.time_source, StepTimeSource::kLineLocal);
  EXPECT_EQ(FormatUtcIso8601(*r.time), "2025-08-01T07:19:37.000Z");
}

TEST(StepLogMegatron, FieldsByKeyNotPosition) {
  const StepRecord r =
      One("iteration 20/100 | lm loss: 2.5 | elapsed time per iteration (ms): 500");
  EXPECT_EQ(r.step, 20);
  EXPECT_EQ(r.seconds_per_step, 0.5);
  EXPECT_EQ(r.loss, 2.5);
  EXPECT_FALSE(r.time);
  EXPECT_TRUE(None("iteration 20 of 100 | lm loss: 2.5"));
  EXPECT_TRUE(None("[2025-08-01 07:19:37] validation loss at iteration 20 | lm loss: 2.5"));
}

// --- JSON lines -------------------------------------------------------------------------------

TEST(StepLogJson, StepTimeAndLoss) {
  const StepRecord r = One(R"({"step": 10, "time": 1764410400.5, "loss": 1.25})");
  EXPECT_EQ(r.format, StepLogFormat::kJsonLines);
  EXPECT_EQ(r.step, 10);
  EXPECT_EQ(r.loss, 1.25);
  EXPECT_EQ(r.time_source, StepTimeSource::kLine);
  EXPECT_EQ(FormatUtcIso8601(*r.time), "2025-11-29T10:00:00.500Z");
}

TEST(StepLogJson, TimestampStringsMillisecondsAndElapsed) {
  EXPECT_EQ(FormatUtcIso8601(*One(R"({"step": 1, "timestamp": "2026-11-29T10:00:00+01:00"})").time),
            "2026-11-29T09:00:00.000Z");
  EXPECT_EQ(FormatUtcIso8601(*One(R"({"step": 1, "time": 1764410400250})").time),
            "2025-11-29T10:00:00.250Z");
  const StepRecord e = One(R"({"step": 3, "elapsed": 12.5, "step_time": 0.25, "epoch": 0})");
  EXPECT_EQ(e.elapsed_seconds, 12.5);
  EXPECT_EQ(e.seconds_per_step, 0.25);
  EXPECT_TRUE(e.rate_is_measured);
  EXPECT_EQ(One(R"({"iteration": 7, "time": 12.0})").elapsed_seconds, 12.0);  // small: elapsed
  EXPECT_FALSE(One(R"({"step": 1, "time": 9e10})").time);  // past 2200: refused, not overflowed
  EXPECT_FALSE(One(R"({"step": 1, "timestamp": "0026-11-29T10:00:00Z"})").time);
  EXPECT_EQ(One(R"({"_step": 7, "_runtime": 3.5, "_timestamp": 1764410400})").elapsed_seconds, 3.5);
}

TEST(StepLogJson, ATimePastTheRangeLeavesNoSourceWithoutATime) {
  // Found by fuzzing: a "_timestamp" in the year 3610 after a valid "timestamp" cleared the
  // time and kept its source. The far one is not taken, in either order.
  for (const char* line : {R"({"step": 1, "timestamp": 1764410400, "_timestamp": 51750000000})",
                           R"({"step": 1, "_timestamp": 51750000000, "timestamp": 1764410400})"}) {
    SCOPED_TRACE(line);
    const StepRecord r = One(line);
    ASSERT_TRUE(r.time);
    EXPECT_EQ(FormatUtcIso8601(*r.time), "2025-11-29T10:00:00.000Z");
    EXPECT_EQ(r.time_source, StepTimeSource::kLine);
  }
  const StepRecord far = One(R"({"step": 1, "_timestamp": 51750000000})");
  EXPECT_FALSE(far.time);
  EXPECT_EQ(far.time_source, StepTimeSource::kNone);
}

TEST(StepLogJson, PythonNanIsKeptAndNestingSkipped) {
  EXPECT_TRUE(std::isnan(*One(R"({"step": 4, "loss": NaN, "extra": {"a": [1, {"b": 2}]}})").loss));
  EXPECT_EQ(One(R"({"step": 4, "loss": -Infinity})").loss, -INFINITY);
  EXPECT_EQ(One(R"({"step": 4.0})").step, 4);
}

TEST(StepLogJson, NoStepNoRecord) {
  EXPECT_TRUE(None(R"({"loss": 1.0, "time": 1764410400})"));
  EXPECT_TRUE(None(R"({"step": -1})"));
  EXPECT_TRUE(None(R"({"step": 1.5})"));
  EXPECT_TRUE(None(R"({"step": 99999999999999999999})"));
  EXPECT_TRUE(None(R"({"step": 1)"));
}

// --- prefixes and splitting -------------------------------------------------------------------

TEST(StepLogPrefix, LauncherTags) {
  EXPECT_EQ(One("[default3]:  3%|▎  | 30/1000 [00:15<08:05,  2.00it/s]").rank, 3);
  EXPECT_EQ(One("[rank1]:{'loss': 1.0, 'epoch': 0.1}").rank, 1);
  EXPECT_EQ(One("[1,2]<stdout>:Step 5 | loss:1.0").rank, 2);
  const StepRecord ray = One("(RayTrainWorker pid=1234, ip=10.0.0.5) {'loss': 1.0}");
  EXPECT_EQ(ray.worker_pid, 1234);
  EXPECT_FALSE(ray.rank);
  EXPECT_EQ(One("\x1b[36m(RayTrainWorker pid=77)\x1b[0m Step 5 | loss:1.0").worker_pid, 77);
  EXPECT_EQ(One("(pid=9) {'loss': 2.0} [repeated 3x across cluster]").loss, 2.0);
  // Not tags: the text after them is then not at the start, so nothing matches.
  EXPECT_TRUE(None("[INFO]:{'loss': 1.0}"));
  EXPECT_TRUE(None("(autoscaler +1m2s) {'loss': 1.0}"));
}

TEST(StepLogPrefix, ArrivalStamp) {
  const StepRecord r = One("2026-11-29T10:00:00.123Z Step 5 | loss:1.0");
  EXPECT_EQ(r.time_source, StepTimeSource::kArrival);
  EXPECT_EQ(FormatUtcIso8601(*r.time), "2026-11-29T10:00:00.123Z");
  EXPECT_EQ(r.arrival_time, r.time);
  EXPECT_EQ(FormatUtcIso8601(*One("2026-11-29T10:00:00.123+00:00 Step 5 | loss:1.0").time),
            "2026-11-29T10:00:00.123Z");
  // A stamp with no zone is the line's text, not an arrival prefix.
  EXPECT_TRUE(None("2026-11-29T10:00:00.123 Step 5 | loss:1.0"));
}

TEST(StepLogPrefix, LinesOwnTimeWinsButArrivalIsKept) {
  const StepRecord r = One(std::string("2026-11-29T10:00:05.000Z [default0]:") + kMegatronLine);
  EXPECT_EQ(r.time_source, StepTimeSource::kLineLocal);
  EXPECT_EQ(FormatUtcIso8601(*r.time), "2025-08-01T07:19:37.000Z");
  EXPECT_EQ(FormatUtcIso8601(*r.arrival_time), "2026-11-29T10:00:05.000Z");
  EXPECT_EQ(r.rank, 0);
}

TEST(StepLogSplit, CarriageReturnsSplitUpdatesAndTagsCarryOver) {
  const auto r = ParseStepLog(
      "[default0]:\r  1%|  | 1/100 [00:01<01:39,  1.00it/s]\r  2%|  | 2/100 [00:02<01:38,  "
      "1.00it/s]\r\n"
      "  3%|  | 3/100 [00:03<01:37,  1.00it/s]\r\n");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].rank, 0);
  EXPECT_EQ(r[1].rank, 0);  // a '\r' segment of the tagged line
  EXPECT_FALSE(r[2].rank);  // the next physical line has no tag
  EXPECT_EQ(r[1].line, 1u);
  EXPECT_EQ(r[2].line, 2u);
}

TEST(StepLogSplit, ArrivalStampIsNotCarriedOver) {
  const auto r = ParseStepLog("2026-11-29T10:00:00.000Z Step 1 | loss:1\rStep 2 | loss:1\n");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(r[0].time);
  EXPECT_FALSE(r[1].time);
}

TEST(StepLogSplit, AnyChunkingGivesTheSameRecords) {
  const std::string log = std::string("noise\r\n{'loss': 1.5, 'epoch': 0.1}\n") + kMegatronLine +
                          "\n[default0]:\r 1%| | 1/100 [00:01<01:39,  1.00it/s]\r 2%| | 2/100 "
                          "[00:02<01:38,  1.00it/s]\n2026-11-29T10:00:00Z Step 3 | loss:2\n"
                          "{\"step\": 4, \"time\": 1764410400}";
  const auto whole = ParseStepLog(log);
  ASSERT_EQ(whole.size(), 6u);
  for (size_t cut = 0; cut <= log.size(); ++cut) {
    for (size_t cut2 = cut; cut2 <= log.size(); cut2 += 7) {
      StepLogParser p;
      std::vector<StepRecord> got;
      p.Feed(std::string_view(log).substr(0, cut), &got);
      p.Feed(std::string_view(log).substr(cut, cut2 - cut), &got);
      p.Feed(std::string_view(log).substr(cut2), &got);
      p.Finish(&got);
      ASSERT_EQ(got.size(), whole.size()) << cut << " " << cut2;
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].step, whole[i].step);
        EXPECT_EQ(got[i].line, whole[i].line);
        EXPECT_EQ(got[i].rank, whole[i].rank);
        EXPECT_EQ(got[i].time, whole[i].time);
        EXPECT_EQ(got[i].stream, whole[i].stream);
      }
    }
  }
}

// --- hostile input ----------------------------------------------------------------------------

TEST(StepLogHostile, BinaryGarbageGivesNothingAndNoCrash) {
  std::mt19937 rng(42);
  std::string junk(1 << 20, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  EXPECT_TRUE(ParseStepLog(junk).empty());
}

TEST(StepLogHostile, NulBytes) {
  using namespace std::literals;
  EXPECT_TRUE(None("{'loss': 1.0\0}"sv));
  EXPECT_TRUE(None("Step 1\0 | loss:1"sv));
  EXPECT_TRUE(None("\0Step 1 | loss:1"sv));
  // A NUL in free text (the description) does not hide the bar.
  EXPECT_EQ(One("a\0b:  3%| | 30/1000 [00:15<08:05,  2.00it/s]"sv).step, 30);
}

TEST(StepLogHostile, HugeAndNegativeNumbers) {
  EXPECT_TRUE(None("99999999999999999999/100 [00:15<08:05,  2.00it/s]"));
  EXPECT_EQ(One("9223372036854775807/9223372036854775807 [00:15<00:00,  2.00it/s]").step,
            INT64_MAX);
  EXPECT_TRUE(None("x| 30/1000 [00:15<08:05, -2.00it/s]"));
  EXPECT_TRUE(None("x| 30/1000 [00:15<08:05, 0.00it/s]"));
  EXPECT_TRUE(None("x| 30/1000 [00:15<08:05, nanit/s]"));
  EXPECT_TRUE(None("x| 30/1000 [00:15<08:05, 1e308it/s]"));
  EXPECT_TRUE(None("x| -30/1000 [00:15<08:05,  2.00it/s]"));
  EXPECT_TRUE(None("x| 30/0 [00:15<08:05,  2.00it/s]"));
  EXPECT_TRUE(None("x| 30/1000 [99999999999999999999:00<08:05,  2.00it/s]"));
  EXPECT_TRUE(None("iteration 99999999999999999999/ 10 | lm loss: 1"));
  const StepRecord m =
      One("iteration 5/ 10 | elapsed time per iteration (ms): -3 | lm loss: 1e308");
  EXPECT_FALSE(m.seconds_per_step);
  EXPECT_EQ(m.loss, 1e308);
}

TEST(StepLogHostile, TruncatedLines) {
  const std::string bar = "  3%|▎         | 30/1000 [00:15<08:05,  2.00it/s]";
  for (size_t n = 0; n < bar.size(); ++n) {
    EXPECT_TRUE(None(bar.substr(0, n))) << n;
  }
  EXPECT_TRUE(None(std::string(kMegatronLine).substr(0, 40)));
}

TEST(StepLogHostile, VeryLongLinesAreDroppedAndTheNextOneRead) {
  StepLogParser p;
  std::vector<StepRecord> r;
  const std::string long_line(StepLogParser::kMaxSegmentBytes + 1, ']');
  p.Feed(long_line, &r);  // no terminator yet: dropped as soon as it is too long
  p.Feed(long_line, &r);
  p.Feed("\nStep 7 | loss:1\n", &r);
  p.Finish(&r);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].step, 7);
  EXPECT_EQ(r[0].line, 2u);
  EXPECT_EQ(p.dropped_segments(), 1u);
  // The same in one piece, and a long line that is within the limit still parses.
  const std::string padded = std::string(60000, ' ') + "Step 8 | loss:1\n";
  const auto whole = ParseStepLog(long_line + "\n" + padded);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].step, 8);
}

TEST(StepLogHostile, ManyBracketsCostLittle) {
  // Each '[' could open a bar; only the last four are tried, so this stays linear.
  const std::string brackets = std::string(60000, '[') + "]";
  EXPECT_TRUE(None(brackets));
  EXPECT_TRUE(None(std::string(60000, '{') + "}"));
  EXPECT_TRUE(None("{'a': " + std::string(30000, '(') + "}"));
}

// --- the real-tqdm fixtures ---------------------------------------------------------------------

std::string Fixture(const std::string& name) {
  std::ifstream in(testing::FixturePath("logs/") + name, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  EXPECT_FALSE(bytes.str().empty()) << name;
  return bytes.str();
}

std::vector<StepRecord> OfFormat(const std::vector<StepRecord>& all, StepLogFormat f) {
  std::vector<StepRecord> out;
  for (const StepRecord& r : all) {
    if (r.format == f) out.push_back(r);
  }
  return out;
}

TEST(StepLogFixtures, HfTrainer) {
  const auto all = ParseStepLog(Fixture("tqdm_hf_trainer.log"));
  const auto bars = OfFormat(all, StepLogFormat::kTqdm);
  // 61 updates (0..60), the bar redrawn after each of the 7 dicts, and the close refresh.
  ASSERT_EQ(bars.size(), 69u);
  EXPECT_EQ(bars.front().step, 0);
  EXPECT_EQ(bars.back().step, 60);
  EXPECT_EQ(bars.back().elapsed_seconds, 17.0);
  EXPECT_DOUBLE_EQ(*bars.back().steps_per_second, 3.43);  // close(): the true average
  for (const StepRecord& b : bars) {
    EXPECT_EQ(b.total_steps, 60);
    EXPECT_EQ(b.stream, bars.front().stream);
  }
  EXPECT_EQ(bars[5].steps_per_second, 4.0);
  const auto dicts = OfFormat(all, StepLogFormat::kHfDict);
  ASSERT_EQ(dicts.size(), 7u);
  EXPECT_EQ(dicts[0].loss, 2.25);
  EXPECT_EQ(dicts[5].loss, 1.0);
  EXPECT_EQ(dicts[5].epoch, 1.0);
  EXPECT_EQ(dicts[6].elapsed_seconds, 17.5);
  EXPECT_EQ(dicts[6].steps_per_second, 3.429);
}

TEST(StepLogFixtures, TorchtuneSecondsPerIteration) {
  const auto all = ParseStepLog(Fixture("tqdm_torchtune_sit.log"));
  const auto tt = OfFormat(all, StepLogFormat::kTorchtuneProgress);
  ASSERT_FALSE(tt.empty());
  EXPECT_EQ(tt.front().step, 1);
  EXPECT_EQ(tt.back().step, 16);
  EXPECT_EQ(tt.back().epoch, 2.0);
  EXPECT_DOUBLE_EQ(*tt.back().loss, 1.4);
  for (const StepRecord& r : tt) {
    EXPECT_EQ(r.seconds_per_step, 2.5);
    EXPECT_EQ(r.total_steps, 8);
  }
}

TEST(StepLogFixtures, UnitScale) {
  const auto bars = ParseStepLog(Fixture("tqdm_unit_scale.log"));
  ASSERT_EQ(bars.size(), 82u);  // 0, 80 updates, the close refresh
  EXPECT_EQ(bars[1].step, 250);
  EXPECT_EQ(bars[4].step, 1000);  // "1.00k"
  EXPECT_EQ(bars.back().step, 20000);
  EXPECT_EQ(bars.back().total_steps, 20000);
  EXPECT_EQ(bars[10].steps_per_second, 1500.0);  // "1.50kit/s"
}

TEST(StepLogFixtures, LauncherTagsOnRealBars) {
  for (const char* name : {"tqdm_torchrun_rank.log", "tqdm_ray_worker.log"}) {
    const auto bars = ParseStepLog(Fixture(name));
    ASSERT_EQ(bars.size(), 29u) << name;  // 0..24, redrawn after 3 writes, close
    for (const StepRecord& b : bars) {
      if (std::string_view(name).find("ray") != std::string_view::npos) {
        EXPECT_EQ(b.worker_pid, 1234) << name;
      } else {
        EXPECT_EQ(b.rank, 0) << name;  // also on the '\r' updates the launcher did not tag
      }
      EXPECT_FALSE(b.total_steps);
    }
    EXPECT_EQ(bars.back().step, 24);
    EXPECT_EQ(bars.back().loss, 1.76);
    EXPECT_EQ(bars.back().steps_per_second, 1.25);
    EXPECT_EQ(bars.back().elapsed_seconds, 19.0);
  }
}

}  // namespace
}  // namespace headroom
