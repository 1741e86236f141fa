// top --node's three parts: the URL, the metrics page read leniently, and a bounded fetch
// against sockets this test makes (one that never answers, one that answers too much).
#include "top/node_metrics.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "base/text.h"

namespace headroom {
namespace {

std::string UrlError(std::string_view url) {
  auto u = ParseNodeUrl(url);
  return u.ok() ? "parsed" : EnglishText(u.error().what);
}

TEST(NodeMetrics, Urls) {
  auto u = ParseNodeUrl("http://10.0.0.2:9464");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "10.0.0.2");
  EXPECT_EQ(u->port, 9464);
  EXPECT_EQ(u->path, "/metrics");
  u = ParseNodeUrl("[::1]:9464/other");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->path, "/other");
  u = ParseNodeUrl("localhost:1");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(UrlError("https://10.0.0.2:9464"),
            "https://10.0.0.2:9464: only http:// is read (the page of headroom export)");
  EXPECT_EQ(UrlError("http://10.0.0.2"),
            "http://10.0.0.2: no port (give HOST:PORT, e.g. http://127.0.0.1:9464)");
  EXPECT_EQ(UrlError("10.0.0.2:0"), "10.0.0.2:0: '0' is not a port from 1 to 65535");
  EXPECT_EQ(UrlError("10.0.0.2:65536"), "10.0.0.2:65536: '65536' is not a port from 1 to 65535");
  EXPECT_EQ(UrlError("spark-2:9464"),
            "spark-2:9464: 'spark-2' is not an IP address (names are not looked up)");
  EXPECT_EQ(UrlError("1.2.3.4:80/a b"),
            "1.2.3.4:80/a b: the path has a space or a control character");
  EXPECT_EQ(UrlError("[::1:80"), "[::1:80: no port (give HOST:PORT, e.g. http://127.0.0.1:9464)");
  EXPECT_EQ(UrlError(""), ": no port (give HOST:PORT, e.g. http://127.0.0.1:9464)");
}

TEST(NodeMetrics, ReadsTheFiguresAndSkipsTheRest) {
  const NodeMetrics m = ParseNodeMetrics(
      "# HELP headroom_memory_total_bytes MemTotal\n"
      "headroom_memory_total_bytes 130663165952\n"
      "headroom_memory_available_bytes{source=\"kernel\"} 120000000000\r\n"
      "headroom_memory_pressure_avg10_ratio{kind=\"full\"} 0.5\n"
      "headroom_memory_pressure_avg10_ratio{kind=\"some\"} 0.25\n"
      "headroom_gpu_temperature_celsius{gpu=\"0\",name=\"a}b\\\"c\"} 61\n"
      "headroom_gpu_temperature_celsius{gpu=\"1\"} 99\n"
      "headroom_gpu_power_watts{gpu=\"0\"} 35.5\n"
      "headroom_guard_runs_total 3\n"
      "headroom_guard_kills_total 1\n"
      "headroom_platform_info{kind=\"gb10\",arch=\"aarch64\"} 1\n"
      "headroom_memory_free_bytes not-a-number\n"
      "{broken 1\n"
      "headroom_memory_cached_bytes{unterminated=\"x} 5\n"
      "unknown_metric 7 1700000000000\n");
  EXPECT_EQ(m.mem_total_bytes, 130663165952.0);
  EXPECT_EQ(m.mem_available_bytes, 120000000000.0);
  EXPECT_EQ(m.psi_some_avg10_ratio, 0.25);
  EXPECT_EQ(m.gpu_temperature_c, 61.0);  // the first GPU's, past a '}' inside a quoted label
  EXPECT_EQ(m.gpu_power_w, 35.5);
  EXPECT_EQ(m.gpu_utilization_ratio, std::nullopt);
  EXPECT_EQ(m.guard_runs, 3.0);
  EXPECT_EQ(m.guard_kills, 1.0);
  EXPECT_EQ(m.platform, "gb10");
  EXPECT_EQ(m.samples, 11u);
  EXPECT_EQ(ParseNodeMetrics("").samples, 0u);
  EXPECT_EQ(ParseNodeMetrics(std::string(200000, '{')).samples, 0u);
}

// A listening socket on 127.0.0.1 and its port; closed with the object.
struct Listener {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  uint16_t port = 0;
  Listener() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd, 4), 0);
    EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
    port = ntohs(a.sin_port);
  }
  ~Listener() { ::close(fd); }
  NodeUrl Url() const { return *ParseNodeUrl("127.0.0.1:" + std::to_string(port)); }
};

TEST(NodeMetrics, APeerThatNeverAnswersEndsAtTheDeadline) {
  Listener silent;  // accepted by the kernel's backlog, never read nor answered
  const auto start = std::chrono::steady_clock::now();
  auto r = FetchNodeMetrics(silent.Url(), std::chrono::milliseconds(300), 1 << 20);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(EnglishText(r.error().what), "no answer within 300 ms");
  EXPECT_LT(took, std::chrono::seconds(2));
}

TEST(NodeMetrics, AnAnswerPastTheCapIsRefusedAndAStatusIsNamed) {
  Listener big;
  std::thread server([&] {
    const int c = ::accept(big.fd, nullptr, nullptr);
    char buf[4096];
    (void)::recv(c, buf, sizeof buf, 0);
    const std::string head = "HTTP/1.1 200 OK\r\n\r\n";
    (void)::send(c, head.data(), head.size(), MSG_NOSIGNAL);
    const std::string chunk(65536, 'x');
    for (int i = 0; i < 64; ++i)
      if (::send(c, chunk.data(), chunk.size(), MSG_NOSIGNAL) < 0) break;
    ::close(c);
    const int d = ::accept(big.fd, nullptr, nullptr);
    (void)::recv(d, buf, sizeof buf, 0);
    const std::string missing = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
    (void)::send(d, missing.data(), missing.size(), MSG_NOSIGNAL);
    ::close(d);
  });
  auto r = FetchNodeMetrics(big.Url(), std::chrono::seconds(5), 100000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(EnglishText(r.error().what), "answer larger than 100000 bytes");
  r = FetchNodeMetrics(big.Url(), std::chrono::seconds(5), 100000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(EnglishText(r.error().what), "HTTP status 404");
  server.join();
}

TEST(NodeMetrics, ARefusedConnectionSaysSo) {
  uint16_t port = 0;
  {
    Listener gone;
    port = gone.port;
  }  // closed: nothing listens there now
  auto r = FetchNodeMetrics(*ParseNodeUrl("127.0.0.1:" + std::to_string(port)),
                            std::chrono::seconds(2), 1 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(EnglishText(r.error().what).find("connect"), std::string::npos)
      << EnglishText(r.error().what);
}

std::string AnswerError(const Result<std::string>& r) {
  return r.ok() ? "decoded: " + *r : EnglishText(r.error().what);
}

TEST(NodeMetrics, DecodesAChunkedAnswer) {
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n";
  auto r = HttpAnswerBody(head + "Transfer-Encoding: chunked\r\n\r\n" +
                              "5\r\nhello\r\n7;name=value\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n",
                          1000);
  EXPECT_EQ(AnswerError(r), "decoded: hello, world");
  // The header's name and value in any case; upper-case hex; "gzip, chunked" would be gzip.
  r = HttpAnswerBody(head + "transfer-encoding:  Chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n",
                     1000);
  EXPECT_EQ(AnswerError(r), "decoded: 0123456789");
  r = HttpAnswerBody(head + "Transfer-Encoding: chunked, gzip\r\n\r\n", 1000);
  EXPECT_EQ(AnswerError(r), "transfer coding 'gzip' is not read");
  // Without the header the body is as sent, chunk-like text included.
  r = HttpAnswerBody(head + "\r\n5\r\nhello\r\n0\r\n\r\n", 1000);
  EXPECT_EQ(AnswerError(r), "decoded: 5\r\nhello\r\n0\r\n\r\n");
}

TEST(NodeMetrics, RefusesHostileChunks) {
  const auto decode = [](std::string_view body, size_t max = 1000) {
    return AnswerError(DecodeChunked(body, max));
  };
  EXPECT_EQ(decode("\r\nhello\r\n0\r\n\r\n"), "bad chunk size");
  EXPECT_EQ(decode("-5\r\nhello\r\n0\r\n\r\n"), "bad chunk size");
  EXPECT_EQ(decode("0x5\r\nhello\r\n0\r\n\r\n"), "bad chunk size");
  EXPECT_EQ(decode("5 junk\r\nhello\r\n0\r\n\r\n"), "bad chunk size");
  // Sizes that overflow 64 bits, or come near it, are refused before any arithmetic.
  EXPECT_EQ(decode("10000000000000005\r\nhello\r\n"), "bad chunk size");
  EXPECT_EQ(decode("ffffffffffffffff\r\nhello\r\n"), "chunked body larger than 1000 bytes");
  EXPECT_EQ(decode("5\r\nhello\r\nfffffffffffffffd\r\nhello\r\n0\r\n\r\n"),
            "chunked body larger than 1000 bytes");
  // Over the cap across chunks, each under it.
  EXPECT_EQ(decode("3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n", 5), "chunked body larger than 5 bytes");
  // Cut short: in the size line, in the data, before its CRLF, before the last chunk.
  EXPECT_EQ(decode("5"), "chunked body cut short");
  EXPECT_EQ(decode("5\r\nhel"), "chunked body cut short");
  EXPECT_EQ(decode("5\r\nhello"), "chunked body cut short");
  EXPECT_EQ(decode("5\r\nhelloXY3\r\nabc\r\n0\r\n\r\n"), "chunked body cut short");
  EXPECT_EQ(decode("5\r\nhello\r\n"), "chunked body cut short");
  EXPECT_EQ(decode(""), "chunked body cut short");
  EXPECT_EQ(decode("0\r\n"), "decoded: ");
}

// A real HTTP/1.1 server that streams its page: Python's http.server writing the chunks
// itself, on loopback, one request, then it exits (and is reaped here either way).
TEST(NodeMetrics, ReadsAChunkedPageFromARealServer) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  const char* script = R"(
import http.server
class Page(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        for part in [b"# HELP headroom_memory_total_bytes MemTotal\n",
                     b"headroom_memory_total_bytes 1.28e+11\nheadroom_memory_avail",
                     b"able_bytes 6.4e+10\n"]:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
        self.wfile.write(b"0\r\n\r\n")
        self.close_connection = True
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Page)
print(server.server_address[1], flush=True)
server.timeout = 20
server.handle_request()
)";
  int out[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::execl("/usr/bin/python3", "python3", "-c", script, static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string port;
  pollfd p{out[0], POLLIN, 0};
  char c = 0;
  while (port.find('\n') == std::string::npos && ::poll(&p, 1, 10000) == 1 &&
         ::read(out[0], &c, 1) == 1) {
    port += c;
  }
  ::close(out[0]);
  Result<std::string> page = Error{Msg("no port from the server")};
  if (auto url = ParseNodeUrl("127.0.0.1:" + std::string(TrimBlanks(port)))) {
    page = FetchNodeMetrics(*url, std::chrono::seconds(10), 1 << 20);
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(page.ok()) << EnglishText(page.error().what) << " (port '" << port << "')";
  const NodeMetrics m = ParseNodeMetrics(*page);
  EXPECT_EQ(m.mem_total_bytes, 1.28e11);
  EXPECT_EQ(m.mem_available_bytes, 6.4e10);
  EXPECT_EQ(page->find("\r\n"), std::string::npos) << *page;
}

}  // namespace
}  // namespace headroom
