#include "watch/job_tee.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "testing_files.h"

namespace headroom {
namespace {

using testing::Slurp;
using testing::TempDir;

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int p[2];
    EXPECT_EQ(::pipe2(p, O_CLOEXEC), 0);
    r = p[0];
    w = p[1];
  }
};

TEST(TeeJobOutput, BytesGoThroughUnchangedAndTheLogGetsStampedLines) {
  TempDir dir;
  auto log = DurableLines::Create(dir / "job.log", std::chrono::milliseconds(0));
  ASSERT_TRUE(log) << EnglishText(log.error().what);
  Pipe job_out, job_err, term_out, term_err;
  const std::string out_bytes = "step 1\rstep 2\nno newline";
  const std::string err_bytes = "warning: x\n";
  ASSERT_EQ(::write(job_out.w, out_bytes.data(), out_bytes.size()),
            static_cast<ssize_t>(out_bytes.size()));
  ASSERT_EQ(::write(job_err.w, err_bytes.data(), err_bytes.size()),
            static_cast<ssize_t>(err_bytes.size()));
  ::close(job_out.w);
  ::close(job_err.w);
  const std::atomic<bool> stop{false};
  TeeJobOutput({job_out.r, job_err.r, term_out.w, term_err.w}, *log, stop);
  ::close(term_out.w);
  ::close(term_err.w);
  EXPECT_EQ(ReadAll(term_out.r), out_bytes);
  EXPECT_EQ(ReadAll(term_err.r), err_bytes);
  ::close(term_out.r);
  ::close(term_err.r);
  ASSERT_TRUE(log->Sync());
  const std::string text = Slurp(dir / "job.log");
  for (const char* segment : {" step 1\n", " step 2\n", " no newline\n", " warning: x\n"})
    EXPECT_NE(text.find(segment), std::string::npos) << segment << " in\n" << text;
  // Each line starts with its arrival time.
  std::istringstream lines(text);
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n) EXPECT_EQ(line.substr(0, 2), "20") << line;
  EXPECT_EQ(n, 4);
}

TEST(TeeJobOutput, AStragglerHoldingAPipeGetsTwoSecondsAfterStop) {
  TempDir dir;
  auto log = DurableLines::Create(dir / "job.log", std::chrono::milliseconds(0));
  ASSERT_TRUE(log);
  Pipe job_out, job_err;
  const int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  ::close(job_err.w);
  std::atomic<bool> stop{true};  // job_out.w stays open, as a straggler's would
  const auto start = std::chrono::steady_clock::now();
  TeeJobOutput({job_out.r, job_err.r, devnull, devnull}, *log, stop);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(1900));
  EXPECT_LT(took, std::chrono::seconds(5));
  ::close(job_out.w);
  ::close(devnull);
}

}  // namespace
}  // namespace headroom
