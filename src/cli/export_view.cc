#include "cli/export_view.h"

#include <cstdio>

#include "cli/i18n.h"
#include "cli/message_text.h"

namespace headroom {

void PrintExposedWarning(const CliEnv& env, const std::string& host) {
  PrintError(env, "export: " +
                      TrFormat("warning: listening on {}, reachable from other machines: /metrics "
                               "is read-only but shows process names, memory and GPU figures",
                               host));
}

void PrintServing(const CliEnv& env, const std::string& url, const std::string& interval_text,
                  const std::optional<Message>& nvml_error) {
  std::fprintf(env.err, "headroom export: %s\n",
               (!nvml_error ? TrFormat("serving {}, sampling every {}", url, interval_text)
                            // TRANSLATORS: {2} says why NVML could not be used.
                            : TrFormat("serving {0}, sampling every {1} (no GPU metrics: {2})", url,
                                       interval_text, TranslatedText(*nvml_error)))
                   .c_str());
  std::fflush(env.err);
}

void PrintLivePage(const CliEnv& env, const std::string& url) {
  std::fprintf(env.err, "headroom export: %s\n", TrFormat("live page at {}", url).c_str());
  std::fflush(env.err);
}

void PrintStopped(const CliEnv& env) {
  std::fprintf(env.err, "headroom export: %s\n", Tr("stopped"));
}

}  // namespace headroom
