#include "cli/guard_flags.h"

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/i18n.h"

namespace headroom {

void AddGuardFlags(CLI::App& app, GuardFlags& flags) {
  auto& [min_available, warn_available, require_available, grace, events_path, root_dir, pid,
         journal_flag, no_journal, json, psi_kill, no_cgroup, torch_cap, command] = flags;
  app.add_option("--min-available", min_available,
                 Tr("kill below this MemAvailable: SIZE or PCT of MemTotal (default: [guard] "
                    "kill_level in config.toml, else the larger of 4GiB and 8%)"));
  app.add_option("--warn-available", warn_available,
                 Tr("one warning line per crossing below this (default: [guard] warn_level in "
                    "config.toml, else twice the kill level)"));
  app.add_option(
      "--require-available", require_available,
      Tr("refuse to start when MemAvailable is below SIZE; lists the usual holders of the pool"));
  app.add_option("--grace", grace, Tr("SIGTERM first, SIGKILL when this runs out (default 3s)"));
  app.add_option("--events", events_path,
                 Tr("append JSON lines (start, warn, trigger, term, kill, exit) to FILE"));
  app.add_option("--pid", pid, Tr("guard an existing process and its descendants"));
  app.add_flag("--psi-kill", psi_kill,
               Tr("sustained full memory pressure (PSI) is a kill reason too"));
  app.add_flag("--no-cgroup", no_cgroup, Tr("do not create a cgroup for the job"));
  AddJsonFlag(app, json);
  app.add_flag("--torch-cap", torch_cap,
               Tr("PyTorch jobs: cap torch's allocator below the kill level "
                  "(set_per_process_memory_fraction), so the job gets a catchable OOM first"));
  AddRootFlag(app, root_dir);
  AddJournalFlag(app, journal_flag);
  app.add_flag("--no-journal", no_journal, Tr("do not record the run"));
  app.add_option("command", command, Tr("the job, after --"));
}

GuardRequest GuardRequestFromFlags(const CliEnv& env, const GuardFlags& f, uint64_t total) {
  GuardRequest r;
  r.command = f.command;
  r.pid = f.pid;
  r.min_available_bytes = KillLevelBytes(env, f.min_available, "--min-available", total);
  r.warn_available_bytes =
      WarnLevelBytes(env, f.warn_available, "--warn-available", total, r.min_available_bytes);
  r.grace = f.grace;
  r.psi_kill = f.psi_kill;
  r.use_cgroup = !f.no_cgroup;
  r.torch_cap = f.torch_cap;
  const char* tmp = std::getenv("TMPDIR");
  const char* pythonpath = std::getenv("PYTHONPATH");
  r.torch_cap_place = {tmp ? tmp : "", pythonpath ? pythonpath : ""};
  r.events_path = f.events_path;
  if (!f.no_journal) r.journal = JournalPath(env, f.journal_flag);
  return r;
}

}  // namespace headroom
