// Text from outside reaches the terminal escaped, never raw (issue 29): a run config's value
// (plan --from), another machine's metrics page (top --node) and the nodes' reports (doctor
// --compare), through the real binary. Each asserts that no ESC or BEL byte is in what the
// program wrote and that the escaped form is. Also what plan --from does with a file whose
// aliases expand past the parser's budget, and top --node with a chunked page.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "run_cli.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::RunCli;
using testing::TempDir;

bool HasRawControl(const std::string& text) {
  return text.find('\x1b') != std::string::npos || text.find('\x07') != std::string::npos;
}

// A loopback listener that answers each of `answers.size()` connections with the next answer
// (after reading the request), then closes; its thread is joined in the destructor.
class PageServer {
 public:
  explicit PageServer(std::vector<std::string> answers) : answers_(std::move(answers)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(fd_, 4) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port_ = ntohs(a.sin_port);
    }
    thread_ = std::thread([this] {
      for (const std::string& answer : answers_) {
        const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) return;
        char buf[4096];
        (void)::recv(c, buf, sizeof buf, 0);
        (void)::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
        ::close(c);
      }
    });
  }
  ~PageServer() {
    ::shutdown(fd_, SHUT_RDWR);  // an accept still waiting returns
    thread_.join();
    ::close(fd_);
  }
  std::string Url() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  std::vector<std::string> answers_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
};

// Issue 29's reproduction: `printf 'base_model: "\033]0;X\007"\n' > a.yaml; headroom plan
// --from a.yaml` set the terminal's title.
TEST(OutsideTextCli, PlanFromShowsARunConfigsControlCharactersEscaped) {
  TempDir tmp;
  const std::string file = tmp.File("a.yaml");
  testing::WriteFile(file, "base_model: \"\x1b]0;X\x07\"\n");
  const auto r = RunCli({"plan", "--from", file, "--root", testing::kFixtures + "gb10-idle"});
  EXPECT_FALSE(HasRawControl(r.out)) << r.out;
  EXPECT_FALSE(HasRawControl(r.err)) << r.err;
  EXPECT_NE((r.out + r.err).find("\\x1b]0;X\\x07"), std::string::npos) << r.out << r.err;
  // A key of the file, named in an error, likewise.
  testing::WriteFile(file, "base_model: x\n\"\x1b[2Jk\": 1\n\"\x1b[2Jk\": 2\n");
  const auto twice = RunCli({"plan", "--from", file, "--root", testing::kFixtures + "gb10-idle"});
  EXPECT_EQ(twice.status, 2) << twice.out << twice.err;
  EXPECT_FALSE(HasRawControl(twice.err)) << twice.err;
  EXPECT_NE(twice.err.find("key '\\x1b[2Jk' given twice"), std::string::npos) << twice.err;
}

// Issue 29's reproduction: a 612 KB file whose 4,000 aliases repeat a 600,000-byte scalar took
// 2.36 GB. Now one line naming the file, exit 2 (a usage error, docs/cli.md).
TEST(OutsideTextCli, PlanFromRefusesAFileWhoseAliasesExpandTooFar) {
  TempDir tmp;
  const std::string file = tmp.File("b.yaml");
  std::string text = "base_model: x\nbig: &b " + std::string(600'000, 'A') + "\nrefs: [";
  for (int i = 0; i < 4000; ++i) text += i == 0 ? "*b" : ",*b";
  testing::WriteFile(file, text + "]\n");
  const auto r = RunCli({"plan", "--from", file, "--root", testing::kFixtures + "gb10-idle"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err,
            "headroom: plan: --from: " + file +
                ": line 3: the text expands to more than 4194304 bytes (aliases count once per "
                "use)\n");
  EXPECT_EQ(r.out, "");
}

const char kPageHead[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n";

// A peer's page names its platform in a label: shown escaped in top's node pane.
TEST(OutsideTextCli, TopNodeShowsAPagesControlCharactersEscaped) {
  const std::string page =
      "headroom_platform_info{kind=\"gb10\x1b]0;X\x07\"} 1\n"
      "headroom_memory_total_bytes 1.28e+11\nheadroom_memory_available_bytes 6.4e+10\n";
  PageServer server({std::string(kPageHead) + "\r\n" + page, "HTTP/1.1 5\x1b[2J\r\n\r\n"});
  const auto r = RunCli({"top", "--once", "--node", server.Url(), "--node", server.Url()});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_FALSE(HasRawControl(r.out)) << r.out;
  EXPECT_FALSE(HasRawControl(r.err)) << r.err;
  EXPECT_NE(r.out.find("node " + server.Url() + " (gb10\\x1b]0;X\\x07)\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("unreachable: HTTP status 5\\x1b["), std::string::npos) << r.out;
}

// Issue 29: a page sent with Transfer-Encoding: chunked read as "memory: not on the page".
TEST(OutsideTextCli, TopNodeReadsAChunkedPage) {
  const std::string page =
      "headroom_memory_total_bytes 1.28e+11\nheadroom_memory_available_bytes 6.4e+10\n";
  std::string chunked;
  for (size_t at = 0; at < page.size(); at += 20) {
    const std::string part = page.substr(at, 20);
    chunked += fmt::format("{:x}\r\n{}\r\n", part.size(), part);
  }
  chunked += "0\r\n\r\n";
  PageServer server({std::string(kPageHead) +
                     "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + chunked});
  const auto r = RunCli({"top", "--once", "--node", server.Url()});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("  memory: MemAvailable 59.60 GiB of 119.21 GiB (50%)\n"), std::string::npos)
      << r.out;
}

// A node's report names its host and versions: shown escaped in doctor --compare's lines.
TEST(OutsideTextCli, DoctorCompareShowsAReportsControlCharactersEscaped) {
  TempDir tmp;
  const std::string base = testing::FixturePath("doctor-compare/spark-1.json");
  std::string report;
  {
    std::ifstream in(base);
    report.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_NE(report.find("\"spark-1\""), std::string::npos);
  const std::string a = tmp.File("a.json"), b = tmp.File("b.json");
  testing::WriteFile(a, report);
  std::string hostile = report;
  hostile.replace(hostile.find("\"spark-1\""), 9, "\"spark-\\u001b]0;X\\u0007\"");
  hostile.replace(hostile.find("\"2.28.3\""), 8, "\"2.28\\u001b[2J\"");
  testing::WriteFile(b, hostile);
  const auto r = RunCli({"doctor", "--compare", a, b, "--verbose"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;  // NCCL differs
  EXPECT_FALSE(HasRawControl(r.out)) << r.out;
  EXPECT_FALSE(HasRawControl(r.err)) << r.err;
  EXPECT_NE(r.out.find("node: spark-\\x1b]0;X\\x07 (" + b + ")"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2.28\\x1b[2J on spark-\\x1b]0;X\\x07"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace headroom
