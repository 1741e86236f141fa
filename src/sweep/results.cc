#include "sweep/results.h"

#include <memory>
#include <sstream>

#include "base/safe_file.h"

namespace headroom {
namespace {

// Columns the table always has, for the knobs users sweep most.
constexpr const char* kFixedColumns[][2] = {
    {"batch", "batch"}, {"grad_accum", "grad_accum"}, {"seq", "seq_len"}};

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> SweepColumns(const Grid& grid) {
  std::vector<std::pair<std::string, std::string>> cols;
  for (const auto& c : kFixedColumns) cols.emplace_back(c[0], c[1]);
  for (const auto& k : grid.knobs) {
    if (k.name != "batch" && k.name != "grad_accum" && k.name != "seq")
      cols.emplace_back(k.name, k.name);
  }
  return cols;
}

std::string SweepResultCsv(const SweepOptions& o, const SweepResult& r) {
  std::ostringstream f;
  const auto cols = SweepColumns(o.grid);
  f << "# headroom sweep results, schema_version 1, run " << r.run_id << ", limit_bytes "
    << o.limit_bytes << "\n";
  for (const auto& [name, title] : cols) f << title << ",";
  f << "peak_mem_bytes,headroom_bytes,status,notes\n";
  for (const auto& row : r.rows) {
    for (const auto& [name, title] : cols) {
      const int64_t v = row.config.Get(name);
      f << (v < 0 ? "" : std::to_string(v)) << ",";
    }
    f << (row.peak_bytes ? std::to_string(*row.peak_bytes) : "") << ","
      << (row.headroom_bytes ? std::to_string(*row.headroom_bytes) : "") << ","
      << TrialOutcomeName(row.outcome) << "," << CsvField(row.notes) << "\n";
  }
  return f.str();
}

namespace {

nlohmann::json UntriedJson(const std::vector<UntriedGap>& gaps) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : gaps) {
    out.push_back({{"knob", g.knob},
                   {"passed", g.good},
                   {"first_untried", g.first_untried},
                   {"last_untried", g.last_untried},
                   {"failed", g.failed},
                   {"failure", g.failure},
                   {"text", EnglishText(UntriedText(g))}});
  }
  return out;
}

}  // namespace

nlohmann::json SweepResultJson(const SweepOptions& o, const SweepResult& r) {
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& row : r.rows) {
    trials.push_back({{"config", nlohmann::json::parse(row.config.ToJson())},
                      {"status", TrialOutcomeName(row.outcome)},
                      {"peak_bytes", opt(row.peak_bytes)},
                      {"peak_measure", row.peak_measure.empty() ? nlohmann::json(nullptr)
                                                                : nlohmann::json(row.peak_measure)},
                      {"headroom_bytes", opt(row.headroom_bytes)},
                      {"notes", row.notes},
                      {"from_journal", row.from_journal},
                      {"start_pool_bytes", opt(row.start_pool_bytes)},
                      {"predicted_peak_bytes", opt(row.predicted_peak_bytes)},
                      {"peak_rss_bytes", opt(row.peak_rss_bytes)},
                      {"cgroup_peak_bytes", opt(row.cgroup_peak_bytes)}});
  }
  nlohmann::json out = {
      {"schema_version", 1},
      {"run_id", r.run_id},
      {"resumed", r.resumed},
      {"reused_trials", r.reused},
      {"launched_trials", r.launched},
      {"launched_trials_total", r.launched_total},
      {"limit_bytes", o.limit_bytes},
      {"limit_of", o.device_limit ? "device" : "pool"},  // docs/sweep.md "On a discrete GPU"
      {"margin_bytes", o.margin_bytes},
      {"kill_below_bytes", o.min_available_bytes},
      {"best", r.best ? nlohmann::json::parse(r.best->ToJson()) : nlohmann::json(nullptr)},
      {"best_peak_bytes", opt(r.best_peak_bytes)},
      {"best_headroom_bytes", opt(r.best_headroom_bytes)},
      {"stop_reasons", r.stop_reasons},
      {"stopped_early",
       r.stopped_early.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.stopped_early)},
      {"untried", UntriedJson(r.untried)},
      {"noise_bytes", r.noise_bytes},
      {"warnings", r.warnings},
      {"trial_logs", r.trial_log_dir.string()},
      {"trials", trials}};
  // --start: the first trial's value, and with --start plan the gap (sweep/start.h).
  if (o.start)
    AddStartJson(*o.start, r.best ? std::optional(r.best->Get(o.start->knob)) : std::nullopt, &out);
  return out;
}

Result<bool> WriteSweepResultCsv(const std::filesystem::path& path, const SweepOptions& options,
                                 const SweepResult& result) {
  // Replaces only a regular file or nothing (base/safe_file), as the check before the first
  // trial promised.
  if (auto e = ReplaceFile(path.string(), SweepResultCsv(options, result))) {
    return Error{Message("--csv: {}", {std::make_shared<const Message>(e->what)}), e->errno_value};
  }
  return true;
}

}  // namespace headroom
