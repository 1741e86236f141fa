#include "cli/guard_flags.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/i18n.h"

namespace headroom {

void AddGuardFlags(CLI::App& app, GuardFlags& flags) {
  auto& [min_available, warn_available, require_available, grace, events_path, root_dir, pid,
         journal_flag, no_journal, json, psi_kill, no_cgroup, torch_cap, step_records,
         checkpoint_grace, checkpoint_signal, checkpoint_request, no_checkpoint, hooks, command,
         group] = flags;
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
  app.add_option("--step-records", step_records,
                 Tr("keep the companion's step records (JSON lines, docs/companion.md) in FILE "
                    "(default: a private file removed after the run); with --pid, read them "
                    "from FILE, the HEADROOM_STEP_RECORDS the job was started with"));
  app.add_option("--checkpoint-grace", checkpoint_grace,
                 Tr("ask the job to save at the warning level only when the projection leaves "
                    "this long before the kill level (default: the last measured save, else "
                    "10s)"));
  app.add_option("--checkpoint-signal", checkpoint_signal,
                 Tr("the signal that asks the companion to save (default SIGUSR1; none: the "
                    "request file only)"));
  app.add_option("--checkpoint-request", checkpoint_request,
                 Tr("with --pid: the HEADROOM_CHECKPOINT_REQUEST the job was started with, the "
                    "file the guard creates to ask for a save (default: the signal only)"));
  app.add_flag("--no-checkpoint", no_checkpoint,
               Tr("never ask the job for a checkpoint before the kill"));
  app.add_flag("--hooks", hooks,
               Tr("Python jobs: wire the companion in without code changes (step records, the "
                  "save handler, the Transformers Trainer callback)"));
  AddRootFlag(app, root_dir);
  AddJournalFlag(app, journal_flag);
  app.add_flag("--no-journal", no_journal, Tr("do not record the run"));
  // The guard group (docs/guard-group.md): one job across several nodes.
  app.add_option_function<std::vector<std::string>>(
         "--group",
         // Through a pointer: clang 14 cannot capture a structured binding.
         [g = &group](const std::vector<std::string>& values) {
           g->given = true;
           g->address = values.empty() ? "" : values.front();
         },
         Tr("join the guard group of a multi-node job: node rank 0's guard listens on HOST:PORT, "
            "the others connect; alone: from torchrun's or Slurm's variables (MASTER_ADDR, "
            "SLURM_JOB_NODELIST, ...; port MASTER_PORT + 1, else 29501)"))
      ->expected(0, 1)
      ->type_name("HOST:PORT");
  app.add_option(
      "--node-rank", group.node_rank,
      Tr("this node's rank in the group, 0 to N-1 (default: NODE_RANK or SLURM_NODEID)"));
  app.add_option("--nodes", group.nodes,
                 Tr("how many nodes the group has (default: NNODES or SLURM_JOB_NUM_NODES)"));
  app.add_option("--group-secret-file", group.secret_file,
                 Tr("the group's secret, in a file only you can read (default: "
                    "HEADROOM_GROUP_SECRET; node 0 makes one when neither is given)"));
  app.add_option("--heartbeat", group.heartbeat,
                 Tr("how often each guard tells the group it is alive (default 500ms)"));
  app.add_option("--heartbeat-timeout", group.heartbeat_timeout,
                 Tr("a node silent this long is lost and the group ends (default 3s)"));
  app.add_option("--group-wait", group.group_wait,
                 Tr("how long the nodes may take to join the group (default 600s, torchrun's "
                    "rendezvous timeout)"));
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
  r.step_records_path = f.step_records;
  r.checkpoint = !f.no_checkpoint;
  r.checkpoint_signal = f.checkpoint_signal;
  r.checkpoint_grace = f.checkpoint_grace;
  r.checkpoint_request_path = f.checkpoint_request;
  r.hooks = f.hooks;
  if (f.hooks) r.companion_dir = FindCompanionDir();
  if (!f.no_journal) r.journal = JournalPath(env, f.journal_flag);
  r.group = f.group;
  return r;
}

std::string FindCompanionDir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const std::filesystem::path bin = exe.parent_path();
  std::vector<std::filesystem::path> candidates = {bin.parent_path() / "python",
                                                   bin.parent_path() / "lib/python3/dist-packages"};
  for (const auto& entry : std::filesystem::directory_iterator(bin.parent_path() / "lib", ec)) {
    if (entry.path().filename().string().starts_with("python3.")) {
      candidates.push_back(entry.path() / "dist-packages");
    }
  }
  for (const auto& c : candidates) {
    if (std::filesystem::is_regular_file(c / "headroom" / "__init__.py", ec)) return c.string();
  }
  return {};
}

}  // namespace headroom
