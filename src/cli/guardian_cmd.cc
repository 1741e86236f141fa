// `headroom guardian` (docs/guardian.md): flags (cli/guardian_flags.h) and config.toml read and
// checked here, then the lean worker `headroom-guardian` exec'd with what they resolved
// (guardian/worker_args.h), so that the process that stays up maps none of this; without a
// worker beside the program, the same run in this process (cli/guardian_run.h).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include "base/bytes.h"
#include "base/safe_file.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/guardian_flags.h"
#include "cli/guardian_run.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "gpu/nvml.h"
#include "guardian/guardian_record.h"
#include "sys/meminfo.h"
#include "sys/process_survey.h"

namespace headroom {
namespace {

struct GuardianCommandFlags final : CommandFlags {
  CLI::App app{
      Tr("Guard the whole machine: when MemAvailable falls to the kill level, end the one job "
         "that holds the pool, counting what no RSS shows (NVML's GPU memory per process, "
         "memfds, shared memory), never PID 1, kernel threads, sshd, systemd's services, the "
         "display server or the login manager; a job under `headroom guard` is left to its "
         "guard. Each decision is one line: who, why, who else was considered.\n\n"
         "Runs until SIGTERM or SIGINT; SIGHUP reads the configuration again. Test with --dry-run "
         "and "
         "--only.\n\n"
         "exit status: 0 stopped by a signal; 1 could not start; 2 usage error"),
      "headroom guardian"};
  GuardianFlags fl;
  CLI::App& App() override { return app; }
};

// The worker beside this program, `exe` (a build tree), or in PREFIX/libexec/headroom
// (installed).
std::optional<std::filesystem::path> FindGuardianWorker(const std::filesystem::path& exe) {
  const auto dir = exe.parent_path();
  for (const auto& c : {dir / "headroom-guardian",
                        dir.parent_path() / "libexec" / "headroom" / "headroom-guardian"}) {
    if (::access(c.c_str(), X_OK) == 0) return c;
  }
  return std::nullopt;
}

// Replaces this process with the worker; returns only when exec failed (errno kept). SIGHUP
// runs this program, `exe`, again with the words it was given.
void ExecGuardianWorker(const SysRoot& root, const std::filesystem::path& exe,
                        const std::filesystem::path& worker, GuardianRunSettings& s) {
  if (auto cmd = ReadFilePrefix(root, "proc/self/cmdline", 1 << 20)) {
    const auto argv = ParseCmdline(cmd->text);
    s.reload_args.assign(argv.begin() + std::min<size_t>(1, argv.size()), argv.end());
  }
  if (!s.reload_args.empty()) s.reload_program = exe.string();
  const std::vector<std::string> words = EncodeWorkerArgs(s);
  std::vector<char*> argv = {const_cast<char*>("headroom-guardian")};
  for (const auto& w : words) argv.push_back(const_cast<char*>(w.c_str()));
  argv.push_back(nullptr);
  std::fflush(nullptr);
  ::execv(worker.c_str(), argv.data());
}

}  // namespace

std::unique_ptr<CommandFlags> DefineGuardianFlags() {
  auto defined = std::make_unique<GuardianCommandFlags>();
  AddGuardianFlags(defined->app, defined->fl);
  return defined;
}

int RunGuardianCommand(const CliEnv& env, CommandFlags& given_flags) {
  GuardianFlags& f = FlagsOf<GuardianCommandFlags>(given_flags).fl;
  const SysRoot root(env.default_root);
  try {
    auto info = ReadMemInfo(root);
    if (!info) throw UsageError{TranslatedText(info.error().what)};
    const uint64_t total = info->total_bytes().value_or(0);
    GuardianRunSettings s;
    s.options = GuardianOptionsFromFlags(env, f, total);
    if (f.print_levels) {
      fmt::print(env.out, "{}",
                 EncodeReloadedLevels({s.options.min_available_bytes,
                                       s.options.warn_available_bytes, s.options.grace}));
      return kExitOk;
    }
    if (!f.events_path.empty()) {
      CheckOutputFlag(f.events_path, "--events");
      auto opened = OpenAppendStream(f.events_path);
      if (!opened) throw UsageError{"--events: " + TranslatedText(opened.error().what)};
      std::fclose(*opened);
      s.events_path = f.events_path;
    }
    // The running guards' registry is read even with --no-journal, which only stops recording.
    if (auto path = JournalPath(env, f.journal_flag))
      s.registry = *path;
    else if (!f.no_journal)
      throw UsageError{"--journal: " + TranslatedText(path.error().what)};
    if (!f.no_journal) s.journal = s.registry;
    if (s.journal) {
      s.run_id = BeginGuardianRun(*s.journal, {"guardian"}, root, s.options.min_available_bytes,
                                  s.options.warn_available_bytes,
                                  [&](const Message& m) { PrintError(env, m); });
    }
    if (!f.no_nvml) s.nvml_library = ResolveNvmlLibrary(f.nvml_lib, std::getenv);
    s.on_event = f.on_event;
    s.psi_kill = f.psi_kill;
    s.locale_dir = FindLocaleDir();
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink(root.Path("proc/self/exe"), ec);
    if (const auto worker = ec ? std::nullopt : FindGuardianWorker(exe)) {
      ExecGuardianWorker(root, exe, *worker, s);
      PrintError(env, TrFormat("guardian: exec {}: {}; running in this process", worker->string(),
                               std::strerror(errno)));
    }
    GuardianRunIo io{
        env.out, env.err, [&](ReloadedLevels& levels, std::string& why) {
          GuardianOptions again;
          if (!ReloadGuardianOptions(env, f, total, again, why)) return false;
          levels = {again.min_available_bytes, again.warn_available_bytes, again.grace};
          return true;
        }};
    return RunGuardian(root, s, io);
  } catch (const UsageError& e) {
    PrintError(env, "guardian: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
