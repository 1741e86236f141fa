// `headroom report` through the real binary: synthetic runs with known answers (the samples,
// log and events explain's tests use), a 24-hour run at one sample a second, hostile input,
// usage errors; the written page checked against the data contract
// (tests/report/report_contract.py) and rendered in a real headless chromium
// (tests/report/browser_test.py --page), screenshots kept under build/report-artifacts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "../explain/synthetic_run.h"
#include "run_cli.h"
#include "samples/samples_csv.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::RunCli;
namespace fs = std::filesystem;
using testing::Contains;
using testing::Slurp;
const std::string kSource = HEADROOM_SOURCE_DIR;

// Runs a shell command; its exit status, and its output in `out`.
int Shell(const std::string& command, std::string* out) {
  const std::string file =
      (fs::temp_directory_path() / fmt::format("headroom-shell-{}.out", ::getpid())).string();
  const int rc = std::system((command + " > " + file + " 2>&1").c_str());
  *out = Slurp(file);
  fs::remove(file);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

uint64_t WriteDayLongSamples(const std::string& path);  // below

struct RunFiles {
  testing::TempDir dir{"report-cli"};
  std::string samples, log, events;
  explicit RunFiles(testing::Scenario scenario) {
    const auto run = testing::MakeSyntheticRun(scenario);
    samples = (dir / "samples.csv").string();
    log = (dir / "train.log").string();
    events = (dir / "events.jsonl").string();
    testing::WriteFile(samples, run.samples_csv);
    testing::WriteFile(log, run.log);
    // The guard's start and trigger lines beside watch's (the file both write with --guard),
    // and a line that is not an event.
    std::string ev = run.events_jsonl;
    ev +=
        "{\"type\":\"start\",\"wall_time\":\"2026-11-29T10:00:01Z\",\"monotonic_s\":1.0,\"pid\":77,"
        "\"available_bytes\":107374182400,\"kill_below_bytes\":10453053276,\"warn_below_bytes\":"
        "20906106552,"
        "\"cgroup\":\"\"}\n";
    ev += "not json at all\n";
    ev +=
        "{\"type\":\"throttle_set\",\"wall_time\":\"2026-11-29T10:00:30Z\",\"data\":{\"reason\":"
        "\"sw_power_cap\"}}\n";
    ev +=
        "{\"type\":\"throttle_cleared\",\"wall_time\":\"2026-11-29T10:00:50Z\",\"data\":{"
        "\"reason\":\"sw_power_cap\"}}\n";
    ev +=
        "{\"type\":\"trigger\",\"wall_time\":\"2026-11-29T10:02:00Z\",\"monotonic_s\":120.0,"
        "\"reason\":\"</script><!-- "
        "MemAvailable\",\"available_bytes\":9000000000,\"kill_below_bytes\":10453053276}\n";
    testing::WriteFile(events, ev);
  }
};

// --plan-args "--from FILE": the plan's line from the run's own configuration, and the keys
// the file has that the plan does not model kept as a note of the page (and of --json).
TEST(ReportCli, PlanArgsFromTheRunsConfigNoteWhatIsNotModelled) {
  RunFiles f(testing::Scenario::kContention);
  const std::string file = testing::FixturePath("run_configs/axolotl/qwen3-32b-qlora.yaml");
  const std::vector<std::string> env = {"HF_HUB_CACHE=/nonexistent/headroom-test-hub"};
  const auto r = RunCli({"report", "--samples", f.samples, "--json", "--plan-args",
                         "--from " + file + " --budget 100GiB"},
                        60000, env);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(Contains(j["plan"]["text"], "headroom plan: qwen3-32b qlora, batch 1, seq 2048"))
      << j["plan"].dump();
  EXPECT_GT(j["plan"]["estimate_bytes"].get<uint64_t>(), 0u);
  const std::string note = "from " + file + " (axolotl): not modelled: " +
                           "gradient_checkpointing: offload (with an adapter every activation is "
                           "offloaded: planned as --grad-ckpt off), optimizer: "
                           "adamw_torch_4bit, lora_mlp_kernel, lora_qkv_kernel, lora_o_kernel";
  bool noted = false;
  for (const auto& n : j["notes"]) noted = noted || n == note;
  EXPECT_TRUE(noted) << j["notes"].dump();
  // Flags beside the file win, as in plan.
  const auto batch = RunCli({"report", "--samples", f.samples, "--json", "--plan-args",
                             "--from " + file + " --batch 4 --budget 100GiB"},
                            60000, env);
  ASSERT_EQ(batch.status, 0) << batch.err;
  EXPECT_TRUE(Contains(nlohmann::json::parse(batch.out)["plan"]["text"], "batch 4, seq 2048"));
  // The file gone: one line naming it, status 2, no page.
  const fs::path page = fs::path(f.samples).parent_path() / "gone.html";
  const auto gone = RunCli({"report", "--samples", f.samples, "-o", page.string(), "--plan-args",
                            "--from /nonexistent/run.yml"},
                           60000, env);
  EXPECT_EQ(gone.status, 2);
  EXPECT_TRUE(Contains(gone.err, "headroom: report: --plan-args: --from: ")) << gone.err;
  EXPECT_TRUE(Contains(gone.err, "/nonexistent/run.yml")) << gone.err;
  EXPECT_EQ(std::count(gone.err.begin(), gone.err.end(), '\n'), 1) << gone.err;
  EXPECT_FALSE(fs::exists(page));
}

TEST(ReportCli, ContentionRunDataFollowsTheContract) {
  RunFiles f(testing::Scenario::kContention);
  const auto r = RunCli({"report", "--samples", f.samples, "--log", f.log, "--events", f.events,
                         "--json", "--plan-args", "llama-3.1-8b --method qlora --budget 100GiB"},
                        60000);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["start"], "2026-11-29T10:00:00.000Z");
  EXPECT_EQ(j["platform"]["name"], "gb10");
  EXPECT_EQ(j["platform"]["sustained_power_w"], 100.0);
  EXPECT_EQ(j["platform"]["rated_power_w"], 240.0);
  EXPECT_EQ(j["host"], "spark-test");
  EXPECT_EQ(j["sampling"]["interval_s"], 2.0);
  EXPECT_EQ(j["sampling"]["method"], "minmax");
  // A short run: one bucket per row, except that the last bucket ends at the last sample
  // (bucket = min(floor(t / bucket_s), ceil(duration / bucket_s) - 1)), so the last two rows share
  // it.
  const size_t rows = j["sampling"]["rows"];
  EXPECT_EQ(j["sampling"]["bucket_s"], 2.0);
  EXPECT_EQ(j["series"]["mem_used_bytes"]["t"].size(), rows - 1);
  for (const char* name : {"mem_used_bytes", "mem_available_bytes", "gpu_power_w", "gpu_temp_c",
                           "sm_clock_mhz", "step_rate_per_s"}) {
    EXPECT_TRUE(j["series"].contains(name)) << name;
  }
  EXPECT_FALSE(j["series"].contains("gpu_mem_used_bytes"));  // GB10: no NVML memory
  EXPECT_FALSE(j["series"].contains("swap_used_bytes"));     // no swap used
  // explain's verdict on the slow stretch, with times relative to the start.
  ASSERT_EQ(j["slowdowns"].size(), 1u) << j["slowdowns"].dump();
  EXPECT_EQ(j["slowdowns"][0]["verdict"], "contention");
  EXPECT_GT(j["slowdowns"][0]["end_t"].get<double>(), j["slowdowns"][0]["t"].get<double>());
  EXPECT_NEAR(j["step_baseline_per_s"].get<double>(), 2.0, 0.05);  // 0.5 s per step
  // Events: the pid's contention band open to the end, the throttle band, the guard's kill.
  bool contention = false, throttle = false, kill = false;
  for (const auto& e : j["events"]) {
    if (e["kind"] == "contention") contention = e["end_t"] == j["duration_s"];
    if (e["kind"] == "throttle")
      throttle = e["t"] == 30.0 && e["end_t"] == 50.0 && e["reason"] == "sw_power_cap";
    if (e["kind"] == "guard_kill")
      kill = e["t"] == 120.0 && Contains(e["text"], "</script><!-- MemAvailable");
  }
  EXPECT_TRUE(contention && throttle && kill) << j["events"].dump();
  EXPECT_EQ(j["guard"]["kill_level_bytes"], 10453053276u);
  EXPECT_EQ(j["guard"]["warn_level_bytes"], 20906106552u);
  EXPECT_GT(j["plan"]["estimate_bytes"].get<uint64_t>(), 0u);
  EXPECT_TRUE(Contains(j["plan"]["text"], "llama-3.1-8b qlora")) << j["plan"];
  // The summary over every row: MemAvailable fell by up to 4 GiB during the contention.
  const uint64_t low = j["summary"]["min_available_bytes"];
  EXPECT_LE(low, (uint64_t{100} << 30) - (uint64_t{39} << 30) / 10);
  EXPECT_GE(low, (uint64_t{100} << 30) - (uint64_t{4} << 30));
  EXPECT_EQ(j["summary"]["throttled_s"], nlohmann::json::object());  // no bit in the samples
  EXPECT_EQ(j["summary"]["steps"], 299);
  EXPECT_TRUE(Contains(j["notes"].dump(), "1 lines were not events")) << j["notes"];
}

// Two pages headroom wrote (a thermal run with its log and events, and the day-long run),
// checked against the contract and then rendered in one chromium session: loads with no
// console error and no request, charts drawn, screenshots in build/report-artifacts.
TEST(ReportCli, WrittenPagesValidateAndRenderInChromium) {
  RunFiles f(testing::Scenario::kThermalBit);
  const std::string page = (f.dir / "thermal.html").string();
  const auto r = RunCli(
      {"report", "--samples", f.samples, "--log", f.log, "--events", f.events, "-o", page}, 60000);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("wrote " + page + " (")) << r.out;
  EXPECT_FALSE(fs::exists(page + ".tmp"));
  const std::string html = Slurp(page);
  EXPECT_FALSE(Contains(html, "\n/*HEADROOM_DATA*/null\n")) << "the placeholder line is replaced";
  EXPECT_FALSE(Contains(html, "</script><!-- MemAvailable"))
      << "event text must be escaped in the page";
  EXPECT_TRUE(Contains(html, "\\u003c/script\\u003e\\u003c!-- MemAvailable"));
  const std::string day_samples = (f.dir / "day.csv").string();
  WriteDayLongSamples(day_samples);
  const std::string day = (f.dir / "day.html").string();
  ASSERT_EQ(RunCli({"report", "--samples", day_samples, "-o", day}, 120000).status, 0);
  EXPECT_LT(fs::file_size(day), 3'000'000u);  // a few MB at most for 24 h at 1 s
  std::string out;
  for (const auto& p : {page, day}) {
    EXPECT_EQ(Shell("python3 " + kSource + "/tests/report/report_contract.py " + p, &out), 0)
        << p << "\n"
        << out;
  }
#ifdef HEADROOM_SANITIZED
  GTEST_SKIP()
      << "the browser half runs in the normal build (it tests the page, not this build's code)";
#endif
  const std::string artifacts = std::string(HEADROOM_BINARY_DIR) + "/report-artifacts";
  EXPECT_EQ(Shell("python3 " + kSource + "/tests/report/browser_test.py " + artifacts + " --page " +
                      page + " --page " + day,
                  &out),
            0)
      << out;
}

// A 24-hour run at one sample a second (86,400 rows) with a 3 s memory spike at 50,000 s and an
// hour of sw_power_cap; written to `path`. Returns MemTotal.
uint64_t WriteDayLongSamples(const std::string& path) {
  SamplesHeader header;
  header.host = "spark-day";
  header.device = "NVIDIA GB10";
  header.platform = "gb10";
  header.interval_ms = 1000;
  header.started = testing::SyntheticStart();
  std::string csv = FormatSamplesHeader(header);
  const uint64_t total = uint64_t{127'600'748} * 1024;
  for (int i = 0; i < 86'400; ++i) {
    Sample s;
    s.time = header.started + std::chrono::seconds(i);
    s.mem_total_bytes = total;
    const bool spike = i >= 50'000 && i < 50'003;
    s.mem_available_bytes = spike ? uint64_t{10} << 30 : uint64_t{90} << 30;
    s.mem_cached_bytes = uint64_t{5} << 30;
    s.temperature_c = 60 + (i % 600) / 60;
    s.power_mw = 95'000 + static_cast<uint32_t>(i % 100) * 100;
    s.sm_clock_mhz = 2400;
    s.clock_event_reasons = i >= 3600 && i < 7200 ? 0x4 : 0;  // an hour of sw_power_cap
    csv += FormatSampleRow(s, 0);
  }
  testing::WriteFile(path, csv);
  return total;
}

// The day-long run's data: drawn from 2,000 buckets; the spike survives as a bucket's max.
TEST(ReportCli, DayLongRunIsDownsampledWithSpikesKept) {
  testing::TempDir dir("report-day");
  const std::string samples = (dir / "samples.csv").string();
  const uint64_t total = WriteDayLongSamples(samples);
  const auto r = RunCli({"report", "--samples", samples, "--json"}, 120000);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["sampling"]["rows"], 86'400);
  EXPECT_EQ(j["sampling"]["buckets"], 2000);
  EXPECT_NEAR(j["sampling"]["bucket_s"].get<double>(), 86'399.0 / 2000, 0.001);
  const auto& used = j["series"]["mem_used_bytes"];
  EXPECT_EQ(used["t"].size(), 2000u);
  uint64_t peak_max = 0, peak_mean = 0;
  for (size_t i = 0; i < used["max"].size(); ++i) {
    peak_max = std::max(peak_max, used["max"][i].get<uint64_t>());
    peak_mean = std::max(peak_mean, used["mean"][i].get<uint64_t>());
  }
  EXPECT_EQ(peak_max, total - (uint64_t{10} << 30));  // the 3 s spike, whole
  EXPECT_LT(peak_mean, peak_max);                     // which a mean alone would hide
  EXPECT_EQ(j["summary"]["peak_used_bytes"], total - (uint64_t{10} << 30));
  EXPECT_EQ(j["summary"]["peak_used_t"], 50'000.0);
  EXPECT_EQ(j["summary"]["throttled_s"]["sw_power_cap"], 3600.0);
  EXPECT_TRUE(j["slowdowns"].is_null());  // no log: not analysed
}

// `report --run ID` draws the files a `headroom watch --journal` run recorded.
TEST(ReportCli, RunFromTheJournalUsesTheFilesWatchRecorded) {
  testing::TempDir dir("report-run");
  const std::string journal = (dir / "journal.db").string();
  const std::string samples = (dir / "s.csv").string();
  const auto w = RunCli(
      {"watch", "--journal", journal, "--interval", "100ms", "--out", samples, "--log",
       (dir / "job.log").string(), "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--", "sh", "-c",
       "i=0; while [ $i -lt 20 ]; do i=$((i+1)); echo \"{\\\"step\\\": $i}\"; sleep 0.03; done"},
      20000);
  ASSERT_EQ(w.status, 0) << w.err;
  const auto r = RunCli({"report", "--run", "1", "--journal", journal, "--json"}, 30000);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["title"], "run 1");
  EXPECT_EQ(j["sources"]["samples"], samples);
  EXPECT_TRUE(j["slowdowns"].is_array());  // the log was read (a short run: no window)
  EXPECT_EQ(j["platform"]["name"], "none");
  EXPECT_FALSE(j["series"].contains("gpu_power_w"));  // no GPU: no power series, not zeros
  const auto missing = RunCli({"report", "--run", "9", "--journal", journal});
  EXPECT_EQ(missing.status, 2);
  EXPECT_TRUE(Contains(missing.err, "--run 9: no such run in " + journal)) << missing.err;
}

TEST(ReportCli, UsageAndInputErrorsAreOneLine) {
  testing::TempDir dir("report-errors");
  testing::WriteFile(dir / "empty.csv", "");
  testing::WriteFile(dir / "garbage.csv", std::string("\x01\x02 not a csv\n"));
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  for (const Case& c :
       {Case{{"report"},
             "headroom: report: --samples: give watch's samples CSV, or --run ID of a watch run\n"},
        Case{{"report", "--samples", "/nonexistent.csv"}, "headroom: report: --samples: "},
        Case{{"report", "--samples", (dir / "empty.csv").string()},
             "headroom: report: --samples: "},
        Case{{"report", "--samples", (dir / "garbage.csv").string()},
             "headroom: report: --samples: "},
        Case{{"report", "--samples", (dir / "empty.csv").string(), "-o", "/nonexistent/dir/r.html"},
             "headroom: report: -o: /nonexistent/dir/r.html: directory /nonexistent/dir does not "
             "exist\n"},
        Case{{"report", "--samples", (dir / "empty.csv").string(), "--platform", "tpu"},
             "headroom: report: --platform: 'tpu' is not one of gb10, discrete, none\n"}}) {
    const auto r = RunCli(c.args, 30000);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(r.err.starts_with(c.error)) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace headroom
