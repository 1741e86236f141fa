// Implementation notes: the file is opened with OpenInput (regular files only, O_NONBLOCK so
// a FIFO cannot hang the guard), then fstat'd and read through the same descriptor. The
// size bound is the codec's kMaxSecretBytes plus a newline.
#include "group/group_secret.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include "base/safe_file.h"
#include "group/group_message.h"

namespace headroom::group {
namespace {

std::string_view DropNewline(std::string_view value) {
  if (value.ends_with('\n')) value.remove_suffix(1);
  if (value.ends_with('\r')) value.remove_suffix(1);
  return value;
}

}  // namespace

Result<std::string> GroupSecretFromValue(std::string_view value, std::string_view origin) {
  const std::string_view secret = DropNewline(value);
  if (auto ok = CheckSecret(secret); !ok) return InContext(std::string(origin), ok.error());
  return std::string(secret);
}

Result<std::string> ReadGroupSecretFile(const std::string& path) {
  auto fd = OpenInput(path);
  if (!fd) return fd.error();
  struct stat st {};
  if (fstat(fd->get(), &st) != 0) return ErrnoError(Msg("fstat({})", path));
  if (st.st_uid != geteuid()) {
    return Error(Msg("{}: owned by uid {}, not by this user: a group secret must be yours", path,
                     static_cast<unsigned>(st.st_uid)));
  }
  if ((st.st_mode & 077) != 0) {
    return Error(Msg("{}: mode {:04o} lets group or others at the group secret: chmod 600 it", path,
                     static_cast<unsigned>(st.st_mode & 07777)));
  }
  std::string bytes;
  std::array<char, 1024> chunk{};
  while (bytes.size() <= kMaxSecretBytes + 2) {
    const ssize_t n = read(fd->get(), chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(Msg("read({})", path));
    if (n == 0) break;
    bytes.append(chunk.data(), static_cast<size_t>(n));
  }
  return GroupSecretFromValue(bytes, path);
}

namespace {

Result<bool> FillRandom(unsigned char* bytes, size_t size) {
  size_t got = 0;
  while (got < size) {
    const ssize_t n = getrandom(bytes + got, size - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(Msg("getrandom({} bytes)", size));
    got += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Result<uint64_t> RandomNonce() {
  for (;;) {
    std::array<unsigned char, 8> raw{};
    if (auto ok = FillRandom(raw.data(), raw.size()); !ok) return ok.error();
    uint64_t nonce = 0;
    for (const unsigned char b : raw) nonce = (nonce << 8) | b;
    if (nonce != 0) return nonce;
  }
}

Result<std::string> GenerateGroupSecret() {
  std::array<unsigned char, 32> raw{};
  if (auto ok = FillRandom(raw.data(), raw.size()); !ok) return ok.error();
  constexpr std::string_view kHex = "0123456789abcdef";
  std::string secret;
  for (const unsigned char b : raw) {
    secret.push_back(kHex[b >> 4]);
    secret.push_back(kHex[b & 0xf]);
  }
  return secret;
}

}  // namespace headroom::group
