// What a command records while it prints Traditional Chinese: under LANG=zh_TW.UTF-8 the
// lines of guard, sweep, watch, ladder and report on the terminal are Chinese (read from the
// merged catalog, i18n_cli.h), while the events files, the CSV files, the journal's rows
// (read with SQLite) and the report page's data hold no translated character, and the
// report's data is the same as under LANG=C.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "../explain/synthetic_run.h"
#include "base/message.h"
#include "i18n_cli.h"
#include "store/journal.h"
#include "sys/meminfo.h"
#include "testing_files.h"

namespace headroom {
namespace {

using namespace i18n_cli;  // NOLINT(google-build-using-namespace): the tests' own helpers
using I18nRecords = I18nCli;

// Every value of every row of every table of a journal, one a line: what the journal holds.
std::string JournalText(const std::string& path) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << path;
    sqlite3_close(db);
    return out;
  }
  std::vector<std::string> tables;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) {
    tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  }
  sqlite3_finalize(st);
  for (const auto& table : tables) {
    sqlite3_prepare_v2(db, ("SELECT * FROM \"" + table + "\"").c_str(), -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int i = 0; i < sqlite3_column_count(st); ++i) {
        if (const unsigned char* v = sqlite3_column_text(st, i))
          out += reinterpret_cast<const char*>(v);
        out += '\n';
      }
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

TEST_F(I18nRecords, GuardSpeaksChineseWhileItsEventsAndJournalStayEnglish) {
  testing::TempDir dir("i18n-guard");
  const pid_t job = fork();
  ASSERT_GE(job, 0);
  if (job == 0) {
    execl("/bin/sleep", "sleep", "20", static_cast<char*>(nullptr));
    _exit(127);
  }
  // --pid: always one note (descendants that re-parent away cannot be followed); a kill level
  // a MiB below MemTotal, above any MemAvailable (a level at or above MemTotal is refused): the
  // warning line and the kill come at the first reading, and no memory is used.
  const auto info = ReadMemInfo(SysRoot("/"));
  ASSERT_TRUE(info && info->total_bytes());
  const std::string level = std::to_string(*info->total_bytes() - (1ULL << 20)) + "B";
  const std::string journal = (dir / "journal.db").string(),
                    events = (dir / "events.jsonl").string();
  const auto zh = Headroom({"guard", "--journal", journal, "--events", events, "--pid",
                            std::to_string(job), "--min-available", level},
                           kChinese);
  int status = 0;
  waitpid(job, &status, 0);
  ASSERT_EQ(zh.status, 99) << zh.err;
  EXPECT_TRUE(WIFSIGNALED(status));
  const std::string note =
      "--pid: descendants that re-parent away from the process (setsid and double fork) cannot be "
      "followed; run the job under the guard for that";
  EXPECT_TRUE(Contains(zh.err, "headroom guard: " + ZhFormat("note: {}", Zh(note)) + "\n"))
      << zh.err;
  std::string warning =
      Zh("headroom guard: warning: MemAvailable {:.2f} GiB is below the warning level {:.2f} GiB");
  EXPECT_TRUE(Contains(zh.err, warning.substr(0, warning.find('{')))) << zh.err;
  std::string killed = Zh("killed the job: {0} ({1}; {2}{3}{4})");
  std::string reading = Zh("MemAvailable {0} fell below the kill level {1}");
  EXPECT_TRUE(Contains(zh.err, killed.substr(0, killed.find('{')) + "MemAvailable ")) << zh.err;
  EXPECT_TRUE(Contains(
      zh.err, reading.substr(reading.find('}') + 1, reading.rfind('{') - reading.find('}') - 1)))
      << zh.err;
  EXPECT_TRUE(Contains(zh.err, "memavailable")) << zh.err;
  std::string next = Zh("next: {} (the OOM ladder: the cheapest remedy first, docs/ladder.md)");
  EXPECT_TRUE(Contains(zh.err, next.substr(0, next.find('{')) + "headroom ladder start sleep "))
      << zh.err;
  for (const char* english : {"killed the job", "lowest MemAvailable",
                              "note: ", "warning: ", "fell below", "own peak", "next: "}) {
    EXPECT_FALSE(Contains(zh.err, english)) << english << "\n" << zh.err;
  }
  // The events file and the journal (summary_json's notes and reasons) are English.
  const std::string lines = Slurp(events);
  EXPECT_TRUE(Contains(lines, "\"type\":\"note\"")) << lines;
  EXPECT_TRUE(Contains(lines, "\"text\":\"" + note + "\"")) << lines;
  EXPECT_FALSE(HasCjk(lines)) << lines;
  const std::string rows = JournalText(journal);
  EXPECT_TRUE(Contains(rows, "\"kill_reason\":\"memavailable\"")) << rows;
  EXPECT_TRUE(Contains(rows, note)) << rows;
  EXPECT_FALSE(HasCjk(rows)) << rows;
}

TEST_F(I18nRecords, SweepProgressIsChineseWhileItsJournalAndCsvStayEnglish) {
  testing::TempDir dir("i18n-sweep");
  const std::string journal = (dir / "journal.db").string(), csv = (dir / "out.csv").string();
  // One trial of a job that uses no memory; limits that any machine meets.
  const auto zh = Headroom(
      {"sweep", "--state", journal, "--csv", csv, "--batch", "1", "--limit", "99%",
       "--min-available", "64M", "--require-available", "1M", "--", "sh", "-c", "true {batch}"},
      kChinese);
  ASSERT_EQ(zh.status, 0) << zh.err;
  EXPECT_TRUE(Contains(zh.err, ZhFormat("sweep: trial {} of at most {}: {}", 1, 30, "batch=1")))
      << zh.err;
  EXPECT_FALSE(Contains(zh.err, "sweep: trial ")) << zh.err;
  std::string answer =
      Zh("answer: {0}: peak {1} above the baseline, headroom {2} to the limit {3}");
  EXPECT_TRUE(Contains(zh.out, answer.substr(0, answer.find("{0}")) + "batch=1")) << zh.out;
  const std::string table = Slurp(csv);
  EXPECT_TRUE(Contains(table, "peak_mem_bytes,headroom_bytes,status,notes\n1,,,")) << table;
  EXPECT_FALSE(HasCjk(table)) << table;
  const std::string rows = JournalText(journal);
  EXPECT_TRUE(Contains(rows, "tree RSS peak ")) << rows;  // the trial's notes
  EXPECT_FALSE(HasCjk(rows)) << rows;
}

TEST_F(I18nRecords, WatchEventLinesAreChineseWhileItsCsvAndEventsStayEnglish) {
  testing::TempDir dir("i18n-watch");
  testing::WriteFile(dir / "nvml", "scenario gb10\ndegrade_after 3\n");
  const std::string csv = (dir / "s.csv").string(), events = (dir / "e.jsonl").string();
  const auto zh =
      RunCli({"watch", "--no-journal", "--interval", "100ms", "--out", csv, "--events", events,
              "--nvml-lib", HEADROOM_FAKE_NVML_PATH, "--guard", "--", "sh", "-c", "sleep 1.5"},
             20000, With(kChinese, {"HEADROOM_FAKE_NVML_SCRIPT=" + (dir / "nvml").string()}));
  ASSERT_EQ(zh.status, 0) << zh.err;
  // GB10's degraded clock (the fake's degrade_after): an event line, its message in Chinese.
  bool collapse = false;
  for (const auto& line : LinesStartingWith(zh.err, "headroom watch: ")) {
    if (!Contains(line, " clock_collapse: ")) continue;
    collapse = true;
    EXPECT_TRUE(HasCjk(line)) << line;
  }
  EXPECT_TRUE(collapse) << zh.err;
  std::string end = Zh("job exited with status {} after {:.1f} s; {} samples in {}");
  EXPECT_TRUE(Contains(zh.err, "headroom watch: " + end.substr(0, end.find('{')))) << zh.err;
  const std::string lines = Slurp(events);
  EXPECT_TRUE(Contains(lines, "\"type\":\"clock_collapse\"")) << lines;
  EXPECT_FALSE(HasCjk(lines)) << lines;
  EXPECT_FALSE(HasCjk(Slurp(csv)));

  // Without NVML: the CSV header's note is English (dlerror's text too), the line on stderr
  // is Chinese.
  const std::string missing = "/nonexistent/libnvidia-ml.so.1";
  const auto no_gpu = Headroom({"watch", "--no-journal", "--interval", "100ms", "--out", csv,
                                "--nvml-lib", missing, "--", "sh", "-c", "sleep 0.3"},
                               kChinese);
  ASSERT_EQ(no_gpu.status, 0) << no_gpu.err;
  std::string dlopen = ZhFormat("nvml: dlopen({0}): {1}", missing, "{1}");
  EXPECT_TRUE(Contains(no_gpu.err, "headroom: " + dlopen.substr(0, dlopen.find("{1}"))))
      << no_gpu.err;
  const std::string header = Slurp(csv);
  EXPECT_TRUE(Contains(header, "\n# note: nvml: dlopen(" + missing + "): ")) << header;
  EXPECT_TRUE(Contains(header, "; GPU columns are empty\n")) << header;
  EXPECT_FALSE(HasCjk(header)) << header;
}

TEST_F(I18nRecords, LadderAdviceIsChineseOnScreenAndEnglishInTheJournal) {
  testing::TempDir dir("i18n-ladder");
  std::filesystem::create_directories(dir / "root/proc/sys/vm");
  std::filesystem::copy_file(kFixtures + "gb10-pagecache/proc/meminfo", dir / "root/proc/meminfo");
  testing::WriteFile(dir / "root/proc/sys/vm/drop_caches", "0\n");
  const std::string journal = (dir / "journal.db").string();
  const auto ladder = [&](const std::vector<std::string>& args) {
    return Headroom(With({"ladder", "--journal", journal, "--root", (dir / "root").string()}, args),
                    kChinese);
  };
  auto r = ladder({"start", "myjob", "--symptom", "load", "--plan-args",
                   "llama-3.1-8b --method lora --seq 65536 --batch 8 --budget 40GB"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, Zh("flush the page cache between runs") + "\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, ZhFormat("between runs, as root: {} (or: headroom ladder apply JOB)",
                                       "sync; echo 3 > /proc/sys/vm/drop_caches")))
      << r.out;
  r = ladder({"record", "myjob", "--result", "oom"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string plan = Zh("plan: {0} {1}, batch {2} x seq {3}: peak {4} of a {5} budget ({6})");
  EXPECT_TRUE(Contains(r.out, "  " + plan.substr(0, plan.find("{0}")) + "llama-3.1-8b lora"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, Zh("does not fit"))) << r.out;
  EXPECT_FALSE(Contains(r.out, "plan: llama")) << r.out;
  // The view: the symptom's note in Chinese; a ladder at step 1 gets a live "now:" line.
  ASSERT_EQ(ladder({"start", "other", "--symptom", "step"}).status, 0);
  r = ladder({});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Contains(
      r.out, "  " +
                 ZhFormat("note: {}", Zh("packing and batch do not change the load peak (weights "
                                         "plus the load transient); this step matters less for an "
                                         "OOM while loading, but the order is kept")) +
                 "\n"))
      << r.out;
  std::string now = Zh("now: {}");
  const auto now_lines = LinesStartingWith(r.out, "  " + now.substr(0, now.find("{}")) + "Cached ");
  ASSERT_EQ(now_lines.size(), 1u) << r.out;
  EXPECT_TRUE(HasCjk(now_lines[0].substr(now_lines[0].find("Cached ")))) << now_lines[0];
  // The journal: the entries' texts and evidence in English.
  const std::string rows = JournalText(journal);
  EXPECT_TRUE(Contains(rows, "plan: llama-3.1-8b lora, batch 8 x seq 65536")) << rows;
  EXPECT_TRUE(Contains(rows, "packing and batch do not change the load peak")) << rows;
  EXPECT_FALSE(HasCjk(rows)) << rows;
  const auto j = nlohmann::json::parse(
      Headroom({"ladder", "--journal", journal, "--root", (dir / "root").string(), "--json"},
               kChinese)
          .out);
  EXPECT_EQ(j["ladders"][0]["step_title"],
            "shorten the packing length first, then reduce the batch size");
}

// A ladder recorded by an English run is shown in the reader's language: `ladder` renders
// each entry's stored message value again (journal schema version 4), while an entry from
// before messages were stored shows the English text it holds.
TEST_F(I18nRecords, LadderShowsRecordedEntriesInTheReadersLanguage) {
  testing::TempDir dir("i18n-ladder-show");
  std::filesystem::create_directories(dir / "root/proc/sys/vm");
  std::filesystem::copy_file(kFixtures + "gb10-pagecache/proc/meminfo", dir / "root/proc/meminfo");
  testing::WriteFile(dir / "root/proc/sys/vm/drop_caches", "0\n");
  const std::string journal = (dir / "journal.db").string();
  const auto ladder = [&](const std::vector<std::string>& args,
                          const std::vector<std::string>& locale) {
    return Headroom(With({"ladder", "--journal", journal, "--root", (dir / "root").string()}, args),
                    locale);
  };
  auto r = ladder({"start", "myjob", "--symptom", "step", "--plan-args",
                   "llama-3.1-8b --method lora --seq 65536 --batch 8 --budget 40GB"},
                  kEnglish);
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(Contains(r.out, "  Cached ")) << r.out;
  r = ladder({"record", "myjob", "--result", "oom"}, kEnglish);
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_TRUE(Contains(r.out, "  plan: llama-3.1-8b lora")) << r.out;

  r = ladder({}, kChinese);
  ASSERT_EQ(r.status, 0) << r.err;
  // Step 1's entry (made by the English run) and its result, in Chinese.
  EXPECT_TRUE(Contains(r.out, ZhFormat("between runs, as root: {} (or: headroom ladder apply JOB)",
                                       "sync; echo 3 > /proc/sys/vm/drop_caches")))
      << r.out;
  EXPECT_TRUE(Contains(r.out, ZhFormat("step {} ({}): {}", 1, "flush-page-cache", "oom"))) << r.out;
  // Step 2's plan line, with the verdict word translated inside it.
  std::string plan = Zh("plan: {0} {1}, batch {2} x seq {3}: peak {4} of a {5} budget ({6})");
  EXPECT_TRUE(Contains(r.out, plan.substr(0, plan.find("{0}")) + "llama-3.1-8b lora")) << r.out;
  EXPECT_FALSE(Contains(r.out, "plan: llama")) << r.out;
  EXPECT_FALSE(Contains(r.out, "between runs, as root")) << r.out;
  EXPECT_FALSE(Contains(r.out, "step 1 (flush-page-cache): oom")) << r.out;
  // --json: the entries' English text, as before.
  const auto j = nlohmann::json::parse(ladder({"--json"}, kChinese).out);
  ASSERT_EQ(j["ladders"][0]["entries"].size(), 3u);
  EXPECT_EQ(j["ladders"][0]["entries"][1]["text"], "step 1 (flush-page-cache): oom");

  // What an older headroom wrote: no stored message, so the text as recorded.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(journal.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE ladder_entries SET text_message = NULL WHERE kind = 'result'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  r = ladder({}, kChinese);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "step 1 (flush-page-cache): oom")) << r.out;
  EXPECT_TRUE(Contains(r.out, ZhFormat("between runs, as root: {} (or: headroom ladder apply JOB)",
                                       "sync; echo 3 > /proc/sys/vm/drop_caches")))
      << r.out;
}

// A guarded run's notes are stored as messages (journal schema version 6): `history` shows
// them in the reader's language, a run recorded before shows the English its summary holds,
// and `history --json` is the same in every language.
TEST_F(I18nRecords, HistoryShowsRecordedNotesInTheReadersLanguage) {
  testing::TempDir dir("i18n-history");
  const std::string journal = (dir / "journal.db").string();
  {
    auto j = Journal::Open(journal);
    ASSERT_TRUE(j) << EnglishText(j.error().what);
    const WallTime t0 = std::chrono::system_clock::now();
    auto old = j->BeginRun(RunKind::kGuard, {"python", "old.py"}, t0);
    ASSERT_TRUE(old);  // as an older headroom recorded it: the English only
    ASSERT_TRUE(j->FinishRun(*old, "ok", 0, R"({"notes":["nice -10: recorded in English"]})", t0));
    auto run = j->BeginRun(RunKind::kGuard, {"python", "train.py"}, t0);
    ASSERT_TRUE(run);
    const Message note = Msg("oom_score_adj -500 for the guard: not permitted");
    ASSERT_TRUE(j->FinishRun(*run, "ok", 0, nlohmann::json{{"notes", {EnglishText(note)}}}.dump(),
                             t0, {note}));
  }
  const auto zh = Headroom({"history", "--journal", journal}, kChinese);
  ASSERT_EQ(zh.status, 0) << zh.err;
  EXPECT_TRUE(Contains(zh.out, ZhFormat("note: {}", Zh("oom_score_adj -500 for the guard: "
                                                       "not permitted"))))
      << zh.out;
  EXPECT_FALSE(Contains(zh.out, "oom_score_adj -500 for the guard: not permitted")) << zh.out;
  EXPECT_TRUE(Contains(zh.out, ZhFormat("note: {}", "nice -10: recorded in English"))) << zh.out;
  const auto en = Headroom({"history", "--journal", journal}, kEnglish);
  ASSERT_EQ(en.status, 0) << en.err;
  EXPECT_TRUE(Contains(en.out, "    note: oom_score_adj -500 for the guard: not permitted\n"))
      << en.out;
  // --json: the summaries as recorded, in English, whatever the reader's language.
  const auto zh_json = Headroom({"history", "--journal", journal, "--json"}, kChinese);
  const auto en_json = Headroom({"history", "--journal", journal, "--json"}, kEnglish);
  ASSERT_EQ(zh_json.status, 0) << zh_json.err;
  EXPECT_EQ(zh_json.out, en_json.out);
  EXPECT_FALSE(HasCjk(zh_json.out)) << zh_json.out;
  EXPECT_TRUE(Contains(zh_json.out, "oom_score_adj -500 for the guard: not permitted"));
}

TEST_F(I18nRecords, ReportPageDataIsEnglishWhileItsLineIsChinese) {
  testing::TempDir dir("i18n-report");
  const auto run = testing::MakeSyntheticRun(testing::Scenario::kContention);
  testing::WriteFile(dir / "train.log", run.log);
  testing::WriteFile(dir / "samples.csv", run.samples_csv);
  testing::WriteFile(dir / "events.jsonl", run.events_jsonl);
  const auto page = [&](const std::string& name, const std::vector<std::string>& locale) {
    const auto r = Headroom(
        {"report", "--samples", (dir / "samples.csv").string(), "--log",
         (dir / "train.log").string(), "--events", (dir / "events.jsonl").string(), "--plan-args",
         "llama-3.1-8b --method qlora --budget 100GB", "-o", (dir / name).string()},
        locale);
    EXPECT_EQ(r.status, 0) << r.err;
    // The page's data, without the time it was made.
    std::string data = Slurp(dir / name);
    const size_t start = data.find("window.HEADROOM_DATA =\n");
    EXPECT_NE(start, std::string::npos);
    data = data.substr(start, data.find("\n;\n", start) - start);
    return std::make_pair(r.out,
                          std::regex_replace(data, std::regex(R"("generated":"[^"]*")"), ""));
  };
  const auto [zh_line, zh_data] = page("zh.html", kChinese);
  const auto [en_line, en_data] = page("en.html", kEnglish);
  EXPECT_TRUE(Contains(en_data, "\"verdict\":\"contention\"")) << en_data.substr(0, 2000);
  EXPECT_EQ(zh_data, en_data);
  EXPECT_FALSE(HasCjk(zh_data));
  EXPECT_TRUE(en_line.starts_with("wrote ")) << en_line;
  EXPECT_TRUE(HasCjk(zh_line)) << zh_line;
}

}  // namespace
}  // namespace headroom
