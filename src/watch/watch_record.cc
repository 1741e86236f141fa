// watch's recorded run: the "files" event, the guard's record, the rows at the end.
#include "watch/watch_record.h"

#include <nlohmann/json.hpp>

#include "guard/guard_record.h"

namespace headroom {

WatchRecord::WatchRecord(const Result<std::filesystem::path>& journal,
                         const std::vector<std::string>& command, const Files& files, Note note)
    : note_(std::move(note)) {
  const std::vector<std::string> recorded =
      command.empty() ? std::vector<std::string>{"headroom", "watch"} : command;
  auto begun = journal ? RecordedRun::Open(*journal, RunKind::kWatch, recorded)
                       : Result<RecordedRun>(journal.error());
  if (!begun) {
    note_(begun.error());
    return;
  }
  run_.emplace(std::move(*begun));
  nlohmann::json data = nlohmann::json::object();
  for (const auto& [name, file] : files) {
    std::error_code ec;
    data[name] = file.empty() ? nlohmann::json(nullptr)
                              : nlohmann::json(std::filesystem::absolute(file, ec).string());
  }
  files_json_ = data.dump();
  if (auto added = run_->AddEvent("files", files_json_); !added) note_(added.error());
}

std::optional<int64_t> WatchRecord::id() const {
  if (!run_) return std::nullopt;
  return run_->id();
}

void WatchRecord::Guarding(const SysRoot& real_root, uint64_t kill_below_bytes,
                           uint64_t warn_below_bytes) {
  if (!run_) return;
  if (auto added =
          RecordGuardStart(*run_, ThisGuardStart(real_root, kill_below_bytes, warn_below_bytes));
      !added) {
    note_(added.error());
  }
}

void WatchRecord::Finish(std::string_view status, int exit_status, uint64_t rows) {
  if (!run_) return;
  nlohmann::json summary = nlohmann::json::parse(files_json_);
  summary["rows"] = rows;
  if (auto done = run_->Finish(status, exit_status, summary.dump()); !done) note_(done.error());
}

}  // namespace headroom
