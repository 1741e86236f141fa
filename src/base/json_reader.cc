// Implementation notes: a hand-written scanner over the RFC 8259 grammar. Strings take a fast
// path (no escape: one assign of the raw bytes) and check UTF-8 with the table of RFC 3629
// section 4, which rejects overlong forms, surrogates and code points past U+10FFFF, as
// nlohmann::json does. Escaped surrogates must come in high-low pairs (nlohmann agrees;
// Python would accept a lone one, but it cannot be written as UTF-8). Offsets in messages
// are 0-based byte offsets into the text given.
#include "base/json_reader.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <utility>

namespace headroom {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Whether any of the 8 bytes at `p` needs a look in a string: '"', '\\', a control byte
// (< 0x20) or a byte >= 0x80. The usual SWAR tests ("Bit Twiddling Hacks", haszero and
// hasless): names in safetensors headers are ~50 plain bytes, checked here 8 at a time.
bool NeedsLook(const char* p) {
  uint64_t v = 0;
  std::memcpy(&v, p, 8);
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  auto has_zero = [](uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  const uint64_t quote = has_zero(v ^ (kOnes * '"'));
  const uint64_t backslash = has_zero(v ^ (kOnes * '\\'));
  const uint64_t control = (v - kOnes * 0x20) & ~v & kHigh;  // some byte < 0x20 (or >= 0x80)
  return (quote | backslash | control | (v & kHigh)) != 0;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Length of the valid UTF-8 sequence at s[p] (a byte >= 0x80), or 0 when it is not one.
size_t Utf8SequenceLength(std::string_view s, size_t p) {
  auto byte = [&](size_t k) -> unsigned { return k < s.size() ? (unsigned char)s[k] : 0u; };
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
    return byte(k) >= lo && byte(k) <= hi;
  };
  const unsigned c = byte(p);
  if (c >= 0xC2 && c <= 0xDF) return cont(p + 1) ? 2 : 0;
  if (c == 0xE0) return cont(p + 1, 0xA0) && cont(p + 2) ? 3 : 0;
  if (c == 0xED) return cont(p + 1, 0x80, 0x9F) && cont(p + 2) ? 3 : 0;  // no surrogates
  if (c >= 0xE1 && c <= 0xEF) return cont(p + 1) && cont(p + 2) ? 3 : 0;
  if (c == 0xF0) return cont(p + 1, 0x90) && cont(p + 2) && cont(p + 3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(p + 1) && cont(p + 2) && cont(p + 3) ? 4 : 0;
  if (c == 0xF4) return cont(p + 1, 0x80, 0x8F) && cont(p + 2) && cont(p + 3) ? 4 : 0;
  return 0;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Parses the 4 hex digits of a \u escape at s[p]; -1 when they are not hex.
int32_t Hex4(std::string_view s, size_t p) {
  if (p + 4 > s.size()) return -1;
  int32_t v = 0;
  for (size_t k = p; k < p + 4; ++k) {
    const int h = HexValue(s[k]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

}  // namespace

bool JsonReader::FailAt(Message what, size_t at) {
  // TRANSLATORS: {0} is what the JSON parser found wrong ("unexpected end of input").
  if (error_.empty()) error_ = Msg("{0} at byte {1}", std::move(what), at);
  return false;
}

// `what` is a message's format: a brace in it is doubled ("expected '{{'").
bool JsonReader::FailAt(std::string_view what, size_t at) { return FailAt(MsgFrom(what), at); }

bool JsonReader::Fail(std::string_view what) { return FailAt(what, pos_); }

bool JsonReader::Fail(Message what) { return FailAt(std::move(what), pos_); }

void JsonReader::SkipSpace() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
    ++pos_;
  }
}

JsonReader::Type JsonReader::Peek() {
  if (failed()) return Type::kNone;
  SkipSpace();
  if (pos_ >= text_.size()) return Type::kNone;
  const char c = text_[pos_];
  if (c == '{') return Type::kObject;
  if (c == '[') return Type::kArray;
  if (c == '"') return Type::kString;
  if (c == '-' || IsDigit(c)) return Type::kNumber;
  if (c == 't' || c == 'f') return Type::kBool;
  if (c == 'n') return Type::kNull;
  return Type::kNone;
}

bool JsonReader::Open(char open, char close) {
  if (failed()) return false;
  SkipSpace();
  if (pos_ >= text_.size() || text_[pos_] != open) {
    return Fail(open == '{' ? N_("expected '{{'") : N_("expected '['"));
  }
  if (depth_ == kMaxDepth) {
    depth_exceeded_ = true;
    return Fail(Msg("nesting deeper than {} levels", kMaxDepth));
  }
  ++pos_;
  ++depth_;
  first_[depth_] = true;
  close_[depth_] = close;
  return true;
}

bool JsonReader::BeginObject() { return Open('{', '}'); }
bool JsonReader::BeginArray() { return Open('[', ']'); }

bool JsonReader::Next(char close, bool member) {
  if (failed()) return false;
  if (depth_ == 0 || close_[depth_] != close) return Fail("internal: no open container");
  SkipSpace();
  if (pos_ >= text_.size()) return Fail(N_("unexpected end of input"));
  if (text_[pos_] == close) {
    // Only valid right after the opening bracket or a value, never after a comma: the
    // comma branch below consumes the comma and demands a member or element.
    ++pos_;
    --depth_;
    return false;
  }
  if (!first_[depth_]) {
    if (text_[pos_] != ',') {
      return Fail(close == '}' ? N_("expected ',' or '}}'") : N_("expected ',' or ']'"));
    }
    ++pos_;
    SkipSpace();
  }
  first_[depth_] = false;
  if (!member && Peek() == Type::kNone) {
    return Fail(pos_ < text_.size() ? N_("expected a value") : N_("unexpected end of input"));
  }
  return true;
}

bool JsonReader::NextMember(std::string* key) {
  if (!Next('}', true)) return false;
  if (pos_ >= text_.size()) return Fail(N_("unexpected end of input"));
  if (text_[pos_] != '"') return Fail(N_("expected a string key"));
  if (!ScanString(key)) return false;
  SkipSpace();
  if (pos_ >= text_.size() || text_[pos_] != ':') return Fail(N_("expected ':'"));
  ++pos_;
  SkipSpace();
  if (Peek() == Type::kNone) {
    return Fail(pos_ < text_.size() ? N_("expected a value") : N_("unexpected end of input"));
  }
  return true;
}

bool JsonReader::NextElement() { return Next(']', false); }

bool JsonReader::ScanEscape(size_t* p, std::string* out) {
  // *p is at the backslash.
  const size_t at = *p;
  if (at + 1 >= text_.size()) return FailAt("unexpected end of input in string", at);
  const char e = text_[at + 1];
  char plain = 0;
  switch (e) {
    case '"':
      plain = '"';
      break;
    case '\\':
      plain = '\\';
      break;
    case '/':
      plain = '/';
      break;
    case 'b':
      plain = '\b';
      break;
    case 'f':
      plain = '\f';
      break;
    case 'n':
      plain = '\n';
      break;
    case 'r':
      plain = '\r';
      break;
    case 't':
      plain = '\t';
      break;
    case 'u':
      break;
    default:
      return FailAt("invalid escape in string", at);
  }
  if (plain != 0) {
    if (out) out->push_back(plain);
    *p = at + 2;
    return true;
  }
  const int32_t hi = Hex4(text_, at + 2);
  if (hi < 0) return FailAt("invalid \\u escape in string", at);
  uint32_t cp = static_cast<uint32_t>(hi);
  size_t end = at + 6;
  if (hi >= 0xDC00 && hi <= 0xDFFF) return FailAt("lone low surrogate in string", at);
  if (hi >= 0xD800 && hi <= 0xDBFF) {
    const bool pair = end + 1 < text_.size() && text_[end] == '\\' && text_[end + 1] == 'u';
    const int32_t lo = pair ? Hex4(text_, end + 2) : -1;
    if (lo < 0xDC00 || lo > 0xDFFF) return FailAt("unpaired high surrogate in string", at);
    cp = 0x10000 + ((static_cast<uint32_t>(hi) - 0xD800) << 10) +
         (static_cast<uint32_t>(lo) - 0xDC00);
    end += 6;
  }
  if (out) AppendUtf8(cp, out);
  *p = end;
  return true;
}

bool JsonReader::ScanString(std::string* out) {
  // pos_ is at the opening quote.
  size_t p = pos_ + 1;
  size_t run = p;  // start of the bytes not yet copied to `out`
  bool escaped = false;
  if (out) out->clear();
  while (p < text_.size()) {
    if (p + 8 <= text_.size() && !NeedsLook(text_.data() + p)) {
      p += 8;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(text_[p]);
    if (c == '"') {
      if (out) {
        if (escaped) {
          out->append(text_.substr(run, p - run));
        } else {
          out->assign(text_.substr(run, p - run));
        }
      }
      pos_ = p + 1;
      return true;
    }
    if (c == '\\') {
      if (out) out->append(text_.substr(run, p - run));
      escaped = true;
      if (!ScanEscape(&p, out)) return false;
      run = p;
    } else if (c < 0x20) {
      return FailAt("control character in string", p);
    } else if (c >= 0x80) {
      const size_t n = Utf8SequenceLength(text_, p);
      if (n == 0) return FailAt("invalid UTF-8 in string", p);
      p += n;
    } else {
      ++p;
    }
  }
  return FailAt("unterminated string", pos_);
}

bool JsonReader::ReadString(std::string* out) {
  if (Peek() != Type::kString) return Fail(N_("expected a string"));
  return ScanString(out);
}

bool JsonReader::ReadNumber(std::string_view* literal) {
  if (Peek() != Type::kNumber) return Fail(N_("expected a number"));
  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  const size_t start = pos_;
  size_t p = pos_;
  auto digit = [&](size_t k) { return k < text_.size() && IsDigit(text_[k]); };
  if (text_[p] == '-') ++p;
  if (!digit(p)) return FailAt("invalid number", start);
  if (text_[p] == '0') {
    ++p;
  } else {
    while (digit(p)) ++p;
  }
  if (p < text_.size() && text_[p] == '.') {
    ++p;
    if (!digit(p)) return FailAt("invalid number", start);
    while (digit(p)) ++p;
  }
  if (p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
    ++p;
    if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) ++p;
    if (!digit(p)) return FailAt("invalid number", start);
    while (digit(p)) ++p;
  }
  if (literal) *literal = text_.substr(start, p - start);
  pos_ = p;
  return true;
}

bool JsonReader::ReadBool(bool* out) {
  if (Peek() != Type::kBool) return Fail(N_("expected true or false"));
  if (text_.substr(pos_, 4) == "true") {
    if (out) *out = true;
    pos_ += 4;
    return true;
  }
  if (text_.substr(pos_, 5) == "false") {
    if (out) *out = false;
    pos_ += 5;
    return true;
  }
  return Fail(N_("invalid literal"));
}

bool JsonReader::ReadNull() {
  if (Peek() != Type::kNull) return Fail(N_("expected null"));
  if (text_.substr(pos_, 4) != "null") return Fail(N_("invalid literal"));
  pos_ += 4;
  return true;
}

bool JsonReader::Skip() {
  switch (Peek()) {
    case Type::kObject:
      if (!BeginObject()) return false;
      while (NextMember(nullptr)) {
        if (!Skip()) return false;
      }
      return !failed();
    case Type::kArray:
      if (!BeginArray()) return false;
      while (NextElement()) {
        if (!Skip()) return false;
      }
      return !failed();
    case Type::kString:
      return ReadString(nullptr);
    case Type::kNumber:
      return ReadNumber(nullptr);
    case Type::kBool:
      return ReadBool(nullptr);
    case Type::kNull:
      return ReadNull();
    case Type::kNone:
      break;
  }
  if (failed()) return false;
  return Fail(pos_ < text_.size() ? N_("expected a value") : N_("unexpected end of input"));
}

bool JsonReader::Finish() {
  if (failed()) return false;
  if (depth_ != 0) return Fail("internal: Finish inside an open container");
  SkipSpace();
  if (pos_ != text_.size()) return Fail(N_("trailing characters after the value"));
  return true;
}

std::optional<int64_t> JsonInt64(std::string_view literal) {
  int64_t v = 0;
  const char* end = literal.data() + literal.size();
  const auto r = std::from_chars(literal.data(), end, v);
  if (r.ec != std::errc() || r.ptr != end || literal.empty()) return std::nullopt;
  return v;
}

std::optional<uint64_t> JsonUint64(std::string_view literal) {
  // from_chars for unsigned refuses a leading '-', which is what we want ("-0" included).
  uint64_t v = 0;
  const char* end = literal.data() + literal.size();
  const auto r = std::from_chars(literal.data(), end, v);
  if (r.ec != std::errc() || r.ptr != end || literal.empty()) return std::nullopt;
  return v;
}

std::string QuoteForMessage(std::string_view text, size_t max_bytes) {
  bool cut = false;
  if (text.size() > max_bytes) {
    size_t n = max_bytes;
    // Back off to the start of a UTF-8 sequence so the message stays valid UTF-8.
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
    text = text.substr(0, n);
    cut = true;
  }
  std::string out = "\"";
  for (char c : text) out.push_back(static_cast<unsigned char>(c) < 0x20 || c == 0x7F ? '?' : c);
  out += cut ? "...\"" : "\"";
  return out;
}

FileText::FileText(FileText&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, 0)) {}

FileText& FileText::operator=(FileText&& other) noexcept {
  if (this != &other) {
    if (mapped_ > 0) ::munmap(data_, mapped_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
  }
  return *this;
}

FileText::~FileText() {
  if (mapped_ > 0) ::munmap(data_, mapped_);
}

Result<FileText> ReadJsonFileText(const std::filesystem::path& path, uint64_t max_bytes) {
  const std::string name = path.string();
  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return ErrnoError(name + ": open");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return ErrnoError(name + ": fstat");
  if (!S_ISREG(st.st_mode)) return Error{Msg("{}: not a regular file", name)};
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) {
    return Error{Msg("{}: file is {} bytes, over the {}-byte limit", name, size, max_bytes)};
  }
  FileText out;
  if (size == 0) return out;
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (map == MAP_FAILED) return ErrnoError(name + ": mmap");
  out.data_ = static_cast<char*>(map);
  out.mapped_ = size;
  while (out.size_ < size) {
    const ssize_t n =
        ::pread(fd, out.data_ + out.size_, size - out.size_, static_cast<off_t>(out.size_));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(name + ": read");
    if (n == 0) break;  // the file shrank after fstat: parse what is there
    out.size_ += static_cast<size_t>(n);
  }
  return out;
}

}  // namespace headroom
