// headroom-guardian: the lean worker that `headroom guardian` execs once its flags and
// config.toml are read (docs/guardian.md "Its own memory"). Its words are the resolved
// settings (guardian/worker_args.h); it maps only the loop's code, so that the process that
// guards the machine for months stays small (2.7 MiB idle, docs/guardian.md). Exit status as
// `headroom guardian`'s: 0 stopped by a signal, 1 could not start, 2 usage error.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/guardian_run.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "guardian/levels_reload.h"
#include "guardian/worker_args.h"

int main(int argc, char** argv) {
  using namespace headroom;
  const std::vector<std::string> words(argv + std::min(argc, 1), argv + argc);
  auto settings = DecodeWorkerArgs(words);
  if (!settings) {
    PrintErrorLine(stderr, "headroom-guardian: " + TranslatedText(settings.error().what) +
                               " (started by `headroom guardian`, see docs/guardian.md)");
    return 2;
  }
  if (!settings->locale_dir.empty()) InitMessages(settings->locale_dir);
  GuardianRunIo io;
  if (!settings->reload_program.empty()) {
    io.reload = [&](ReloadedLevels& levels, std::string& why) {
      auto again = ReadReloadedLevels(settings->reload_program, settings->reload_args,
                                      std::chrono::seconds(10));
      if (!again) {
        why = TranslatedText(again.error().what);
        return false;
      }
      levels = *again;
      return true;
    };
  }
  return RunGuardian(SysRoot("/"), *settings, io);
}
