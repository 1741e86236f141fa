// Implementation notes: moved from cli/watch_cmd.cc unchanged. poll() wakes every 100 ms to
// look at `stop`; the reads are 64 KiB, so a fast writer is drained in few calls.
#include "watch/job_tee.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "watch/log_tee.h"

namespace headroom {

void WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a closed terminal: the bytes are dropped, the log still has them
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

void TeeJobOutput(const TeeFds& fds_in, DurableLines& log, const std::atomic<bool>& stop) {
  LogTee tees[2];
  int fds[2] = {fds_in.out_read, fds_in.err_read};
  const int to[2] = {fds_in.out_write, fds_in.err_write};
  std::string lines;
  std::vector<char> buf(64 * 1024);
  std::optional<std::chrono::steady_clock::time_point> drain_until;
  while (fds[0] >= 0 || fds[1] >= 0) {
    if (stop.load() && !drain_until)
      drain_until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    if (drain_until && std::chrono::steady_clock::now() > *drain_until) break;
    pollfd p[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
    if (::poll(p, 2, 100) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i] < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::read(fds[i], buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[i]);
        fds[i] = -1;
        continue;
      }
      const std::string_view bytes(buf.data(), static_cast<size_t>(n));
      WriteAll(to[i], bytes);
      lines.clear();
      tees[i].Feed(bytes, std::chrono::system_clock::now(), &lines);
      if (!lines.empty()) (void)log.Append(lines);
    }
  }
  for (int i = 0; i < 2; ++i) {
    lines.clear();
    tees[i].Finish(&lines);
    if (!lines.empty()) (void)log.Append(lines);
    if (fds[i] >= 0) ::close(fds[i]);
  }
}

}  // namespace headroom
