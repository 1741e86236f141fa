#include "export/http.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

namespace headroom {
namespace {

TEST(ExportHttp, ParsesRequestHeads) {
  int status = 0;
  auto r = ParseRequestHead(
      "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nACCEPT:  application/openmetrics-text \r\n\r\n",
      &status);
  ASSERT_TRUE(r) << EnglishText(r.error().what);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(r->method, "GET");
  EXPECT_EQ(r->path, "/metrics");
  EXPECT_EQ(r->accept, "application/openmetrics-text");
  struct Case {
    const char* head;
    int status;
  };
  for (const Case& c :
       {Case{"GET /metrics\r\n\r\n", 400}, Case{"GET  /metrics HTTP/1.1\r\n\r\n", 400},
        Case{"GET metrics HTTP/1.1\r\n\r\n", 400}, Case{"get /metrics HTTP/1.1\r\n\r\n", 400},
        Case{"GET /metrics HTTP/2.0\r\n\r\n", 505}, Case{"GET /a\x01 HTTP/1.1\r\n\r\n", 400},
        Case{"GET /metrics HTTP/1.1\r\nno colon\r\n\r\n", 400}, Case{"", 400},
        Case{"GET /metrics HTTP/1.1", 400}}) {
    int s = 0;
    EXPECT_FALSE(ParseRequestHead(c.head, &s)) << c.head;
    EXPECT_EQ(s, c.status) << c.head;
  }
}

TEST(ExportHttp, ResponsesCarryLengthAndCloseAndHeadHasNoBody) {
  const std::string full = FormatResponse({404, "text/plain; charset=utf-8", "nope\n"}, false);
  EXPECT_TRUE(full.starts_with("HTTP/1.1 404 Not Found\r\n"));
  EXPECT_NE(full.find("Content-Length: 5\r\n"), std::string::npos);
  EXPECT_NE(full.find("Connection: close\r\n"), std::string::npos);
  EXPECT_TRUE(full.ends_with("\r\n\r\nnope\n"));
  const std::string head = FormatResponse({200, "text/plain", "body"}, true);
  EXPECT_TRUE(
      head.ends_with("Content-Length: 4\r\nConnection: close\r\nCache-Control: no-store\r\n"
                     "X-Content-Type-Options: nosniff\r\n\r\n"))
      << head;
}

TEST(ExportHttp, ListenAddressesAndLoopback) {
  auto a = ParseListenAddress("127.0.0.1:9464");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->first, "127.0.0.1");
  EXPECT_EQ(a->second, 9464);
  EXPECT_EQ(ParseListenAddress("[::1]:0")->first, "::1");
  EXPECT_EQ(ParseListenAddress(":9100")->first, "127.0.0.1");
  EXPECT_EQ(ParseListenAddress("localhost:1")->first, "localhost");
  for (const char* bad : {"9464", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "::1:80",
                          "host.example:80", "[::1]80", "1.2.3.4:80x"}) {
    auto r = ParseListenAddress(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_TRUE(EnglishText(r.error().what).starts_with("--listen: "))
          << EnglishText(r.error().what);
    }
  }
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("192.168.1.5"));
  EXPECT_FALSE(IsLoopbackHost("::"));
}

TEST(ExportHttp, MetricsUrlBracketsAnIpv6Host) {
  EXPECT_EQ(MetricsUrl("127.0.0.1", 9464), "http://127.0.0.1:9464/metrics");
  EXPECT_EQ(MetricsUrl("localhost", 80), "http://localhost:80/metrics");
  EXPECT_EQ(MetricsUrl("::1", 9464), "http://[::1]:9464/metrics");
}

TEST(ExportHttp, StopSignalsArriveThroughTheDescriptor) {
  sigset_t before;
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, nullptr, &before), 0);
  const int fd = OpenStopSignalFd();
  ASSERT_GE(fd, 0);
  sigset_t blocked;
  pthread_sigmask(SIG_SETMASK, nullptr, &blocked);
  EXPECT_EQ(sigismember(&blocked, SIGTERM), 1);
  EXPECT_EQ(sigismember(&blocked, SIGINT), 1);
  EXPECT_EQ(sigismember(&blocked, SIGHUP), 1);
  ASSERT_EQ(raise(SIGHUP), 0);  // pending, not delivered: this thread blocks it
  signalfd_siginfo info{};
  ASSERT_EQ(read(fd, &info, sizeof info), static_cast<ssize_t>(sizeof info));
  EXPECT_EQ(info.ssi_signo, static_cast<uint32_t>(SIGHUP));
  close(fd);
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

}  // namespace
}  // namespace headroom
