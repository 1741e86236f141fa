// The parts of one `headroom top` refresh, apart (docs/top.md quotes these figures; the
// whole, in a real terminal, is bench/top_cost.py). Run from the repository root:
//
//   build/bench/top_parts
//
// BM_HolderSurvey: the pool-holder survey of this machine's /proc (stat and cmdline of every
// process, maps of bare pythons, details of the holders) with their caps: the reason top
// surveys every 5 s rather than every sample.
// BM_RunningGuards: the running guards of a journal holding 1000 finished runs and one
// running guard (the test process itself), read through an open connection.
// BM_Layout: one 120x40 frame from a GB10 snapshot with a full history (600 points).
// BM_RefreshNoSurvey: one Refresh between surveys (a sample of /proc, the event detector,
// history), without a GPU.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "cli/top/top_view.h"
#include "guard/guard_record.h"
#include "store/journal.h"
#include "sys/holder_caps.h"
#include "sys/pool_holders.h"
#include "sys/processes.h"
#include "top/collector.h"
#include "top/running_guards.h"
#include "top_testing.h"

namespace headroom {
namespace {

void BM_HolderSurvey(benchmark::State& state) {
  const SysRoot root(std::filesystem::path("/"));
  size_t holders = 0;
  for (auto _ : state) {
    const auto found = FindPoolHolders(root, std::nullopt, ::getpid());
    for (const auto& h : found) {
      benchmark::DoNotOptimize(ParseHolderCap(h.kind, CommandWords(h.facts.argv), h.facts.environ));
    }
    holders = found.size();
  }
  state.counters["processes"] = static_cast<double>(ListPids(root).size());
  state.counters["holders"] = static_cast<double>(holders);
}
BENCHMARK(BM_HolderSurvey)->Unit(benchmark::kMillisecond);

void BM_RunningGuards(benchmark::State& state) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("headroom-top-parts-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "journal.db";
  {
    auto journal = Journal::Open(path);
    if (!journal) {
      state.SkipWithError(EnglishText(journal.error().what).c_str());
      return;
    }
    const auto now = std::chrono::system_clock::now();
    for (int i = 0; i < 1000; ++i) {
      auto id = journal->BeginRun(RunKind::kGuard, {"python", "train.py"}, now);
      if (id) (void)journal->FinishRun(*id, "exited", 0, "{}", now);
    }
    auto id = journal->BeginRun(RunKind::kGuard, {"python", "train.py"}, now);
    const auto self = ReadProcStat(SysRoot(std::filesystem::path("/")), ::getpid());
    if (id && self) {
      (void)journal->AddEvent(
          *id, "start", 0, now,
          GuardStartJson({::getpid(), self->starttime_ticks, "", 1ULL << 30, 2ULL << 30, ""}));
    }
  }
  RunningGuardReader reader(path, SysRoot(std::filesystem::path("/")), "");
  std::string note;
  for (auto _ : state) benchmark::DoNotOptimize(reader.Read(note));
  state.counters["running"] = static_cast<double>(reader.Read(note).size());
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_RunningGuards)->Unit(benchmark::kMicrosecond);

void BM_Layout(benchmark::State& state) {
  const TopSnapshot s = testing::Gb10Snapshot();
  const History h = testing::HistoryOf(s, kDefaultHistoryPoints);
  ViewOptions o;
  o.width = 120;
  o.height = 40;
  for (auto _ : state) benchmark::DoNotOptimize(LayoutTop(s, h, UiState{}, o));
}
BENCHMARK(BM_Layout)->Unit(benchmark::kMicrosecond);

void BM_RefreshNoSurvey(benchmark::State& state) {
  CollectorOptions o;
  o.survey_period = std::chrono::hours(1);
  TopCollector c(SysRoot(std::filesystem::path("/")), nullptr, "", o);
  const auto t0 = std::chrono::steady_clock::now();
  c.Refresh(std::chrono::system_clock::now(), t0);  // the first refresh surveys
  for (auto _ : state) benchmark::DoNotOptimize(c.Refresh(std::chrono::system_clock::now(), t0));
}
BENCHMARK(BM_RefreshNoSurvey)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace headroom

BENCHMARK_MAIN();
