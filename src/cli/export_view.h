// `headroom export` on stderr, in the user's language: the warning for a listener other
// machines can reach, the serving line and the last line. /metrics itself is the library's
// (export/exporter.h), English by construction.
#pragma once

#include <optional>
#include <string>

#include "base/message.h"
#include "cli/cli.h"

namespace headroom {

// "headroom: export: warning: listening on HOST, reachable from other machines: ...".
void PrintExposedWarning(const CliEnv& env, const std::string& host);

// "headroom export: serving URL, sampling every 1s[ (no GPU metrics: why)]".
void PrintServing(const CliEnv& env, const std::string& url, const std::string& interval_text,
                  const std::optional<Message>& nvml_error);

// "headroom export: live page at URL" (the page at /, export/live.h).
void PrintLivePage(const CliEnv& env, const std::string& url);

// "headroom export: stopped".
void PrintStopped(const CliEnv& env);

}  // namespace headroom
