#include "doctor/parallel_config.h"

#include <array>

namespace headroom {
namespace {

constexpr std::array<std::string_view, 6> kKeys = {"tensor_parallel",
                                                   "tensor_parallel_size",
                                                   "tensor_parallel_degree",
                                                   "tensor_model_parallel_size",
                                                   "tp_size",
                                                   "tp_degree"};
// A line longer than this is scanned only up to here (minified JSON excepted, such configs
// are short; the cap bounds the work on hostile input).
constexpr size_t kMaxLineBytes = 64 * 1024;
constexpr size_t kMaxSettings = 1000;

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

std::string Normalize(std::string_view word) {
  while (!word.empty() && (word.front() == '-' || word.front() == '_')) word.remove_prefix(1);
  std::string out;
  for (char c : word) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    out.push_back(c == '-' ? '_' : c);
  }
  return out;
}

bool IsKey(std::string_view normalized) {
  for (auto k : kKeys) {
    if (k == normalized) return true;
  }
  return false;
}

// The integer after a key: quotes and blanks, then ':' or '=' or a blank, then quotes and
// blanks, then up to 9 digits that end the value.
bool ValueAfter(std::string_view rest, int64_t* value) {
  size_t i = 0;
  auto skip = [&] {
    while (i < rest.size() &&
           (rest[i] == ' ' || rest[i] == '\t' || rest[i] == '"' || rest[i] == '\''))
      ++i;
  };
  const size_t before = i;
  skip();
  if (i < rest.size() && (rest[i] == ':' || rest[i] == '=')) {
    ++i;
  } else if (i == before) {
    return false;  // "tp_sizex" or "tp_size.x": not this key
  }
  skip();
  size_t digits = 0;
  int64_t v = 0;
  while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9') {
    if (++digits > 9) return false;
    v = v * 10 + (rest[i] - '0');
    ++i;
  }
  if (digits == 0) return false;
  if (i < rest.size() && (rest[i] == '.' || IsWordChar(rest[i]))) return false;  // "2.5", "2x"
  *value = v;
  return true;
}

}  // namespace

std::vector<ParallelSetting> ScanParallelSettings(std::string_view text) {
  std::vector<ParallelSetting> out;
  size_t line_no = 0;
  while (!text.empty() && out.size() < kMaxSettings) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.size() > kMaxLineBytes) line = line.substr(0, kMaxLineBytes);
    if (const size_t hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    size_t i = 0;
    while (i < line.size()) {
      if (!IsWordChar(line[i])) {
        ++i;
        continue;
      }
      const size_t start = i;
      while (i < line.size() && IsWordChar(line[i])) ++i;
      const std::string_view word = line.substr(start, i - start);
      if (word.size() > 64 || !IsKey(Normalize(word))) continue;
      int64_t value = 0;
      if (ValueAfter(line.substr(i), &value)) out.push_back({std::string(word), value, line_no});
    }
  }
  return out;
}

}  // namespace headroom
