#include "cli/guardian_flags.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "base/bytes.h"
#include "base/duration.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "config/config_file.h"

namespace headroom {

void AddGuardianFlags(CLI::App& app, GuardianFlags& f) {
  app.add_option("--min-available", f.min_available,
                 Tr("SIZE or PCT of MemTotal: end a job when MemAvailable falls below it (default: "
                    "[guardian] kill_level, else the guard's level, the larger of 4GiB and 8%)"));
  app.add_option("--warn-available", f.warn_available,
                 Tr("SIZE or PCT: a warning below it (default: twice the kill level)"));
  app.add_option("--grace", f.grace, Tr("SIGTERM first, SIGKILL when this runs out (default 3s)"));
  app.add_option("--events", f.events_path, Tr("append each event as a JSON line to FILE"));
  AddJournalFlag(app, f.journal_flag);
  app.add_flag("--no-journal", f.no_journal, Tr("record nothing in the journal"));
  AddNvmlLibFlag(app, f.nvml_lib);
  app.add_flag("--no-nvml", f.no_nvml, Tr("do not load NVML: no process's GPU memory is counted"));
  app.add_flag("--dry-run", f.dry_run, Tr("decide and report the victim, signal nothing"));
  app.add_option("--only", f.only,
                 Tr("SCOPE: choose only among a process tree (PID), a cgroup (/PATH) or the "
                    "processes whose name, command line or cgroup matches a glob, and their "
                    "children (repeatable)"));
  app.add_option("--protect", f.protect,
                 Tr("PATTERN: end a matching job only when nothing else holds memory "
                    "(repeatable)"));
  app.add_option("--prefer", f.prefer, Tr("PATTERN: end a matching job first (repeatable)"));
  app.add_flag("--psi-kill", f.psi_kill,
               Tr("sustained full memory pressure (a PSI trigger, 500 ms of full stall per 1 s "
                  "window) is a kill reason too"));
  app.add_option("--on-event", f.on_event,
                 Tr("run CMD (sh -c) for each event, with its fields in HEADROOM_EVENT_* "
                    "variables; ended after 10s"));
  app.add_flag("--print-levels", f.print_levels,
               Tr("print the kill level, the warning level (bytes) and the grace (ms) that these "
                  "flags and config.toml give, as one line \"levels KILL WARN GRACE\", and exit"));
  app.add_flag("--release-driver-pools", f.release_driver_pools,
               Tr("when MemAvailable does not come back after a kill, drop the page cache (root "
                  "only)"));
}

GuardianOptions GuardianOptionsFromFlags(const CliEnv& env, const GuardianFlags& f,
                                         uint64_t total) {
  GuardianOptions o;
  // flag > [guardian] > [guard] > the guard's default (docs/guardian.md "Options").
  const Settings& s = env.config.settings;
  o.min_available_bytes = f.min_available.empty() && s.guardian_min_available.value
                              ? MemLevelBytes(*s.guardian_min_available.value, total)
                              : KillLevelBytes(env, f.min_available, "--min-available", total);
  if (!f.warn_available.empty() || (!s.guardian_warn_available.value &&
                                    !(f.min_available.empty() && s.guardian_min_available.value))) {
    o.warn_available_bytes =
        WarnLevelBytes(env, f.warn_available, "--warn-available", total, o.min_available_bytes);
  } else {
    o.warn_available_bytes = s.guardian_warn_available.value
                                 ? MemLevelBytes(*s.guardian_warn_available.value, total)
                                 : 2 * o.min_available_bytes;
  }
  if (o.warn_available_bytes <= o.min_available_bytes) {
    throw UsageError{TrFormat("[guardian] warn_level ({}) is not above the kill level ({})",
                              FormatBoth(o.warn_available_bytes),
                              FormatBoth(o.min_available_bytes))};
  }
  o.grace = s.guardian_grace.value;
  if (!f.grace.empty()) {
    auto grace = ParseDuration(f.grace, /*allow_zero=*/true);
    if (!grace) throw UsageError{"--grace: " + TranslatedText(grace.error().what)};
    o.grace = std::chrono::duration_cast<std::chrono::milliseconds>(*grace);
  }
  o.dry_run = f.dry_run;
  if (f.release_driver_pools && ::geteuid() != 0) {
    throw UsageError{Tr("--release-driver-pools: only root may drop the page cache")};
  }
  o.release_driver_pools = f.release_driver_pools;
  o.choice.self = ::getpid();
  for (const auto& text : f.only) {
    auto scope = ParseScope(text);
    if (!scope) throw UsageError{"--only: " + TranslatedText(scope.error().what)};
    o.choice.only.push_back(*scope);
  }
  o.choice.protect = f.protect;
  o.choice.prefer = f.prefer;
  return o;
}

bool ReloadGuardianOptions(const CliEnv& env, const GuardianFlags& f, uint64_t total,
                           GuardianOptions& o, std::string& error) {
  CliEnv fresh{env.default_root, env.out, env.err, LoadConfig(std::getenv)};
  if (!fresh.config.errors.empty()) {
    error = TranslatedText(fresh.config.errors.front());
    return false;
  }
  try {
    o = GuardianOptionsFromFlags(fresh, f, total);
    return true;
  } catch (const UsageError& e) {
    error = e.message;
    return false;
  }
}

}  // namespace headroom
