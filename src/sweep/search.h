// The sweep's search: which trial to run next, which to skip, and when to stop. A pure
// state machine (no processes, no clock), so the benchmark and the tests drive it with
// synthetic peak curves and the driver (sweep.cc) with real trials.
//
// The knobs grow one at a time in the grid's order, the others held at their current
// value (the owners' method: double one knob, keep the last config that fit). For each
// knob:
//  1. grow through its coarse values until a trial fails or the next one is predicted to
//     break the limit (after two ok trials, from the peak model; for batch after seq or
//     seq after batch, from the other knob's model by tokens per step, batch x seq);
//  2. refine: launch the largest value below the first failure that the model predicts
//     to fit (re-predicted after every trial, so a value skipped on two points may run
//     once a third point shows it fits), or without a model the midpoint, until the
//     value above the last good one is a failure or predicted over;
//  3. fix the knob at its last good value, report as skipped the values that were
//     predicted over and never launched, and go on to the next knob.
// With a start (sweep --start, sweep/start.h), the first knob grows through the start's
// series instead of its doubling from LO, and when the start itself fails it steps down
// through the series below it until a trial passes; refinement is the same.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/journal.h"
#include "sweep/grid.h"
#include "sweep/peak_fit.h"

namespace headroom {

struct SearchOptions {
  uint64_t limit_bytes = 0;   // the peak pool use a trial may reach
  uint64_t margin_bytes = 0;  // a prediction plus this must stay at or below the limit
  bool bisect = true;
  // The noise of a peak reading, as the sweep measured it (the wobble of idle MemAvailable
  // while it settles between trials, at least 16 MiB): two peaks of one knob that disagree
  // with its order by more than this are re-measured, not fitted.
  uint64_t noise_bytes = 0;
  // The first knob's first trial (sweep/start.h StartingSeries): none, its doubling from LO.
  std::optional<int64_t> start = std::nullopt;
};

struct SearchStep {
  enum Kind { kLaunch, kSkip, kDone } kind = kDone;
  Config config;
  std::optional<double> predicted_peak_bytes;  // above the baseline, when a model exists
  std::string reason;           // for kSkip: why; for a kLaunch that re-measures a config: why
  uint64_t baseline_bytes = 0;  // the pool use the decision was made at
};

// What the search knows about a trial it asked for.
struct TrialReport {
  TrialOutcome outcome = TrialOutcome::kOk;
  std::optional<uint64_t> peak_bytes;  // the trial's peak pool use above its baseline
  std::string summary;                 // one phrase: "killed by the guard", "peak 46.8 GB"
};

// A knob stopped by a failure that is not about memory (an `error` trial), with values
// between its last good value and that failure never tried: the answer may be short of the
// truth, and the sweep says so (docs/sweep.md "Untried values").
struct UntriedGap {
  std::string knob;
  int64_t good = 0;           // the last value that ran ok (the knob's answer)
  int64_t first_untried = 0;  // the values first_untried..last_untried were never run
  int64_t last_untried = 0;
  int64_t failed = 0;   // the value that failed
  std::string failure;  // its summary: "exit status 1: ValueError: ..."
};

class SweepSearch {
 public:
  SweepSearch(Grid grid, SearchOptions options);

  // The next step, given the pool use (MemTotal - MemAvailable) the next trial would start
  // from. A kSkip is final: the search has already counted it as a failure.
  SearchStep Next(uint64_t baseline_use_bytes);
  // The result of the last kLaunch (or of a trial replayed from the journal: any config
  // may be reported, and a later Next() uses it instead of asking again).
  void Report(const Config& config, const TrialReport& report);

  // The noise the sweep measured (SearchOptions::noise_bytes), once it has.
  void set_noise_bytes(uint64_t bytes) { opt_.noise_bytes = bytes; }

  // The answer: the last config that ran ok (with its peak), if any.
  const std::optional<Config>& best() const { return best_; }
  std::optional<uint64_t> best_peak_bytes() const { return best_peak_; }
  // Why each knob stopped growing: "batch=16: killed-by-guard", "batch=8: predicted ...".
  const std::vector<std::string>& stop_reasons() const { return stop_reasons_; }
  // The knobs an error stopped short of values never tried (empty when none).
  const std::vector<UntriedGap>& untried() const { return untried_; }
  const Grid& grid() const { return grid_; }

 private:
  struct Known {
    Config config;
    TrialReport report;
  };
  const Known* Find(const Config& c) const;
  std::optional<double> Predict(int64_t x) const;
  // The fit of this knob's own points: none while they disagree with its order (a
  // re-measure is queued) or after a re-measure could not settle it.
  std::optional<PeakModel> OwnModel() const;
  // A point of this knob whose peak disagrees with x's beyond the noise, if any.
  std::optional<PeakPoint> Disagrees(int64_t x, double bytes) const;
  void AddPoint(int64_t x, double bytes);
  // After a value at or below the last good one failed when re-measured: the largest value
  // still known ok.
  void RecomputeGood();
  // Applies a result for the current knob at value x (moving from growth to refinement
  // at the first failure).
  void Apply(int64_t x, const TrialReport& report);
  void FinishKnob(uint64_t baseline);
  bool Fits(std::optional<double> predicted, uint64_t baseline) const;
  bool HasModel() const;
  // Queues a skip row for value x of the current knob, unless it ran or is queued.
  void QueueSkip(int64_t x, uint64_t baseline);
  // The values the current knob grows through: the start's series up, or its coarse values.
  const std::vector<int64_t>& Coarse() const;
  // After the start failed with nothing good yet: the next value of the series down below the
  // failure, if any.
  std::optional<int64_t> Descend() const;
  // After the start passed and before any fit: the start's fit point, unless it ran.
  std::optional<int64_t> FitPoint() const;

  Grid grid_;
  SearchOptions opt_;
  std::vector<Known> known_;
  std::optional<Config> pending_;  // the last kLaunch, until its result is applied
  Config current_;
  size_t knob_ = 0;
  enum class Phase { kGrow, kRefine, kDone } phase_ = Phase::kGrow;
  size_t coarse_ = 0;
  std::optional<int64_t> good_, bad_;  // bad_: the smallest value that failed when run
  bool bad_is_error_ = false;
  std::optional<int64_t> predicted_over_;  // the coarse value growth stopped at, unlaunched
  std::vector<SearchStep> queued_skips_;
  std::vector<PeakPoint> points_;
  // The model of the previous knob, for the tokens-per-step prior.
  std::optional<PeakModel> prior_model_;
  std::string prior_knob_;
  int64_t prior_value_ = 0;      // the prior knob's value this model is scaled from
  int64_t prior_own_value_ = 0;  // the current knob's value when the prior was fitted
  std::optional<Config> best_;
  std::optional<uint64_t> best_peak_;
  std::vector<std::string> stop_reasons_;
  std::vector<UntriedGap> untried_;
  // Re-measuring (issue 31: batch 5 read less than batch 4 because another process freed
  // memory during its trial): values queued, values measured twice, whether pending_ is a
  // re-measure (its report replaces the first), and whether the knob's peaks disagreed even
  // so (then no fit: every value is judged by its own trial).
  std::vector<int64_t> remeasure_queue_;
  std::vector<int64_t> remeasured_;
  bool remeasuring_ = false;
  bool noisy_ = false;
  std::string remeasure_reason_;
  std::vector<Config> replayed_;  // configs whose results came from the journal
  std::string bad_summary_;       // the summary of the trial at bad_
  // The first knob's series from SearchOptions::start (empty without one).
  std::vector<int64_t> start_up_, start_down_;
  std::optional<int64_t> start_fit_;
  // Whether the pending launch was chosen with a prediction, and whether one such launch of
  // this knob failed: then the model is not trusted to pick values, and refinement bisects
  // (a line that put 118 under the limit would otherwise walk down 117, 116, ... one failed
  // trial each).
  bool pending_predicted_ = false;
  bool model_missed_ = false;
};

}  // namespace headroom
