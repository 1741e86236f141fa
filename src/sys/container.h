// Container or bare host, and the evidence for the answer. No single sign is reliable: a
// Docker image has /.dockerenv, Podman writes /run/.containerenv, cgroup v1 paths name the
// runtime (".../docker/<id>", "kubepods", "libpod"), but a cgroup v2 namespace shows only
// "0::/", so the list of signs is kept and shown, not just a yes or no.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sys/sysroot.h"

namespace headroom {

struct ContainerInfo {
  bool in_container = false;
  // "docker", "podman", "kubernetes", "containerd", "lxc", "systemd-nspawn", or "container"
  // when the sign does not say which; empty on a bare host.
  std::string runtime;
  // Each sign seen: "/.dockerenv exists", "proc/1/cgroup: 0::/docker/3f2a...". Weak signs
  // (an overlay root filesystem) are listed but do not make in_container true by themselves.
  std::vector<std::string> evidence;
};

// Reads the signs below `root`. `container_env`: the $container variable (systemd-nspawn,
// podman and LXC set it for pid 1's children), read by the CLI.
ContainerInfo DetectContainer(const SysRoot& root, const std::optional<std::string>& container_env);

// The runtime a /proc/PID/cgroup text names ("docker", "kubernetes", ...), or "" when none.
std::string RuntimeFromCgroup(std::string_view cgroup_text, std::string* matched_line = nullptr);

// Whether a /proc/PID/mountinfo text mounts "/" from an overlay filesystem.
bool RootIsOverlay(std::string_view mountinfo_text);

}  // namespace headroom
