// Shared by `explain` and `report`: reading an input file whole, the files a `headroom watch`
// run recorded in the journal, and the --platform flag.
#include "cli/run_files.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/safe_file.h"
#include "cli/config_defaults.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "store/journal.h"

namespace headroom {

// The whole file, or a UsageError naming the flag and the file: a regular file only, so a FIFO
// or a device is an error, never a hang (base/safe_file.h).
std::string ReadWhole(const std::string& flag, const std::string& path) {
  auto text = ReadInputFile(path, kMaxFileBytes);
  if (!text) throw UsageError{fmt::format("{}: {}", flag, TranslatedText(text.error().what))};
  return std::move(*text);
}

SampleSeries ReadSamplesFlag(const std::string& path, const SampleRowFilter& keep) {
  // ReadSamplesCsv opens the file once and checks its type on that descriptor: a FIFO or a
  // device is an error, never a hang.
  auto read = ReadSamplesCsv(path, kMaxFileBytes, keep);
  if (!read) throw UsageError{"--samples: " + TranslatedText(read.error().what)};
  return std::move(*read);
}

std::optional<StepPattern> StepPatternFlag(const std::string& regex) {
  if (regex.empty()) return std::nullopt;
  auto compiled = StepPattern::Compile(regex);
  if (!compiled) throw UsageError{TranslatedText(compiled.error().what)};
  return std::move(*compiled);
}

// The files of a `headroom watch` run, from its "files" event in the journal; a path given
// by flag wins. Errors name --run: no such run, not a watch run, no files recorded.
void FilesFromRun(const CliEnv& env, const WatchRunQuery& query, WatchRunFiles files) {
  const int64_t id = query.id;
  const std::string_view reader = query.reader;
  std::string& log = files.log;
  auto path = JournalPath(env, query.journal_flag);
  if (!path) throw UsageError{"--run: " + TranslatedText(path.error().what)};
  std::error_code ec;  // an unreadable $HOME is an error line, not an exception
  if (!std::filesystem::exists(*path, ec)) {
    if (ec && ec != std::errc::no_such_file_or_directory)
      throw UsageError{
          TrFormat("--run {}: cannot look at {}: {}", id, path->string(), ec.message())};
    throw UsageError{TrFormat("--run {}: no journal at {}", id, path->string())};
  }
  auto journal = Journal::Open(*path, JournalOptions{.read_only = true});
  if (!journal) throw UsageError{"--run: " + TranslatedText(journal.error().what)};
  auto run = journal->FindRun(id);
  if (!run) throw UsageError{"--run: " + TranslatedText(run.error().what)};
  if (!*run) throw UsageError{TrFormat("--run {}: no such run in {}", id, path->string())};
  if ((*run)->kind != "watch") {
    // TRANSLATORS: {1} is the run's kind (guard, sweep), {2} the command (explain, report).
    throw UsageError{TrFormat("--run {0}: a {1} run, not a watch run ({2} reads watch's files)", id,
                              (*run)->kind, reader)};
  }
  auto recorded = journal->Events(id);
  if (!recorded) throw UsageError{"--run: " + TranslatedText(recorded.error().what)};
  for (const auto& e : *recorded) {
    if (e.type != "files") continue;
    const auto j = nlohmann::json::parse(e.data_json, nullptr, false);
    auto take = [&](const char* key, std::string& into) {
      if (into.empty() && j.is_object() && j.contains(key) && j[key].is_string())
        into = j[key].get<std::string>();
    };
    take("log", log);
    take("samples", files.samples);
    take("events", files.events);
    if (query.need_log && log.empty())
      throw UsageError{TrFormat("--run {}: the watch ran without --log; give --log", id)};
    return;
  }
  throw UsageError{TrFormat("--run {}: no files recorded for this run", id)};
}

std::optional<PlatformKind> PlatformFlag(const std::string& text) {
  if (text.empty()) return std::nullopt;
  if (text == "gb10") return PlatformKind::kGb10;
  if (text == "discrete") return PlatformKind::kDiscrete;
  if (text == "none") return PlatformKind::kNoGpu;
  throw UsageError{TrFormat("--platform: '{}' is not one of gb10, discrete, none", text)};
}

}  // namespace headroom
