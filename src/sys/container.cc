#include "sys/container.h"

#include <filesystem>
#include <system_error>

#include "base/text.h"

namespace headroom {
namespace {

bool Exists(const SysRoot& root, std::string_view relative) {
  std::error_code ec;
  return std::filesystem::exists(root.Path(relative), ec);
}

template <typename F>
void ForEachLine(std::string_view text, F&& f) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    if (f(text.substr(0, nl))) return;
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
}

}  // namespace

std::string RuntimeFromCgroup(std::string_view cgroup_text, std::string* matched_line) {
  // Most specific first: a Kubernetes pod's path also holds "docker" or "containerd".
  static constexpr std::pair<std::string_view, std::string_view> kSigns[] = {
      {"kubepods", "kubernetes"},   {"libpod", "podman"},
      {"/docker/", "docker"},       {"/docker-", "docker"},
      {"containerd", "containerd"}, {"/lxc/", "lxc"},
      {"/lxc.payload", "lxc"},      {"machine.slice/systemd-nspawn", "systemd-nspawn"}};
  std::string found;
  ForEachLine(cgroup_text, [&](std::string_view line) {
    for (const auto& [sign, runtime] : kSigns) {
      if (line.find(sign) != std::string_view::npos) {
        found = std::string(runtime);
        if (matched_line) *matched_line = std::string(line.substr(0, 200));
        return true;
      }
    }
    return false;
  });
  return found;
}

bool RootIsOverlay(std::string_view mountinfo_text) {
  // "36 35 0:32 / / rw,relatime - overlay overlay rw,lowerdir=..." : field 5 is the mount
  // point, the word after " - " the filesystem type.
  // The last mount on "/" is the visible root (later mounts stack on earlier ones).
  bool overlay = false;
  ForEachLine(mountinfo_text, [&](std::string_view line) {
    size_t pos = 0;
    std::string_view fields[5];
    for (int i = 0; i < 5; ++i) {
      while (pos < line.size() && line[pos] == ' ') ++pos;
      const size_t end = line.find(' ', pos);
      if (end == std::string_view::npos) return false;
      fields[i] = line.substr(pos, end - pos);
      pos = end;
    }
    if (fields[4] != "/") return false;
    const size_t dash = line.find(" - ", pos);
    if (dash == std::string_view::npos) return false;
    std::string_view type = line.substr(dash + 3);
    type = type.substr(0, type.find(' '));
    // Rootless Podman's root is FUSE, which the kernel names "fuse.<subtype>".
    overlay = type == "overlay" || type == "fuse.fuse-overlayfs" || type == "fuse-overlayfs";
    return false;
  });
  return overlay;
}

ContainerInfo DetectContainer(const SysRoot& root,
                              const std::optional<std::string>& container_env) {
  ContainerInfo info;
  // The first sign names the runtime, except that a Kubernetes cgroup path wins over the
  // container engine's own marker files (a pod's container also has /.dockerenv).
  auto strong = [&](std::string runtime, std::string sign) {
    if (!info.in_container || info.runtime == "container" || runtime == "kubernetes")
      info.runtime = std::move(runtime);
    info.in_container = true;
    info.evidence.push_back(std::move(sign));
  };
  if (Exists(root, ".dockerenv")) strong("docker", "/.dockerenv exists");
  if (Exists(root, "run/.containerenv")) strong("podman", "/run/.containerenv exists");
  if (auto cg = root.ReadFile("proc/1/cgroup", 64 * 1024)) {
    std::string line;
    const std::string runtime = RuntimeFromCgroup(*cg, &line);
    if (!runtime.empty()) strong(runtime, "/proc/1/cgroup: " + line);
  }
  const std::string value =
      container_env ? std::string(TrimBlanks(*container_env).substr(0, 64)) : "";
  if (!value.empty()) {
    strong(value == "docker" || value == "podman" || value == "lxc" || value == "systemd-nspawn"
               ? value
               : "container",
           "$container=" + value);
  }
  if (auto mi = root.ReadFile("proc/1/mountinfo", 4 << 20); mi && RootIsOverlay(*mi)) {
    info.evidence.push_back("/ is an overlay filesystem (weak: live systems use it too)");
  }
  return info;
}

}  // namespace headroom
