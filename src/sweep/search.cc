// Implementation notes.
//  - Results are kept by config, so a config the search reaches twice (the smallest value
//    of the next knob is the best of the previous one) or one replayed from the journal
//    is never launched again.
//  - Refinement picks the largest value the model says fits: with an exact model that is
//    the answer in one trial; without a model (fewer than two ok points) it bisects,
//    rounding down, so each launch is the safer half. The model is monotone in the knob
//    (c >= 0, and b >= 0 or a vertex below the values), so "the largest value that fits"
//    is a binary search on the knob's lattice, never a walk over a billion values.
//  - A skip is soft until the knob is finished: a value predicted over from two points is
//    re-predicted after each later trial. Skip rows are emitted when the knob is finished,
//    for the values that were predicted over and never launched.
//  - An error trial stops the knob without refinement: its failure says nothing about
//    memory, and bisecting towards it would only repeat it. The values left untried
//    between the answer and it are reported (untried()), so the answer is never taken
//    for the largest that fits.
#include "sweep/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/bytes.h"
#include "sweep/start.h"

namespace headroom {

SweepSearch::SweepSearch(Grid grid, SearchOptions options)
    : grid_(std::move(grid)), opt_(options), current_(grid_.Smallest()) {
  if (grid_.knobs.empty()) phase_ = Phase::kDone;
  if (!grid_.knobs.empty() && opt_.start) {
    StartSeries series = StartingSeries(grid_.knobs[0], *opt_.start);
    start_up_ = std::move(series.up);
    start_down_ = std::move(series.down);
    start_fit_ = series.fit;
  }
}

const std::vector<int64_t>& SweepSearch::Coarse() const {
  return knob_ == 0 && !start_up_.empty() ? start_up_ : grid_.knobs[knob_].values;
}

std::optional<int64_t> SweepSearch::Descend() const {
  if (knob_ != 0 || good_ || !bad_ || bad_is_error_) return std::nullopt;
  for (int64_t v : start_down_) {
    if (v < *bad_) return v;
  }
  return std::nullopt;
}

std::optional<int64_t> SweepSearch::FitPoint() const {
  if (knob_ != 0 || !start_fit_ || !good_ || *good_ <= *start_fit_ || HasModel())
    return std::nullopt;
  Config c = current_;
  c.Set(grid_.knobs[knob_].name, *start_fit_);
  if (Find(c)) return std::nullopt;
  return start_fit_;
}

const SweepSearch::Known* SweepSearch::Find(const Config& c) const {
  for (const auto& k : known_) {
    if (k.config == c) return &k;
  }
  return nullptr;
}

std::optional<PeakModel> SweepSearch::OwnModel() const {
  if (noisy_ || !remeasure_queue_.empty()) return std::nullopt;
  return FitPeak(points_);
}

std::optional<PeakPoint> SweepSearch::Disagrees(int64_t x, double bytes) const {
  const double noise = static_cast<double>(opt_.noise_bytes);
  const double vx = static_cast<double>(x);
  std::optional<PeakPoint> nearest;  // the disagreeing point closest to x
  for (const auto& p : points_) {
    const bool out = (p.x < vx && bytes + noise < p.bytes) || (p.x > vx && bytes > p.bytes + noise);
    if (out && (!nearest || std::abs(p.x - vx) < std::abs(nearest->x - vx))) nearest = p;
  }
  return nearest;
}

void SweepSearch::AddPoint(int64_t x, double bytes) {
  for (auto& p : points_) {
    if (p.x == static_cast<double>(x)) {
      p.bytes = bytes;  // a re-measure replaces the first reading
      return;
    }
  }
  points_.push_back({static_cast<double>(x), bytes});
}

void SweepSearch::RecomputeGood() {
  const std::string& name = grid_.knobs[knob_].name;
  good_.reset();
  best_.reset();
  best_peak_.reset();
  for (const auto& k : known_) {
    Config same = k.config;
    same.Set(name, current_.Get(name));
    if (!(same == current_) || k.report.outcome != TrialOutcome::kOk) continue;
    const int64_t v = k.config.Get(name);
    if (bad_ && v >= *bad_) continue;
    if (!good_ || v > *good_) {
      good_ = v;
      best_ = k.config;
      best_peak_ = k.report.peak_bytes;
    }
  }
}

std::optional<double> SweepSearch::Predict(int64_t x) const {
  if (auto own = OwnModel()) return own->Predict(static_cast<double>(x));
  if (prior_model_ && prior_own_value_ > 0) {
    // Tokens per step: batch x seq at x is the prior knob at prior_value * x / own_value.
    const double equivalent = static_cast<double>(prior_value_) * static_cast<double>(x) /
                              static_cast<double>(prior_own_value_);
    return prior_model_->Predict(equivalent);
  }
  return std::nullopt;
}

bool SweepSearch::Fits(std::optional<double> predicted, uint64_t baseline) const {
  if (!predicted) return true;
  return static_cast<double>(baseline) + *predicted + static_cast<double>(opt_.margin_bytes) <=
         static_cast<double>(opt_.limit_bytes);
}

void SweepSearch::Report(const Config& config, const TrialReport& report) {
  if (remeasuring_ && pending_ && config == *pending_) {
    for (auto& k : known_) {
      if (k.config == config) k.report = report;  // the second reading replaces the first
    }
    return;
  }
  // Not the trial just launched: a result replayed from the journal. A config with two rows
  // was measured twice; the later row is its reading. Replayed trials are never launched
  // again, not even to re-measure them.
  if (!pending_ || !(config == *pending_)) replayed_.push_back(config);
  for (auto& k : known_) {
    if (k.config == config) {
      k.report = report;
      return;
    }
  }
  known_.push_back({config, report});
}

void SweepSearch::Apply(int64_t x, const TrialReport& report) {
  const Knob& knob = grid_.knobs[knob_];
  Config c = current_;
  c.Set(knob.name, x);
  const bool again = remeasuring_;
  remeasuring_ = false;
  if (report.outcome == TrialOutcome::kOk) {
    if (report.peak_bytes) {
      const double bytes = static_cast<double>(*report.peak_bytes);
      AddPoint(x, bytes);
      // Peaks out of the knob's order: re-measure both ends of the pair once, and fit
      // neither until they agree; if they still disagree, fit nothing on this knob.
      if (const auto other = Disagrees(x, bytes); other && !noisy_) {
        const int64_t ox = static_cast<int64_t>(other->x);
        for (int64_t v : {x, ox}) {
          Config cv = current_;
          cv.Set(knob.name, v);
          const bool done =
              std::find(remeasured_.begin(), remeasured_.end(), v) != remeasured_.end() ||
              std::find(replayed_.begin(), replayed_.end(), cv) != replayed_.end();
          const bool queued = std::find(remeasure_queue_.begin(), remeasure_queue_.end(), v) !=
                              remeasure_queue_.end();
          if (!done && !queued) remeasure_queue_.push_back(v);
        }
        if (remeasure_queue_.empty()) noisy_ = true;
        remeasure_reason_ = fmt::format(
            "re-measure: {}={} read {}, {} {}={}'s {} beyond the noise {}", knob.name, x,
            FormatGB(*report.peak_bytes),
            other->x < static_cast<double>(x) ? "less than" : "more than", knob.name, ox,
            FormatGB(static_cast<uint64_t>(other->bytes)), FormatGB(opt_.noise_bytes));
      }
    }
    const bool below = good_ && x < *good_;  // the start's fit point
    if (!good_ || x >= *good_) {
      good_ = x;
      best_ = c;
      best_peak_ = report.peak_bytes;
    }
    if (phase_ == Phase::kGrow && !again && !below) ++coarse_;
    return;
  }
  if (good_ && (again ? x <= *good_ : x < *good_)) {
    // A value that ran ok failed when measured again: the answer lies below it.
    bad_ = x;
    bad_is_error_ = report.outcome == TrialOutcome::kError;
    bad_summary_ = report.summary;
    RecomputeGood();
    if (phase_ == Phase::kGrow) phase_ = Phase::kRefine;
    return;
  }
  if (!bad_ || x < *bad_) {
    bad_ = x;
    bad_is_error_ = report.outcome == TrialOutcome::kError;
    bad_summary_ =
        report.summary.empty() ? std::string(TrialOutcomeName(report.outcome)) : report.summary;
    if (stop_reasons_.size() <= knob_) stop_reasons_.resize(knob_ + 1);
    stop_reasons_[knob_] = fmt::format(
        "{}: {}", c.ToText(),
        report.summary.empty() ? std::string(TrialOutcomeName(report.outcome)) : report.summary);
  }
  if (phase_ == Phase::kGrow) phase_ = Phase::kRefine;
}

bool SweepSearch::HasModel() const { return OwnModel().has_value() || prior_model_.has_value(); }

void SweepSearch::QueueSkip(int64_t x, uint64_t baseline) {
  Config c = current_;
  c.Set(grid_.knobs[knob_].name, x);
  if (Find(c)) return;
  for (const auto& q : queued_skips_) {
    if (q.config == c) return;
  }
  const auto predicted = Predict(x);
  if (!predicted || Fits(predicted, baseline)) return;  // not ruled out by the model
  TrialReport skip;
  skip.outcome = TrialOutcome::kSkipped;
  skip.summary =
      fmt::format("predicted-over-limit: {} + predicted {} + margin {} > limit {}",
                  FormatGB(baseline), FormatGB(static_cast<uint64_t>(std::max(0.0, *predicted))),
                  FormatGB(opt_.margin_bytes), FormatGB(opt_.limit_bytes));
  known_.push_back({c, skip});
  queued_skips_.push_back({SearchStep::kSkip, c, predicted, skip.summary, baseline});
}

void SweepSearch::FinishKnob(uint64_t baseline) {
  const Knob& knob = grid_.knobs[knob_];
  if (!good_) {
    // Not even the smallest value ran ok: no config of this grid fits.
    phase_ = Phase::kDone;
    return;
  }
  // What stopped the knob, shown as rows: the value just above the answer and the coarse
  // value growth stopped at, when the model (not a run) ruled them out.
  if (stop_reasons_.size() <= knob_) stop_reasons_.resize(knob_ + 1);
  std::optional<int64_t> boundary = opt_.bisect ? knob.Above(*good_) : predicted_over_;
  if (boundary && (!bad_ || *boundary < *bad_)) {
    QueueSkip(*boundary, baseline);
    if (!queued_skips_.empty() && queued_skips_.back().config.Get(knob.name) == *boundary) {
      stop_reasons_[knob_] =
          fmt::format("{}: {}", queued_skips_.back().config.ToText(), queued_skips_.back().reason);
    }
  }
  if (predicted_over_ && predicted_over_ != boundary && (!bad_ || *predicted_over_ < *bad_)) {
    QueueSkip(*predicted_over_, baseline);
  }
  if (stop_reasons_[knob_].empty())
    stop_reasons_[knob_] = fmt::format("{}: the top of its values", knob.name);
  if (bad_ && bad_is_error_) {
    // Values between the answer and a non-memory failure were never run: say so.
    const auto first = knob.Above(*good_);
    const auto last = knob.LargestWhere(*good_, *bad_, [](int64_t) { return true; });
    if (first && last && *first < *bad_)
      untried_.push_back({knob.name, *good_, *first, *last, *bad_, bad_summary_});
  }
  current_.Set(knob.name, *good_);
  // Batch and seq scale memory through tokens per step: one's model is the other's prior.
  prior_model_.reset();
  if (auto m = OwnModel(); m && (knob.name == "batch" || knob.name == "seq")) {
    prior_model_ = m;
    prior_knob_ = knob.name;
    prior_value_ = *good_;
  }
  ++knob_;
  coarse_ = 0;
  good_.reset();
  bad_.reset();
  bad_is_error_ = false;
  predicted_over_.reset();
  points_.clear();
  remeasure_queue_.clear();
  remeasured_.clear();
  noisy_ = false;
  model_missed_ = false;
  if (knob_ >= grid_.knobs.size()) {
    phase_ = Phase::kDone;
    return;
  }
  phase_ = Phase::kGrow;
  const std::string& next = grid_.knobs[knob_].name;
  const bool pairs =
      (prior_knob_ == "batch" && next == "seq") || (prior_knob_ == "seq" && next == "batch");
  if (!pairs) prior_model_.reset();
  prior_own_value_ = current_.Get(next);
}

SearchStep SweepSearch::Next(uint64_t baseline) {
  // The trial launched last: its result first, whatever the model would pick now.
  if (pending_ && phase_ != Phase::kDone) {
    if (const Known* k = Find(*pending_)) {
      if (pending_predicted_ && k->report.outcome != TrialOutcome::kOk) model_missed_ = true;
      Apply(pending_->Get(grid_.knobs[knob_].name), k->report);
      pending_.reset();
    }
  }
  for (int guard = 0; guard < 100000; ++guard) {
    if (!queued_skips_.empty()) {
      SearchStep step = queued_skips_.front();
      queued_skips_.erase(queued_skips_.begin());
      return step;
    }
    if (phase_ == Phase::kDone) return {};
    const Knob& knob = grid_.knobs[knob_];
    if (!remeasure_queue_.empty()) {
      const int64_t again = remeasure_queue_.front();
      remeasure_queue_.erase(remeasure_queue_.begin());
      remeasured_.push_back(again);
      Config c = current_;
      c.Set(knob.name, again);
      pending_ = c;
      remeasuring_ = true;
      pending_predicted_ = false;
      return {SearchStep::kLaunch, c, std::nullopt, remeasure_reason_, baseline};
    }
    std::optional<int64_t> x;
    if (phase_ == Phase::kGrow && FitPoint()) {
      x = FitPoint();  // the start passed: a second point, far below it, for the fit
    } else if (phase_ == Phase::kGrow) {
      if (coarse_ >= Coarse().size()) {
        FinishKnob(baseline);
        continue;
      }
      x = Coarse()[coarse_];
      if (good_ && *x <= *good_) {
        ++coarse_;
        continue;
      }
    } else if (const auto down = Descend()) {
      x = down;  // the start failed: down its series until a trial passes
    } else {
      // Refine between the last good value and the first failure (or the top of the
      // domain when growth stopped on a prediction).
      if (!good_ || bad_is_error_ || (!opt_.bisect && !bad_)) {
        FinishKnob(baseline);
        continue;
      }
      const int64_t ceiling = bad_ ? *bad_ : (opt_.bisect ? knob.hi + 1 : *predicted_over_);
      if (!opt_.bisect) {
        FinishKnob(baseline);
        continue;
      }
      if (HasModel() && !model_missed_) {
        // Never launch far beyond what was measured (issue 31: a fit on batch 2-5 put batch
        // 24 at 1.70 GB, really 2.6 GB): at most twice the last good value.
        int64_t reach = ceiling;
        if (*good_ > 0 && *good_ < std::numeric_limits<int64_t>::max() / 2)
          reach = std::min(ceiling, 2 * *good_ + 1);
        x = knob.LargestWhere(*good_, reach, [&](int64_t v) { return Fits(Predict(v), baseline); });
      } else if (bad_) {
        x = knob.Middle(*good_, *bad_);
      }
      if (!x) {
        FinishKnob(baseline);
        continue;
      }
    }
    Config c = current_;
    c.Set(knob.name, *x);
    if (const Known* k = Find(c); k && k->report.outcome != TrialOutcome::kSkipped) {
      Apply(*x, k->report);
      continue;
    }
    if (!Fits(Predict(*x), baseline)) {
      // Only growth gets here (refinement picks fitting values): stop growing, refine.
      predicted_over_ = *x;
      phase_ = Phase::kRefine;
      continue;
    }
    pending_ = c;
    pending_predicted_ = Predict(*x).has_value();
    return {SearchStep::kLaunch, c, Predict(*x), "", baseline};
  }
  phase_ = Phase::kDone;
  return {};
}

}  // namespace headroom
