// The guarded job as an object: spawned (own session and process group, own cgroup where one
// was made, oom_score_adj, a pidfd taken before any signal) or attached (a pidfd checked
// against the process's start time), with the scoped signal mask the guard waits on. Every
// descriptor, the mask and the cgroup are given back in the destructor, on every path, early
// returns included: a sweep runs many guards in one process and watch runs one on its main
// thread (docs/guard.md, "The tree"). After ninja's Subprocess and SubprocessSet
// (subprocess-posix.cc), which restores the mask in its destructor.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/safe_file.h"
#include "guard/job_cgroup.h"
#include "sys/processes.h"
#include "sys/sysroot.h"

namespace headroom {

// SIGCHLD, the signals that end the job (INT, TERM, HUP, QUIT) and those the guard ignores
// (USR1, USR2, ALRM, PIPE) blocked for the calling thread and read through a signalfd, so none
// of them ends the guard and leaves the job unguarded (docs/guard.md, "Signals to the
// guard"); the destructor closes it and puts back the mask the thread had.
class SignalScope {
 public:
  SignalScope();
  SignalScope(SignalScope&& other) noexcept;
  SignalScope& operator=(SignalScope&&) = delete;
  SignalScope(const SignalScope&) = delete;
  ~SignalScope();

  int fd() const { return fd_.get(); }  // -1 when signalfd failed (the loop still polls)
  const sigset_t& old_mask() const { return old_mask_; }
  // The next blocked signal that arrived (non-blocking); nullopt when none is pending.
  std::optional<int> Next();

 private:
  FileFd fd_;
  sigset_t old_mask_{};
  bool restore_ = true;
};

// Spawn's error message when the command could not be executed (errno_value says why); the
// other failures are "pipe: ..." and "fork: ...".
inline constexpr std::string_view kChildExecFailed = "exec";

struct ChildSpec {
  std::vector<std::string> command;
  std::vector<std::string> extra_env;  // "NAME=value"
  int stdout_fd = -1;                  // -1: inherited
  int stderr_fd = -1;
  int oom_score_adj = 800;
  // The nice value the job gets back before exec: the guard's own as it was started, not the
  // -10 it raised itself to (a runaway job must not run at the guard's priority); none: the
  // guard's as it is.
  std::optional<int> nice;
  bool kill_with_guard = false;     // PR_SET_PDEATHSIG SIGKILL for the job's first process
  std::optional<JobCgroup> cgroup;  // the job's own; the job joins it before exec
};

class Child {
 public:
  static Result<Child> Spawn(const SysRoot& root, ChildSpec spec);
  // Errors: no such process, or no pidfd for it (errno_value says which).
  static Result<Child> Attach(const SysRoot& root, pid_t pid);
  Child(Child&& other) noexcept;
  Child& operator=(Child&&) = delete;
  Child(const Child&) = delete;
  // A spawned job that was never reaped is killed and reaped here (never a zombie left).
  ~Child();

  pid_t pid() const { return pid_; }
  bool attached() const { return attached_; }
  const JobCgroup* cgroup() const { return cgroup_ ? &*cgroup_ : nullptr; }
  SignalScope& signals() { return signals_; }
  // Readable (POLLIN) once the job's own process has exited; -1 without a pidfd.
  int pidfd() const { return pidfd_.get(); }

  // The job itself: a spawned one runs until the guard reaps it (MarkReaped); an attached
  // one while its pidfd is not readable.
  bool running() const;
  void MarkReaped(int wait_status) { status_ = wait_status; }
  std::optional<int> wait_status() const { return status_; }

  // Live members of the job's tree (zombies excluded): the process tree below the guard
  // (spawned: the guard is the child subreaper) or below the attached process, and the
  // cgroup's processes.
  std::vector<ProcStat> Members() const;
  // Sends `sig` to every member through pidfds; returns how many were signalled. The whole
  // tree is listed (and a pidfd opened for each) before any of it is signalled, so children
  // of a process that dies of the signal cannot re-parent away first. An attached job's
  // members stay known by their pidfds once listed, wherever they re-parent to.
  int Signal(int sig);
  // Sends `sig` to the members `only` picks (the cgroup is not used: it holds them all).
  int SignalOnly(int sig, const std::function<bool(const ProcStat&)>& only);
  // process_mrelease on what was just SIGKILLed, off the calling thread.
  void ReleaseMemoryInBackground();
  // Holds up to `count` spare descriptors (of /dev/null) for listing and signalling the tree:
  // both need new descriptors (the /proc directory, each member's stat, a pidfd per member),
  // and a guard at its descriptor limit must still reach every member (issue 29: a SIGTERM
  // reached 1 of 3). Members, Signal and SignalOnly close the spares first and take them
  // again after. Called once the guard holds everything else it needs; returns how many it
  // holds.
  size_t ReserveDescriptors(size_t count);
  // The tree's RSS (the child links where the kernel has them, else the full scan).
  uint64_t RssBytes() const;

 private:
  Child(const SysRoot& root, SignalScope signals);
  bool alive() const;  // the job's own process, by its pidfd (or its stat without one)
  class SpareScope;    // frees the spare descriptors for the scope (child.cc)
  void RefillSpares() const;

  const SysRoot* root_;
  SignalScope signals_;
  std::optional<JobCgroup> cgroup_;
  FileFd pidfd_;
  pid_t pid_ = 0;
  pid_t anchor_ = 0;  // whose descendants form the tree: the guard, or the attached process
  bool attached_ = false;
  std::optional<int> status_;
  std::vector<int> kill_pidfds_;  // SIGKILLed members, for process_mrelease
  // Attached: every member listed so far with its pidfd (their parent may die and leave them
  // re-parented to init, out of the tree below the attached process).
  struct Known {
    ProcStat stat;
    FileFd pidfd;
  };
  std::vector<Known> known_;
  mutable std::vector<FileFd> spare_;  // ReserveDescriptors
  size_t spare_count_ = 0;             // how many to hold
  mutable int spare_users_ = 0;        // nested SpareScopes: the outermost frees and refills
};

}  // namespace headroom
