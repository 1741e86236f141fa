#include "samples/companion_records.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <string>

#include "base/message.h"
#include "testing_files.h"

namespace headroom {
namespace {

// Lines as python/headroom/_records.py writes them (tests/python/companion_test.py checks
// the writer's side).
constexpr const char* kStart =
    R"({"schema":"headroom.step/1","pid":4242,"rank":null,"kind":"start","wall":1764745200.5,)"
    R"("mono":1234.25,"framework":"plain","signal":10,"request_file":true})";
constexpr const char* kStep =
    R"({"schema":"headroom.step/1","pid":4242,"rank":1,"kind":"step","step":7,"wall":1764745201.5,)"
    R"("mono":1235.25,"tokens":4096,"loss":1.75,"lr":0.0002,"allocated_bytes":1073741824,)"
    R"("reserved_bytes":2147483648,"peak_allocated_bytes":3221225472,"host_peak_rss_bytes":524288000})";
constexpr const char* kSaveEnd =
    R"({"schema":"headroom.step/1","pid":4242,"rank":null,"kind":"save_end","step":7,)"
    R"("wall":1764745203.5,"mono":1237.25,"reason":"guard","duration_s":1.5,)"
    R"("path":"/ckpt/checkpoint-7","ok":true,"error":null})";

TEST(CompanionRecords, ReadsEveryKindTheCompanionWrites) {
  auto start = ParseCompanionRecord(kStart);
  ASSERT_TRUE(start) << EnglishText(start.error().what);
  EXPECT_EQ(start->kind, CompanionKind::kStart);
  EXPECT_EQ(start->pid, 4242);
  EXPECT_FALSE(start->rank);
  EXPECT_EQ(start->signal, 10);
  EXPECT_TRUE(start->request_file);
  EXPECT_EQ(start->framework, "plain");
  EXPECT_DOUBLE_EQ(start->mono_s, 1234.25);

  auto step = ParseCompanionRecord(kStep);
  ASSERT_TRUE(step) << EnglishText(step.error().what);
  EXPECT_EQ(step->step, 7);
  EXPECT_EQ(step->rank, 1);
  EXPECT_EQ(step->tokens, 4096);
  EXPECT_DOUBLE_EQ(*step->loss, 1.75);
  EXPECT_DOUBLE_EQ(*step->lr, 0.0002);
  EXPECT_EQ(step->allocated_bytes, 1ULL << 30);
  EXPECT_EQ(step->reserved_bytes, 2ULL << 30);
  EXPECT_EQ(step->peak_allocated_bytes, 3ULL << 30);
  EXPECT_EQ(step->host_peak_rss_bytes, 524288000U);
  EXPECT_DOUBLE_EQ(step->wall_s, 1764745201.5);

  auto end = ParseCompanionRecord(kSaveEnd);
  ASSERT_TRUE(end) << EnglishText(end.error().what);
  EXPECT_EQ(end->kind, CompanionKind::kSaveEnd);
  EXPECT_TRUE(end->ok);
  EXPECT_EQ(end->path, "/ckpt/checkpoint-7");
  EXPECT_EQ(end->reason, "guard");
  EXPECT_DOUBLE_EQ(*end->duration_s, 1.5);
  EXPECT_TRUE(end->error.empty());
  EXPECT_TRUE(end->source.empty());  // a companion from before "source": not known
}

// "source" (what wrote the checkpoint): an optional key of headroom.step/1.
TEST(CompanionRecords, ReadsWhatWroteTheCheckpoint) {
  for (const std::string source : {"transformers", "lightning", "loop"}) {
    auto end = ParseCompanionRecord(
        R"({"schema":"headroom.step/1","pid":9,"kind":"save_end","step":3,"wall":1,"mono":2,)"
        R"("reason":"guard","duration_s":0.5,"path":"/c/3","ok":true,"error":null,"source":")" +
        source + "\"}");
    ASSERT_TRUE(end) << EnglishText(end.error().what);
    EXPECT_EQ(end->source, source);
  }
  auto null_source = ParseCompanionRecord(
      R"({"schema":"headroom.step/1","pid":9,"kind":"save_start","step":3,"wall":1,"mono":2,)"
      R"("reason":"guard","source":null})");
  ASSERT_TRUE(null_source);
  EXPECT_TRUE(null_source->source.empty());
  auto bad = ParseCompanionRecord(
      R"({"schema":"headroom.step/1","pid":9,"kind":"save_end","wall":1,"mono":2,"source":["x"]})");
  ASSERT_FALSE(bad);
  EXPECT_NE(EnglishText(bad.error().what).find("\"source\""), std::string::npos);
}

// A save that raised, as the companion records it (python/headroom/__init__.py run_save):
// no path, ok false, the error's text; the training went on (docs/companion.md).
TEST(CompanionRecords, ReadsASaveThatFailed) {
  auto end = ParseCompanionRecord(
      R"({"schema":"headroom.step/1","pid":9,"rank":null,"kind":"save_end","step":4,)"
      R"("wall":1764745203.5,"mono":1237.25,"reason":"guard","duration_s":0.001,"path":null,)"
      R"("ok":false,"error":"OSError: disk full","source":"loop"})");
  ASSERT_TRUE(end) << EnglishText(end.error().what);
  EXPECT_EQ(end->kind, CompanionKind::kSaveEnd);
  EXPECT_FALSE(end->ok);
  EXPECT_TRUE(end->path.empty());
  EXPECT_EQ(end->error, "OSError: disk full");
  EXPECT_EQ(end->source, "loop");
  EXPECT_EQ(end->step, 4);
}

TEST(CompanionRecords, KeepsNonFiniteLossAndSkipsUnknownMembers) {
  auto nan = ParseCompanionRecord(
      R"({"schema":"headroom.step/1","pid":1,"kind":"step","step":0,"wall":1,"mono":2,)"
      R"("loss":"nan","future":{"nested":[1,2,{"x":null}]}})");
  ASSERT_TRUE(nan) << EnglishText(nan.error().what);
  EXPECT_TRUE(std::isnan(*nan->loss));
  auto inf = ParseCompanionRecord(
      R"({"schema":"headroom.step/1","pid":1,"kind":"step","step":0,"wall":1,"mono":2,"loss":"-inf"})");
  ASSERT_TRUE(inf);
  EXPECT_TRUE(std::isinf(*inf->loss) && *inf->loss < 0);
}

// Hostile lines: each is refused with a reason, never a crash, never a half-filled record.
TEST(CompanionRecords, RefusesHostileLinesWithAReason) {
  const std::string head = R"({"schema":"headroom.step/1","pid":1,"wall":1,"mono":2,)";
  const struct {
    std::string line;
    const char* says;
  } cases[] = {
      {"", "not a JSON object"},
      {"[1,2]", "not a JSON object"},
      {R"({"schema":"headroom.step/1")", "not JSON"},
      {head + R"("kind":"step","step":1}trailing)", "not JSON"},
      {head + R"("kind":"reboot"})", "\"kind\" \"reboot\""},
      {head + R"("kind":"step"})", "a step with no \"step\""},
      {head + R"("kind":"step","step":-3})", "\"step\" is not a non-negative integer"},
      {head + R"("kind":"step","step":1.5})", "\"step\" is not a non-negative integer"},
      {head + R"("kind":"step","step":99999999999999999999})", "\"step\""},
      {head + R"("kind":"step","step":1,"loss":"lots"})", "\"loss\""},
      {head + R"("kind":"step","step":1,"allocated_bytes":-1})", "\"allocated_bytes\""},
      {head + R"("kind":"step","step":1,"lr":1e999})", "\"lr\""},
      {head + R"("kind":"start","signal":0})", "\"signal\""},
      {head + R"("kind":"start","signal":"USR1"})", "\"signal\""},
      {head + R"("kind":"save_end","ok":1})", "\"ok\""},
      {head + R"("kind":"save_end","duration_s":-2})", "\"duration_s\""},
      {head + R"("kind":"save_end","path":7})", "\"path\""},
      {R"({"schema":"headroom.step/1","pid":0,"kind":"start","wall":1,"mono":2})", "\"pid\""},
      {R"({"schema":"headroom.step/1","pid":"me","kind":"start","wall":1,"mono":2})", "\"pid\""},
      {R"({"schema":"headroom.step/1","kind":"start","wall":1,"mono":2})", "no \"pid\""},
      {R"({"schema":"headroom.step/1","pid":1,"kind":"start","mono":2})", "\"wall\""},
      {R"({"schema":"headroom.step/1","pid":1,"kind":"start","wall":-1,"mono":2})", "\"wall\""},
      {R"({"pid":1,"kind":"start","wall":1,"mono":2})", "no \"schema\""},
      {R"({"schema":"other/1","pid":1,"kind":"start","wall":1,"mono":2})",
       "is not headroom.step/1"},
      {R"({"schema":3})", "\"schema\" is not a string"},
      {std::string(70, '[') + std::string(70, ']'), "not a JSON object"},
      {"{\"schema\":\"headroom.step/1\",\"pid\":1,\"kind\":\"st\xff\"}", "\"kind\""},
      {head + R"("kind":"start","deep":)" + std::string(100, '[') + std::string(100, ']') + "}",
       "not JSON"},
      {std::string(kMaxCompanionLineBytes + 1, ' '), "over the 16384-byte limit"},
  };
  for (const auto& c : cases) {
    auto r = ParseCompanionRecord(c.line);
    ASSERT_FALSE(r) << c.line.substr(0, 120);
    EXPECT_NE(EnglishText(r.error().what).find(c.says), std::string::npos)
        << c.line.substr(0, 120) << " -> " << EnglishText(r.error().what);
  }
}

// Issue 29: two processes' peaks of 2^63 summed to 0, and the sweep's trial read "peak 0, ok".
TEST(CompanionRecords, AByteFigureOutOfRangeIsRefusedAndThePeakCannotWrap) {
  const auto step = [](int pid, const std::string& peak) {
    return fmt::format(
        R"({{"schema":"headroom.step/1","pid":{},"rank":null,"kind":"step","step":1,"wall":1,)"
        R"("mono":2,"peak_allocated_bytes":{},"host_peak_rss_bytes":0}})",
        pid, peak);
  };
  auto huge = ParseCompanionRecord(step(1, "9223372036854775808"));
  ASSERT_FALSE(huge);
  EXPECT_EQ(EnglishText(huge.error().what),
            "\"peak_allocated_bytes\" is out of range: more than 9007199254740992 bytes");
  EXPECT_TRUE(ParseCompanionRecord(step(1, "9007199254740992")));  // 2^53 itself is read
  // Two forged lines are bad lines; the peak comes from the real one only.
  const std::string text = step(1, "9223372036854775808") + "\n" + step(2, "9223372036854775808") +
                           "\n" + step(3, "1073741824") + "\n";
  const CompanionRecords read = ParseCompanionRecords(text);
  EXPECT_EQ(read.bad_lines, 2U);
  auto peak = PeakFromRecords(read);
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->total_bytes(), 1073741824U);
  // Records made by hand are not checked: their sum stops at the bound instead of wrapping.
  CompanionRecords forged;
  for (int pid : {1, 2}) {
    CompanionRecord r;
    r.pid = pid;
    r.step = 1;
    r.peak_allocated_bytes = uint64_t{1} << 63;
    r.host_peak_rss_bytes = uint64_t{1} << 63;
    forged.records.push_back(r);
  }
  peak = PeakFromRecords(forged);
  ASSERT_TRUE(peak);
  EXPECT_EQ(peak->allocator_peak_bytes, kMaxRecordBytes);
  EXPECT_EQ(peak->total_bytes(), kMaxRecordBytes);
}

TEST(CompanionRecords, AFileCountsBadLinesAndOtherSchemasApart) {
  const std::string text =
      std::string(kStart) + "\n\n" + "garbage\n" + kStep + "\n" +
      R"({"schema":"headroom.step/2","pid":1,"kind":"start","wall":1,"mono":2})" +
      "\n{\"half\":" + "\n" + kSaveEnd;  // last line without '\n'
  const CompanionRecords got = ParseCompanionRecords(text);
  ASSERT_EQ(got.records.size(), 3U);
  EXPECT_EQ(got.records[2].kind, CompanionKind::kSaveEnd);
  EXPECT_EQ(got.bad_lines, 2U);
  EXPECT_EQ(got.other_schema, 1U);
  EXPECT_EQ(got.first_bad_line, 3U);
  EXPECT_NE(EnglishText(got.first_error).find("not a JSON object"), std::string::npos);
}

TEST(CompanionTail, TakesOnlyFinishedLinesAsTheyArrive) {
  testing::TempDir dir;
  const std::string path = dir.File("steps.jsonl");
  CompanionTail tail(path);
  EXPECT_TRUE(tail.Poll().empty());  // no file yet
  std::ofstream out(path, std::ios::binary);
  const std::string step = kStep;
  out << kStart << "\n" << step.substr(0, 40) << std::flush;
  auto first = tail.Poll();
  ASSERT_EQ(first.size(), 1U);
  EXPECT_EQ(first[0].kind, CompanionKind::kStart);
  out << step.substr(40) << "\n" << std::flush;
  auto second = tail.Poll();
  ASSERT_EQ(second.size(), 1U);
  EXPECT_EQ(second[0].step, 7);
  // An over-long line is dropped up to its newline, and the next line is read.
  out << std::string(kMaxCompanionLineBytes + 10, 'x') << "\n" << kSaveEnd << "\n" << std::flush;
  auto third = tail.Poll(64);  // a small budget: several polls
  for (int i = 0; i < 1000 && third.empty(); ++i) third = tail.Poll(64);
  ASSERT_EQ(third.size(), 1U);
  EXPECT_EQ(third[0].kind, CompanionKind::kSaveEnd);
  EXPECT_EQ(tail.bad_lines(), 1U);
  // Truncated and rewritten: read from the start again.
  out.close();
  std::ofstream again(path, std::ios::binary | std::ios::trunc);
  again << kStart << "\n" << std::flush;
  auto fourth = tail.Poll();
  ASSERT_EQ(fourth.size(), 1U);
  EXPECT_EQ(fourth[0].kind, CompanionKind::kStart);
}

TEST(CompanionTail, AFifoInItsPlaceIsNoRecordsAndNoHang) {
  testing::TempDir dir;
  const std::string path = dir.File("steps.jsonl");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  CompanionTail tail(path);
  EXPECT_TRUE(tail.Poll().empty());
}

}  // namespace
}  // namespace headroom
