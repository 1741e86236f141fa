// JsonReader: a strict pull reader of JSON (RFC 8259) over a string_view, for the files that
// model/ takes from outside: config.json, safetensors headers, model.safetensors.index.json.
//
// Why not nlohmann::json here: its SAX parser took 10 ms for 30 safetensors headers of 60 KB
// (1.8 MB, g++ -O2 on the build machine), the whole budget for planning a sharded 70B
// checkpoint, and its DOM costs about 16 bytes per input byte on a hostile `[1,1,1,...]`.
// This reader checks the grammar, UTF-8, escapes and nesting depth as it goes, allocates
// only for the strings the caller asks for, and reports the byte offset of the first
// problem. fuzz/json_reader_fuzz.cc holds it to nlohmann::json::accept: both must accept
// the same texts (below the depth cap).
//
// Use: Peek() the type, then Begin/Next for containers, Read* for scalars, Skip() for values
// not wanted, Finish() at the end. The first error sticks: every later call returns false.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace headroom {

class JsonReader {
 public:
  enum class Type { kObject, kArray, kString, kNumber, kBool, kNull, kNone };
  // Real configs nest 3-4 levels; the cap bounds Skip's recursion and hostile inputs.
  static constexpr int kMaxDepth = 64;

  explicit JsonReader(std::string_view text) : text_(text) {}

  // The type of the next value, judged by its first byte; kNone at the end, on a byte that
  // cannot start a value, or after an error. Sets no error.
  Type Peek();

  // Objects: BeginObject(), then `while (NextMember(&key)) { read or Skip the value }`.
  // NextMember returns false at the closing brace (consumed) or on an error; `key` may be
  // null to skip the key unread.
  bool BeginObject();
  bool NextMember(std::string* key);
  // Arrays: BeginArray(), then `while (NextElement()) { read or Skip the element }`.
  bool BeginArray();
  bool NextElement();

  bool ReadString(std::string* out);           // decoded to UTF-8; out may be null
  bool ReadNumber(std::string_view* literal);  // the literal as written; may be null
  bool ReadBool(bool* out);                    // out may be null
  bool ReadNull();
  bool Skip();    // any one value, containers included
  bool Finish();  // only whitespace may follow the top-level value

  bool failed() const { return !error_.empty(); }
  bool depth_exceeded() const { return depth_exceeded_; }
  // "expected ':' at byte 17" (0-based offset into the text), or empty when all is well.
  const Message& error() const { return error_; }

 private:
  bool Fail(std::string_view what);  // `what`: a literal marked N_
  bool Fail(Message what);
  bool FailAt(std::string_view what, size_t at);
  bool FailAt(Message what, size_t at);
  void SkipSpace();
  bool Open(char open, char close);
  bool Next(char close, bool member);
  bool ScanString(std::string* out);
  bool ScanEscape(size_t* p, std::string* out);

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
  bool first_[kMaxDepth + 1] = {};  // per open container: no member read yet
  char close_[kMaxDepth + 1] = {};  // per open container: '}' or ']'
  bool depth_exceeded_ = false;
  Message error_;
};

// A JSON number literal as an integer: nullopt for fractions, exponents ("4096.0", "1e3")
// and values outside the type.
std::optional<int64_t> JsonInt64(std::string_view literal);
std::optional<uint64_t> JsonUint64(std::string_view literal);

// Text from outside (a tensor name, a value) made safe for a one-line message: in double
// quotes, control bytes as '?', cut at `max_bytes` on a UTF-8 boundary with "...".
std::string QuoteForMessage(std::string_view text, size_t max_bytes = 80);

// The bytes of a file read whole, held in a private anonymous mapping that one mmap call
// fills (MAP_POPULATE). Why not a std::string: on the build VM, first-touch page faults made
// reading a 1.4 MB model.safetensors.index.json into a fresh std::string cost 7-9 ms, and
// 2.6 ms this way. (Mapping the file itself would be faster still, but a file truncated
// while mapped raises SIGBUS.)
class FileText {
 public:
  FileText() = default;
  FileText(FileText&& other) noexcept;
  FileText& operator=(FileText&& other) noexcept;
  FileText(const FileText&) = delete;
  FileText& operator=(const FileText&) = delete;
  ~FileText();

  std::string_view text() const { return {data_, size_}; }

 private:
  friend Result<FileText> ReadJsonFileText(const std::filesystem::path&, uint64_t);
  char* data_ = nullptr;
  size_t size_ = 0;    // bytes read
  size_t mapped_ = 0;  // bytes mapped (0: nothing to unmap)
};

// Reads a whole JSON file of at most `max_bytes`. Opens with O_NONBLOCK and refuses anything
// but a regular file, so a FIFO or a device named config.json cannot hang the reader.
// Errors: "<path>: open: <reason>", "<path>: not a regular file", "<path>: file is N bytes,
// over the M-byte limit".
Result<FileText> ReadJsonFileText(const std::filesystem::path& path, uint64_t max_bytes);

}  // namespace headroom
