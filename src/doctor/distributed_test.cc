// G11 as a pure function of literal facts, and its two small parsers (slurm.conf's
// KillOnBadExit, the version in a library file name). The fixture machines run it end to end
// in tests/cli/doctor_cli_test.cc.
#include "doctor/distributed.h"

#include <gtest/gtest.h>

#include "doctor/checks.h"
#include "doctor_facts.h"

namespace headroom {
namespace {

using testing::Gb10Facts;

TEST(DoctorDistributed, KillOnBadExitFromSlurmConf) {
  EXPECT_EQ(ParseKillOnBadExit("ClusterName=a\nKillOnBadExit=1\n"), 1);
  EXPECT_EQ(ParseKillOnBadExit("MpiDefault=none killonbadexit=0 ProctrackType=x\n"), 0);
  EXPECT_EQ(ParseKillOnBadExit("# KillOnBadExit=1\nClusterName=a\n"), std::nullopt);
  EXPECT_EQ(ParseKillOnBadExit("ClusterName=a # KillOnBadExit=1\n"), std::nullopt);
  EXPECT_EQ(ParseKillOnBadExit("KillOnBadExit=1\nKillOnBadExit=0\n"), 0);  // the last wins
  EXPECT_EQ(ParseKillOnBadExit("KillOnBadExit=yes\n"), std::nullopt);
  EXPECT_EQ(ParseKillOnBadExit("KillOnBadExitX=1\nKillOnBadExit\n"), std::nullopt);
  EXPECT_EQ(ParseKillOnBadExit(""), std::nullopt);
}

TEST(DoctorDistributed, LibraryFileVersion) {
  EXPECT_EQ(LibraryFileVersion("libnccl.so.2.28.3", "libnccl.so"), "2.28.3");
  EXPECT_EQ(LibraryFileVersion("libnccl.so.2", "libnccl.so"), "2");
  EXPECT_EQ(LibraryFileVersion("libnccl.so", "libnccl.so"), "");
  EXPECT_EQ(LibraryFileVersion("libnccl.so.", "libnccl.so"), "");
  EXPECT_EQ(LibraryFileVersion("libnccl.so.2.x", "libnccl.so"), "");
  EXPECT_EQ(LibraryFileVersion("libnccl-net.so.2", "libnccl.so"), "");
}

DoctorFacts Distributed(DoctorFacts f) {
  f.world_size = "2";
  f.nnodes = "2";
  return f;
}

TEST(DoctorDistributed, SingleNodeWithDefaultsIsInfo) {
  const CheckResult r = CheckDistributed(Gb10Facts());
  EXPECT_EQ(r.id, "G11");
  EXPECT_EQ(r.verdict, CheckVerdict::kInfo);
}

TEST(DoctorDistributed, DistributedRunWithTorchsDefaultsPasses) {
  DoctorFacts f = Distributed(Gb10Facts());
  f.distributed.nccl_system = "2.28.3";
  f.distributed.nccl_system_path = "/usr/lib/aarch64-linux-gnu/libnccl.so.2.28.3";
  const CheckResult r = CheckDistributed(f);
  EXPECT_EQ(r.verdict, CheckVerdict::kPass) << EnglishText(r.summary);
  ASSERT_FALSE(r.details.empty());
  EXPECT_EQ(EnglishText(r.details.back()),
            "NCCL 2.28.3 from /usr/lib/aarch64-linux-gnu/libnccl.so.2.28.3");
}

TEST(DoctorDistributed, AsyncErrorHandlingOffWarnsAndTheTorchNameWins) {
  DoctorFacts f = Distributed(Gb10Facts());
  f.distributed.env["NCCL_ASYNC_ERROR_HANDLING"] = "0";
  CheckResult r = CheckDistributed(f);
  EXPECT_EQ(r.verdict, CheckVerdict::kWarn);
  EXPECT_EQ(EnglishText(r.summary),
            "NCCL_ASYNC_ERROR_HANDLING=0: a failed collective leaves the ranks waiting");
  // torch reads the TORCH_NCCL_ name first: set to 1 there, the old name's 0 does not count.
  f.distributed.env["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1";
  EXPECT_EQ(CheckDistributed(f).verdict, CheckVerdict::kPass);
  f.distributed.env["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "0";
  EXPECT_EQ(EnglishText(CheckDistributed(f).summary),
            "TORCH_NCCL_ASYNC_ERROR_HANDLING=0: a failed collective leaves the ranks waiting");
  f.distributed.env.clear();
  f.distributed.env["TORCH_NCCL_ENABLE_MONITORING"] = "0";
  EXPECT_EQ(CheckDistributed(f).verdict, CheckVerdict::kWarn);
}

TEST(DoctorDistributed, APipNcclWheelBesideAnotherSystemNcclWarns) {
  DoctorFacts f = Gb10Facts();
  f.distributed.nccl_wheel = "2.27.7";
  f.distributed.nccl_wheel_name = "nvidia-nccl-cu13";
  f.distributed.nccl_system = "2.28.3";
  f.distributed.nccl_system_path = "/usr/lib/libnccl.so.2.28.3";
  CheckResult r = CheckDistributed(f);
  EXPECT_EQ(r.verdict, CheckVerdict::kWarn);
  EXPECT_EQ(EnglishText(r.summary), "torch loads the wheel's NCCL 2.27.7, not the system's 2.28.3");
  EXPECT_EQ(EffectiveNccl(f.distributed), "2.27.7");
  f.distributed.nccl_system = "2.27.7";  // the same version: nothing to say
  EXPECT_EQ(CheckDistributed(f).verdict, CheckVerdict::kInfo);
}

TEST(DoctorDistributed, RaysMemoryMonitorOnGb10Warns) {
  DoctorFacts f = Gb10Facts();
  f.distributed.ray = "2.49.0";
  EXPECT_EQ(CheckDistributed(f).verdict, CheckVerdict::kWarn);
  f.distributed.env["RAY_memory_monitor_refresh_ms"] = "250";
  EXPECT_EQ(CheckDistributed(f).verdict, CheckVerdict::kWarn);
  f.distributed.env["RAY_memory_monitor_refresh_ms"] = "0";
  EXPECT_EQ(CheckDistributed(f).verdict, CheckVerdict::kInfo);
  // A discrete GPU keeps its memory apart from the host's: the monitor is left alone.
  f.distributed.env.clear();
  f.platform.kind = PlatformKind::kDiscrete;
  EXPECT_EQ(CheckDistributed(f).verdict, CheckVerdict::kInfo);
}

TEST(DoctorDistributed, SlurmWithoutKillOnBadExitWarnsForAMultiNodeJob) {
  DoctorFacts f = Gb10Facts();
  f.distributed.env["SLURM_JOB_ID"] = "42";
  f.distributed.env["SLURM_JOB_NUM_NODES"] = "2";
  f.distributed.slurm.path = "/etc/slurm/slurm.conf";
  CheckResult r = CheckDistributed(f);
  EXPECT_EQ(r.verdict, CheckVerdict::kWarn);
  EXPECT_EQ(EnglishText(r.summary), "Slurm: one task's failure does not end the others");
  f.distributed.env["SLURM_KILL_BAD_EXIT"] = "1";  // srun --kill-on-bad-exit for this step
  EXPECT_EQ(CheckDistributed(f).verdict, CheckVerdict::kPass);
  f.distributed.env.erase("SLURM_KILL_BAD_EXIT");
  f.distributed.slurm.kill_on_bad_exit = 1;
  EXPECT_EQ(CheckDistributed(f).verdict, CheckVerdict::kPass);
  // One node: nothing to end elsewhere.
  f.distributed.slurm.kill_on_bad_exit = 0;
  f.distributed.env["SLURM_JOB_NUM_NODES"] = "1";
  EXPECT_EQ(CheckDistributed(f).verdict, CheckVerdict::kInfo);
  f.distributed.slurm.error = "Permission denied";
  EXPECT_EQ(CheckDistributed(f).verdict, CheckVerdict::kSkip);
}

}  // namespace
}  // namespace headroom
