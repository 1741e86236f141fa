// torchrun's error files (docs/guard-group.md "torchrun"): torchrun's agent sets
// TORCHELASTIC_ERROR_FILE in each worker's environment (a file under the agent's log
// directory, torch/distributed/elastic/multiprocessing/api.py), and when a worker fails it
// reads that file into the failure it reports (errors/__init__.py ProcessFailure), the first
// by timestamp being the "Root Cause" of its failure summary. The guard that ends a node's
// job for the group writes each worker's file first, in the JSON shape ErrorHandler writes
// (errors/error_handler.py record_exception), so the summary names the node that ended the
// group and why.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "sys/sysroot.h"

namespace headroom {

// TORCHELASTIC_ERROR_FILE's value in `environ` (the NUL-separated text of
// /proc/PID/environ), or nullopt when it is not there or empty.
std::optional<std::string> TorchelasticErrorFileIn(std::string_view environ);

// The same, read from proc/PID/environ below `root` (at most 1 MiB of it).
std::optional<std::string> TorchelasticErrorFileOf(const SysRoot& root, pid_t pid);

// {"message": {"message": MESSAGE, "extraInfo": {"py_callstack": MESSAGE, "timestamp":
// "UNIX_S"}}}: the failure summary shows py_callstack as the traceback, and the timestamp (a
// string of whole seconds) orders the failures.
std::string TorchelasticErrorJson(std::string_view message, uint64_t unix_s);

// Writes `json` to `path` unless a file is already there (a worker's own error comes first):
// created exclusively, never through a symbolic link, mode 0644. Ok(false) when one was
// there.
Result<bool> WriteTorchelasticErrorFile(const std::string& path, std::string_view json);

}  // namespace headroom
