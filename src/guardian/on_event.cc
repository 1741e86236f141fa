#include "guardian/on_event.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>

namespace headroom {
namespace {

std::string EnvName(std::string_view key) {
  std::string out = "HEADROOM_EVENT_";
  for (const char c : key) {
    out += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::toupper(c)) : '_';
  }
  return out;
}

void AddFields(const nlohmann::ordered_json& fields, std::string_view prefix,
               std::vector<std::string>& out) {
  for (const auto& [key, value] : fields.items()) {
    const std::string name = prefix.empty() ? key : std::string(prefix) + "_" + key;
    if (value.is_object()) {
      AddFields(value, name, out);
    } else if (value.is_string()) {
      out.push_back(EnvName(name) + "=" + value.get<std::string>());
    } else {
      out.push_back(EnvName(name) + "=" + value.dump());
    }
  }
}

}  // namespace

std::vector<std::string> EventEnvironment(const GuardianEvent& event) {
  std::vector<std::string> out{"HEADROOM_EVENT_TYPE=" + event.type,
                               "HEADROOM_EVENT_MESSAGE=" + EnglishText(event.line)};
  AddFields(event.fields, "", out);
  return out;
}

OnEventRunner::OnEventRunner(std::string command, std::chrono::milliseconds limit)
    : command_(std::move(command)), limit_s_(std::chrono::duration<double>(limit).count()) {}

OnEventRunner::~OnEventRunner() {
  for (const auto& [pid, start] : running_) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
}

bool OnEventRunner::Start(const GuardianEvent& event, double now_s) {
  Poll(now_s);
  if (running_.size() >= kMaxRunning) return false;
  std::vector<std::string> env = EventEnvironment(event);
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).starts_with("HEADROOM_EVENT_")) continue;
    env.emplace_back(*e);
  }
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string shell = "/bin/sh", dash_c = "-c";
  char* argv[] = {shell.data(), dash_c.data(), command_.data(), nullptr};
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);  // the guardian blocks TERM, INT and HUP
    ::signal(SIGPIPE, SIG_DFL);
    ::execve(argv[0], argv, envp.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // both sides: whichever runs first
  running_[pid] = now_s;
  return true;
}

size_t OnEventRunner::Poll(double now_s) {
  for (auto it = running_.begin(); it != running_.end();) {
    const pid_t pid = it->first;
    if (::waitpid(pid, nullptr, WNOHANG) == pid) {
      it = running_.erase(it);
      continue;
    }
    if (now_s - it->second > limit_s_) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      it = running_.erase(it);
      continue;
    }
    ++it;
  }
  return running_.size();
}

}  // namespace headroom
