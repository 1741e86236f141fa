// DurableLines: a text file written one whole line per write(2) and fsync'd on a period, so
// that after a crash or a sudden power-off the file holds every line up to the last sync
// (and usually more: the kernel writes dirty pages back on its own within ~30 s), with at
// most the last line torn. Readers skip a last line without its '\n'.
//
// Why one write(2) per line: a line handed to the kernel whole survives a crash of this
// process (the page cache has it) and is never interleaved with another writer's bytes;
// stdio buffering would keep up to 4 KiB in this process's memory, lost on SIGKILL.
#pragma once

#include <chrono>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "base/result.h"

namespace headroom {

class DurableLines {
 public:
  // Creates or truncates `path` (mode 0644; a regular file only, never through a symbolic
  // link: base/safe_file.h OpenOutput), opened O_APPEND so another writer appending
  // whole lines to the same file (the guard's events) interleaves by line,
  // never inside one. `sync_period`: the longest time a written line waits for an fsync
  // (fdatasync) of its own; zero syncs every line.
  static Result<DurableLines> Create(const std::filesystem::path& path,
                                     std::chrono::milliseconds sync_period);

  DurableLines(DurableLines&& other) noexcept;
  DurableLines& operator=(DurableLines&& other) noexcept;
  DurableLines(const DurableLines&) = delete;
  DurableLines& operator=(const DurableLines&) = delete;
  ~DurableLines();  // syncs and closes

  // Writes `line` (which should end in '\n') with one write(2), retried on EINTR and on a
  // short write; fdatasync when the period has passed since the last sync. An error names
  // the file.
  Result<size_t> Append(std::string_view line);
  // fdatasync now.
  Result<size_t> Sync();

  const std::filesystem::path& path() const { return path_; }
  // The first write or sync that failed (a full disk), kept so that a caller that carried on
  // can still say so at the end and exit non-zero; none while every line got through.
  const std::optional<Error>& first_error() const { return first_error_; }
  uint64_t syncs() const { return syncs_; }

 private:
  DurableLines() = default;
  Error Failed(Error error);  // kept as first_error_ when it is the first

  int fd_ = -1;
  std::filesystem::path path_;
  std::chrono::milliseconds sync_period_{0};
  std::chrono::steady_clock::time_point last_sync_{};
  bool dirty_ = false;
  uint64_t syncs_ = 0;
  std::optional<Error> first_error_;
};

// The first write error of any of `files` (null ones skipped), or none.
std::optional<Error> FirstWriteError(std::initializer_list<const DurableLines*> files);

}  // namespace headroom
