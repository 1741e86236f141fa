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

#include "base/bytes.h"

namespace headroom {

SweepSearch::SweepSearch(Grid grid, SearchOptions options)
    : grid_(std::move(grid)), opt_(options), current_(grid_.Smallest()) {
  if (grid_.knobs.empty()) phase_ = Phase::kDone;
}

const SweepSearch::Known* SweepSearch::Find(const Config& c) const {
  for (const auto& k : known_) {
    if (k.config == c) return &k;
  }
  return nullptr;
}

std::optional<double> SweepSearch::Predict(int64_t x) const {
  if (auto own = FitPeak(points_)) return own->Predict(static_cast<double>(x));
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
  if (!Find(config)) known_.push_back({config, report});
}

void SweepSearch::Apply(int64_t x, const TrialReport& report) {
  const Knob& knob = grid_.knobs[knob_];
  Config c = current_;
  c.Set(knob.name, x);
  if (report.outcome == TrialOutcome::kOk) {
    if (report.peak_bytes)
      points_.push_back({static_cast<double>(x), static_cast<double>(*report.peak_bytes)});
    if (!good_ || x >= *good_) {
      good_ = x;
      best_ = c;
      best_peak_ = report.peak_bytes;
    }
    if (phase_ == Phase::kGrow) ++coarse_;
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

bool SweepSearch::HasModel() const {
  return FitPeak(points_).has_value() || prior_model_.has_value();
}

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
  if (auto m = FitPeak(points_); m && (knob.name == "batch" || knob.name == "seq")) {
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
    std::optional<int64_t> x;
    if (phase_ == Phase::kGrow) {
      if (coarse_ >= knob.values.size()) {
        FinishKnob(baseline);
        continue;
      }
      x = knob.values[coarse_];
      if (good_ && *x <= *good_) {
        ++coarse_;
        continue;
      }
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
      if (HasModel()) {
        x = knob.LargestWhere(*good_, ceiling,
                              [&](int64_t v) { return Fits(Predict(v), baseline); });
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
    return {SearchStep::kLaunch, c, Predict(*x), "", baseline};
  }
  phase_ = Phase::kDone;
  return {};
}

}  // namespace headroom
