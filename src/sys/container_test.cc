#include "sys/container.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

#include "testing_files.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::WriteFile;

// /proc/1/mountinfo of a Docker container (overlay2 storage driver), trimmed.
constexpr std::string_view kDockerMountinfo =
    "1288 1110 0:120 / / rw,relatime master:1 - overlay overlay "
    "rw,lowerdir=/var/lib/docker/overlay2/l/"
    "ABCDEF:/var/lib/docker/overlay2/l/GHIJKL,upperdir=/var/lib/docker/overlay2/0123/diff,workdir=/"
    "var/lib/"
    "docker/overlay2/0123/work\n"
    "1289 1288 0:124 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
    "1290 1288 0:125 / /dev rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755\n";

// /proc/1/mountinfo of a bare host: ext4 root, a Docker overlay mounted elsewhere.
constexpr std::string_view kHostMountinfo =
    "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro\n"
    "23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
    "400 22 0:50 / /var/lib/docker/overlay2/0123/merged rw,relatime - overlay overlay "
    "rw,lowerdir=/x\n";

bool EvidenceMentions(const ContainerInfo& info, std::string_view needle) {
  for (const auto& e : info.evidence) {
    if (e.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST(Container, RuntimeFromCgroupV1Docker) {
  std::string line;
  EXPECT_EQ(RuntimeFromCgroup("12:memory:/docker/3f2a9c0e1b7d\n"
                              "11:cpuset:/docker/3f2a9c0e1b7d\n"
                              "1:name=systemd:/docker/3f2a9c0e1b7d\n",
                              &line),
            "docker");
  EXPECT_EQ(line, "12:memory:/docker/3f2a9c0e1b7d");
  // The systemd cgroup driver's scope name.
  EXPECT_EQ(RuntimeFromCgroup("0::/system.slice/docker-3f2a9c0e1b7d.scope\n"), "docker");
}

TEST(Container, RuntimeFromCgroupKubernetesBeatsDocker) {
  // A pod's path also names the container runtime; the pod is the more specific answer.
  EXPECT_EQ(RuntimeFromCgroup("12:memory:/kubepods/burstable/pod5d2c1e0a/docker/3f2a9c0e1b7d\n"),
            "kubernetes");
  EXPECT_EQ(
      RuntimeFromCgroup("0::/kubepods.slice/kubepods-besteffort.slice/docker-3f2a9c0e1b7d.scope\n"),
      "kubernetes");
  EXPECT_EQ(RuntimeFromCgroup("0::/kubepods/besteffort/pod1/containerd-3f2a\n"), "kubernetes");
}

TEST(Container, RuntimeFromCgroupOthers) {
  EXPECT_EQ(RuntimeFromCgroup("0::/machine.slice/libpod-3f2a9c0e1b7d.scope/container\n"), "podman");
  EXPECT_EQ(RuntimeFromCgroup("0::/lxc.payload.c1\n"), "lxc");
  EXPECT_EQ(RuntimeFromCgroup("0::/machine.slice/systemd-nspawn@box.service/payload\n"),
            "systemd-nspawn");
}

TEST(Container, RuntimeFromCgroupNoEvidence) {
  std::string line = "unchanged";
  // A cgroup v2 namespace shows only the root: no sign either way.
  EXPECT_EQ(RuntimeFromCgroup("0::/\n", &line), "");
  EXPECT_EQ(line, "unchanged");
  EXPECT_EQ(RuntimeFromCgroup("0::/init.scope\n"), "");
  EXPECT_EQ(RuntimeFromCgroup("0::/user.slice/user-1000.slice/session-3.scope\n"), "");
  EXPECT_EQ(RuntimeFromCgroup(""), "");
}

TEST(Container, MatchedLineIsBounded) {
  std::string line;
  EXPECT_EQ(RuntimeFromCgroup("0::/docker/" + std::string(100'000, 'f') + "\n", &line), "docker");
  EXPECT_LE(line.size(), 200u);
  EXPECT_TRUE(line.starts_with("0::/docker/"));
}

TEST(Container, RootIsOverlay) {
  EXPECT_TRUE(RootIsOverlay(
      "36 35 0:32 / / rw,relatime - overlay overlay rw,lowerdir=/a:/b,upperdir=/c,workdir=/d\n"));
  EXPECT_TRUE(RootIsOverlay(kDockerMountinfo));
  EXPECT_FALSE(RootIsOverlay(kHostMountinfo));
  // The root need not come first.
  EXPECT_TRUE(
      RootIsOverlay("1289 1288 0:124 / /proc rw - proc proc rw\n"
                    "1288 1110 0:120 / / rw,relatime - overlay overlay rw,lowerdir=/x\n"));
}

TEST(Container, RootIsOverlayFuseOverlayfs) {
  // Rootless Podman's root; the kernel reports FUSE filesystems as "fuse.<subtype>".
  EXPECT_TRUE(
      RootIsOverlay("590 540 0:48 / / rw,nodev,relatime - fuse.fuse-overlayfs fuse-overlayfs "
                    "rw,user_id=0,group_id=0,default_permissions,allow_other\n"));
}

TEST(Container, RootIsOverlayMalformed) {
  EXPECT_FALSE(RootIsOverlay(""));
  EXPECT_FALSE(RootIsOverlay("\n\n\n"));
  EXPECT_FALSE(RootIsOverlay("overlay"));
  EXPECT_FALSE(RootIsOverlay("36 35 0:32 / /"));
  EXPECT_FALSE(RootIsOverlay("36 35 0:32 / / rw,relatime overlay overlay rw\n"));
  EXPECT_FALSE(RootIsOverlay("36 35 0:32 / / rw,relatime -\n"));
  EXPECT_FALSE(RootIsOverlay("36 35 0:32 / / rw,relatime - \n"));
  EXPECT_FALSE(RootIsOverlay("36 35 0:32 / /mnt rw - overlay overlay rw\n"));
  EXPECT_FALSE(RootIsOverlay(std::string(1 << 20, ' ')));
}

TEST(Container, DockerEnv) {
  TempDir tmp("container-docker");
  WriteFile(tmp / ".dockerenv", "");
  const auto info = DetectContainer(SysRoot(tmp.path()), std::nullopt);
  EXPECT_TRUE(info.in_container);
  EXPECT_EQ(info.runtime, "docker");
  ASSERT_EQ(info.evidence.size(), 1u);
  EXPECT_NE(info.evidence[0].find(".dockerenv"), std::string::npos) << info.evidence[0];
}

TEST(Container, PodmanContainerEnvFile) {
  TempDir tmp("container-podman");
  WriteFile(tmp / "run" / ".containerenv", "engine=\"podman-5.2.2\"\n");
  const auto info = DetectContainer(SysRoot(tmp.path()), std::nullopt);
  EXPECT_TRUE(info.in_container);
  EXPECT_EQ(info.runtime, "podman");
  EXPECT_TRUE(EvidenceMentions(info, ".containerenv"));
}

TEST(Container, ContainerVariable) {
  TempDir tmp("container-env");
  const auto podman = DetectContainer(SysRoot(tmp.path()), std::string("podman"));
  EXPECT_TRUE(podman.in_container);
  EXPECT_EQ(podman.runtime, "podman");
  EXPECT_TRUE(EvidenceMentions(podman, "podman"));

  // A value that does not name a known runtime still says "in a container".
  const auto other = DetectContainer(SysRoot(tmp.path()), std::string("oci"));
  EXPECT_TRUE(other.in_container);
  EXPECT_EQ(other.runtime, "container");

  // Empty: unset in effect.
  const auto empty = DetectContainer(SysRoot(tmp.path()), std::string());
  EXPECT_FALSE(empty.in_container);
  EXPECT_TRUE(empty.evidence.empty());
}

TEST(Container, CgroupOfPid1) {
  TempDir tmp("container-cgroup");
  WriteFile(tmp / "proc" / "1" / "cgroup",
            "0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-3f2a.scope\n");
  const auto info = DetectContainer(SysRoot(tmp.path()), std::nullopt);
  EXPECT_TRUE(info.in_container);
  EXPECT_EQ(info.runtime, "kubernetes");
  EXPECT_TRUE(EvidenceMentions(info, "kubepods"));
}

TEST(Container, BareHost) {
  TempDir tmp("container-bare");
  WriteFile(tmp / "proc" / "1" / "cgroup", "0::/init.scope\n");
  WriteFile(tmp / "proc" / "1" / "mountinfo", kHostMountinfo);
  const auto info = DetectContainer(SysRoot(tmp.path()), std::nullopt);
  EXPECT_FALSE(info.in_container);
  EXPECT_EQ(info.runtime, "");
  EXPECT_TRUE(info.evidence.empty());

  TempDir empty("container-empty");
  const auto nothing = DetectContainer(SysRoot(empty.path()), std::nullopt);
  EXPECT_FALSE(nothing.in_container);
  EXPECT_EQ(nothing.runtime, "");
  EXPECT_TRUE(nothing.evidence.empty());
}

TEST(Container, OverlayRootAloneIsWeak) {
  TempDir tmp("container-overlay");
  WriteFile(tmp / "proc" / "1" / "cgroup", "0::/\n");
  WriteFile(tmp / "proc" / "1" / "mountinfo", kDockerMountinfo);
  const auto info = DetectContainer(SysRoot(tmp.path()), std::nullopt);
  EXPECT_FALSE(info.in_container);
  EXPECT_EQ(info.runtime, "");
  ASSERT_EQ(info.evidence.size(), 1u);
  EXPECT_NE(info.evidence[0].find("overlay"), std::string::npos) << info.evidence[0];
}

TEST(Container, StrongAndWeakSignsTogether) {
  TempDir tmp("container-both");
  WriteFile(tmp / ".dockerenv", "");
  WriteFile(tmp / "proc" / "1" / "cgroup", "12:memory:/docker/3f2a9c0e1b7d\n");
  WriteFile(tmp / "proc" / "1" / "mountinfo", kDockerMountinfo);
  const auto info = DetectContainer(SysRoot(tmp.path()), std::nullopt);
  EXPECT_TRUE(info.in_container);
  EXPECT_EQ(info.runtime, "docker");
  EXPECT_EQ(info.evidence.size(), 3u);
  EXPECT_TRUE(EvidenceMentions(info, ".dockerenv"));
  EXPECT_TRUE(EvidenceMentions(info, "/docker/3f2a9c0e1b7d"));
  EXPECT_TRUE(EvidenceMentions(info, "overlay"));
}

}  // namespace
}  // namespace headroom
