// Implementation notes.
//
// kernel/sched/psi.c (psi_show) prints each line as
//   "%s avg10=%lu.%02lu avg60=%lu.%02lu avg300=%lu.%02lu total=%llu\n"
// so a value is a plain decimal with no sign or exponent. The parser is still lenient about
// layout (runs of spaces or tabs, CRLF, key order, unknown keys) and strict about values: a
// "some" line with a missing or unparsable field is an error rather than a silent 0, because
// 0 would read as "no pressure", the one wrong answer that matters.
#include "sys/psi.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <string>

#include "base/text.h"

namespace headroom {
namespace {

// Splits off the next blank-separated token of `s`; empty when none is left.
std::string_view NextToken(std::string_view& s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  size_t n = 0;
  while (n < s.size() && !IsBlank(s[n])) ++n;
  const std::string_view token = s.substr(0, n);
  s.remove_prefix(n);
  return token;
}

template <typename T>
bool ParseNumber(std::string_view text, T* out) {
  // from_chars takes no leading '+', and for unsigned types no '-'.
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size() && !text.empty();
}

Error ParseError(std::string_view name, const std::string& reason) {
  return Error{"parse(" + std::string(name) + " line): " + reason};
}

// The fields after "some" or "full". All four known keys are required.
Result<PsiLine> ParseLine(std::string_view name, std::string_view rest) {
  PsiLine line;
  bool seen[4] = {false, false, false, false};
  for (std::string_view token = NextToken(rest); !token.empty(); token = NextToken(rest)) {
    const size_t eq = token.find('=');
    if (eq == std::string_view::npos) continue;  // not key=value: ignore, like unknown keys
    const std::string_view key = token.substr(0, eq);
    const std::string_view value = token.substr(eq + 1);
    double* avg = nullptr;
    int index = -1;
    if (key == "avg10") {
      avg = &line.avg10, index = 0;
    } else if (key == "avg60") {
      avg = &line.avg60, index = 1;
    } else if (key == "avg300") {
      avg = &line.avg300, index = 2;
    } else if (key == "total") {
      if (!ParseNumber(value, &line.total_us)) {
        return ParseError(name, "bad total '" + std::string(value) + "'");
      }
      seen[3] = true;
      continue;
    } else {
      continue;  // a key a later kernel may add
    }
    // A percentage: finite and not negative. from_chars also accepts "inf" and "nan",
    // which the kernel never prints.
    if (!ParseNumber(value, avg) || !std::isfinite(*avg) || *avg < 0) {
      return ParseError(name, "bad " + std::string(key) + " '" + std::string(value) + "'");
    }
    seen[index] = true;
  }
  static constexpr const char* kNames[4] = {"avg10", "avg60", "avg300", "total"};
  for (int i = 0; i < 4; ++i) {
    if (!seen[i]) return ParseError(name, std::string("no ") + kNames[i]);
  }
  return line;
}

}  // namespace

Result<Psi> ParsePsi(std::string_view text) {
  std::optional<PsiLine> some;
  std::optional<PsiLine> full;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view rest = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    const std::string_view name = NextToken(rest);
    std::optional<PsiLine>* slot = name == "some" ? &some : name == "full" ? &full : nullptr;
    if (slot == nullptr || slot->has_value()) continue;  // unknown or repeated line
    auto line = ParseLine(name, rest);
    if (!line) return line.error();
    *slot = *line;
  }
  if (!some) return Error{"parse(psi): no 'some' line"};
  return Psi{*some, full};
}

Result<std::optional<Psi>> ReadMemoryPsi(const SysRoot& root) {
  constexpr std::string_view kRelative = "proc/pressure/memory";
  auto text = root.ReadFile(kRelative, /*max_bytes=*/64 * 1024);
  if (!text) {
    const int err = text.error().errno_value;
    if (err == ENOENT || err == EOPNOTSUPP) return std::optional<Psi>();
    return text.error();
  }
  auto psi = ParsePsi(*text);
  if (!psi) return InContext("cannot read " + root.Path(kRelative).string(), psi.error());
  return std::optional<Psi>(*psi);
}

}  // namespace headroom
