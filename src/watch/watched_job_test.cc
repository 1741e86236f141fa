// RunWatchedJob: the job's output teed to the log and through to the given descriptors,
// rows sampled while it runs and once after, the job's status handed back, and the
// calling thread's signal mask left as it was. In a forked helper, as in guard_test.cc.
#include "watch/watched_job.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "base/message.h"
#include "testing_files.h"
#include "testing_helper_process.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::Slurp;
using testing::TempDir;

using testing::InHelper;

TEST(WatchedJob, TeesTheJobSamplesItAndHandsBackItsStatus) {
  TempDir dir("watched-job");
  EXPECT_EQ(InHelper([&]() -> std::string {
              Sampler sampler(SysRoot(fs::path(HEADROOM_SOURCE_DIR) / "tests/fixtures/gb10-idle"),
                              nullptr);
              SamplesHeader h;
              h.host = "test";
              h.device = h.platform = "none";
              h.interval_ms = 10;
              h.extra_columns = sampler.extra_columns();
              auto csv =
                  SamplesCsvWriter::Create(dir / "samples.csv", h, std::chrono::milliseconds(0));
              auto log = DurableLines::Create(dir / "job.log", std::chrono::milliseconds(0));
              if (!csv || !log) return "create";
              SampleLoop loop(sampler, *csv, nullptr, {nullptr, nullptr});
              const int out = ::open((dir / "out").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
              sigset_t before, after;
              ::pthread_sigmask(SIG_SETMASK, nullptr, &before);
              GuardOptions opt;
              opt.command = {"sh", "-c", "echo to-out; echo to-err >&2; sleep 0.1; exit 4"};
              opt.min_available_bytes = 1;  // never a kill
              opt.use_cgroup = false;
              auto r = RunWatchedJob(SysRoot("/"), opt, {loop, std::chrono::milliseconds(10)},
                                     &*log, {out, out, ""}, nullptr);
              ::pthread_sigmask(SIG_SETMASK, nullptr, &after);
              ::close(out);
              (void)log->Sync();
              if (!r) return EnglishText(r.error().what);
              if (r->exit_status != 4) return "exit status " + std::to_string(r->exit_status);
              if (csv->rows() < 2) return "rows " + std::to_string(csv->rows());
              for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE}) {
                if (sigismember(&before, s) != sigismember(&after, s)) return "the mask changed";
              }
              return "";
            }),
            "");
  const std::string log = Slurp(dir / "job.log");
  EXPECT_NE(log.find("to-out"), std::string::npos) << log;
  EXPECT_NE(log.find("to-err"), std::string::npos) << log;
  const std::string out = Slurp(dir / "out");
  EXPECT_NE(out.find("to-out\n"), std::string::npos) << out;
  EXPECT_NE(out.find("to-err\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace headroom
