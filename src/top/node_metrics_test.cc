// top --node's three parts: the URL, the metrics page read leniently, and a bounded fetch
// against sockets this test makes (one that never answers, one that answers too much).
#include "top/node_metrics.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

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

}  // namespace
}  // namespace headroom
