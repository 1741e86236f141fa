// Implementation notes.
//  - The only file that includes toml++, header-only (TOML_HEADER_ONLY) so the binary
//    needs no run-time library, and without exceptions (TOML_EXCEPTIONS 0): a syntax error
//    comes back as a value and no exception leaves this file.
//  - Bytes are checked before toml++ sees them (UTF-8, no NUL) so the error names the line
//    in our words; toml++ checks them again.
//  - toml++'s tables are ordered by key, not by line: entries are sorted by line so the
//    error reported is the first in the file, whatever the keys are called.
//  - Depth: toml++ bounds nested inline values (TOML_MAX_NESTED_VALUES, 256), but a dotted
//    header such as [a.a.a...] nests one table per dot, and the tree is freed recursively.
//    A line with more than kMaxDotsPerLine dots outside strings is refused before parsing;
//    every key we know has at most one.
//  - toml++ 3.3 has undefined behaviour on most non-ASCII BMP code points (ShiftBmp says
//    where and how they are kept from it), and its internal checks are assumptions under
//    NDEBUG (the note at the #include); both found by fuzz/config_fuzz.cc.
#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
// Under NDEBUG toml++ 3.3 turns its internal checks into __builtin_assume (with clang;
// g++ 12 has no such builtin and ignores them), and some can be false on hostile input:
// a table header "[%" reaches parse_key's assumption, found by fuzz/config_fuzz.cc. Seen
// without NDEBUG they expand to TOML_ASSERT, defined here as nothing: the parser then
// takes the error path it has for those cases, with either compiler.
#pragma push_macro("NDEBUG")
#undef NDEBUG
#define TOML_ASSERT(expr) static_assert(true)
#include <toml++/toml.h>
#pragma pop_macro("NDEBUG")

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/message.h"
#include "base/utf8.h"
#include "config/config_toml.h"

namespace headroom {
namespace {

constexpr int kMaxDotsPerLine = 64;

// The 1-based line of byte `offset`.
int LineOf(std::string_view text, size_t offset) {
  return 1 + static_cast<int>(std::count(text.begin(),
                                         text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// The offset of the first byte that is NUL or breaks UTF-8 (overlong forms, surrogates and
// code points past U+10FFFF included); npos when there is none.
size_t FirstBadByte(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b == 0) return i;
    if (b < 0x80) {
      ++i;
      continue;
    }
    size_t n = 0;
    uint32_t cp = 0, min = 0;
    if ((b & 0xE0) == 0xC0)
      n = 1, cp = b & 0x1F, min = 0x80;
    else if ((b & 0xF0) == 0xE0)
      n = 2, cp = b & 0x0F, min = 0x800;
    else if ((b & 0xF8) == 0xF0)
      n = 3, cp = b & 0x07, min = 0x10000;
    else
      return i;
    if (i + n >= s.size()) return i;  // cut short by the end of the text
    for (size_t k = 1; k <= n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (c & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += n + 1;
  }
  return std::string_view::npos;
}

// What a lexer of TOML's strings and comments finds outside them, before toml++ parses.
struct OutsideProblem {
  int line = 0;            // 0: none
  bool non_ascii = false;  // a byte >= 0x80 outside strings and comments
  bool quote_run = false;  // six or more quotes closing a multi-line string
  // else: more than kMaxDotsPerLine dots on the line
};

// How many `quote` characters follow one another from `i` on.
size_t QuoteRun(std::string_view s, size_t i, char quote) {
  size_t n = 0;
  while (i + n < s.size() && s[i + n] == quote) ++n;
  return n;
}

// Scans `s` as TOML lexes strings ("...", """...""", '...', '''...''', with backslash
// escapes in the basic ones) and comments (# to the end of the line), and reports the first
// line with a byte >= 0x80 outside them (never valid TOML: bare keys and whitespace are
// ASCII) or more than kMaxDotsPerLine dots outside them.
OutsideProblem ScanOutsideStrings(std::string_view s) {
  enum class State { kOutside, kComment, kBasic, kMlBasic, kLiteral, kMlLiteral };
  State state = State::kOutside;
  int line = 1, dots = 0;
  auto at = [&](size_t i, std::string_view what) { return s.substr(i, what.size()) == what; };
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      dots = 0;
      // A newline ends a comment and (unterminated, an error toml++ reports) a one-line string.
      if (state == State::kComment || state == State::kBasic || state == State::kLiteral)
        state = State::kOutside;
      continue;
    }
    switch (state) {
      case State::kOutside:
        if (c == '#') {
          state = State::kComment;
        } else if (c == '"') {
          state = at(i, "\"\"\"") ? State::kMlBasic : State::kBasic;
          if (state == State::kMlBasic) i += 2;
        } else if (c == '\'') {
          state = at(i, "\'\'\'") ? State::kMlLiteral : State::kLiteral;
          if (state == State::kMlLiteral) i += 2;
        } else if (static_cast<unsigned char>(c) >= 0x80) {
          return {line, true};
        } else if (c == '.' && ++dots > kMaxDotsPerLine) {
          return {line, false};
        }
        break;
      case State::kComment:
        break;
      case State::kBasic:
      case State::kMlBasic:
        if (c == '\\' && i + 1 < s.size()) {
          // An escape, or a line-ending backslash and the blanks after it: not the end.
          size_t j = i + 1;
          while (j < s.size() && (s[j] == ' ' || s[j] == '\t' || s[j] == '\r' || s[j] == '\n')) {
            if (s[j] == '\n') ++line, dots = 0;
            ++j;
          }
          if (state == State::kBasic &&
              s.substr(i + 1, j - i - 1).find('\n') != std::string_view::npos) {
            state = State::kOutside;  // a one-line string cut by a newline: toml++ stops there
          }
          i = j == i + 1 ? i + 1 : j - 1;
        } else if (state == State::kBasic && c == '"') {
          state = State::kOutside;
        } else if (state == State::kMlBasic && at(i, "\"\"\"")) {
          // Up to two quotes before the closing three belong to the string; six or more
          // in a row is no TOML, and which of them toml++ would close on is not ours to guess.
          const size_t run = QuoteRun(s, i, '"');
          if (run > 5) return {line, false, true};
          state = State::kOutside;
          i += run - 1;
        }
        break;
      case State::kLiteral:
        if (c == '\'') state = State::kOutside;
        break;
      case State::kMlLiteral:
        if (at(i, "\'\'\'")) {
          const size_t run = QuoteRun(s, i, '\'');
          if (run > 5) return {line, false, true};
          state = State::kOutside;
          i += run - 1;
        }
        break;
    }
  }
  return {};
}

// toml++ 3.3 asks of each non-ASCII code point in some places whether it is Unicode
// whitespace, and its table for that reaches __builtin_unreachable for most of the BMP
// (U+00A1-U+0499, U+2CEE-U+30E7, U+FB26-U+FEFE: accented letters, kana, CJK punctuation),
// even inside strings (after a line-ending backslash) and on error paths that scan across
// quotes; found by fuzz/config_fuzz.cc. So toml++ never sees a BMP code point above ASCII:
// each U+0080-U+FFFF goes in as U+F0000 + it (plane 15, private use, which the table
// answers at once) and comes back out of every string we take from toml++. Code points of
// plane 15 in the file itself are refused, so the way back is exact. Line numbers do not
// change (no newline is touched).
constexpr char32_t kBmpShift = 0xF0000;

// Decodes the sequence at `s[i]` (valid UTF-8, checked before); sets `len`.
char32_t DecodeAt(std::string_view s, size_t i, size_t* len) {
  size_t pos = i;
  const char32_t cp = DecodeUtf8(s, pos);
  *len = pos - i;
  return cp;
}

// The line of the first plane-15 code point in `s` (valid UTF-8); 0 when none.
int FirstPlane15Line(std::string_view s) {
  int line = 1;
  for (size_t i = 0, n = 0; i < s.size(); i += n) {
    const char32_t cp = DecodeAt(s, i, &n);
    if (cp == '\n') ++line;
    if (cp >= kBmpShift && cp <= kBmpShift + 0xFFFF) return line;
  }
  return 0;
}

std::string ShiftBmp(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 2);
  for (size_t i = 0, n = 0; i < s.size(); i += n) {
    const char32_t cp = DecodeAt(s, i, &n);
    if (cp >= 0x80 && cp <= 0xFFFF)
      AppendUtf8(out, kBmpShift + cp);
    else
      out.append(s.substr(i, n));
  }
  return out;
}

// The way back, for every string toml++ hands us (it is valid UTF-8: toml++ checks).
std::string UnshiftBmp(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0, n = 0; i < s.size(); i += n) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80 || (b & 0xC0) == 0x80 || (b & 0xF8) == 0xF8) {  // ASCII, or not a lead byte
      out += s[i];
      n = 1;
      continue;
    }
    const char32_t cp = DecodeAt(s, i, &n);
    if (i + n > s.size()) n = s.size() - i;
    if (cp >= kBmpShift && cp <= kBmpShift + 0xFFFF)
      AppendUtf8(out, cp - kBmpShift);
    else
      out.append(s.substr(i, n));
  }
  return out;
}

std::string_view TypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

// A value of each kind, for "must be a string, such as ...".
std::string_view ExampleOf(SettingKind kind) {
  switch (kind) {
    case SettingKind::kPath:
      return "~/.local/state/headroom/journal.db";
    case SettingKind::kSize:
      return "4GiB";
    case SettingKind::kLevel:
      return "8%";
    case SettingKind::kDuration:
      return "30s";
    case SettingKind::kPlatform:
      return "auto";
    case SettingKind::kWatts:
      break;
  }
  return "100";
}

int LineOf(const toml::key& key) { return static_cast<int>(key.source().begin.line); }

struct Entry {
  int line = 0;
  const toml::key* key = nullptr;
  const toml::node* node = nullptr;
};

// The table's entries in file order.
std::vector<Entry> InFileOrder(const toml::table& table) {
  std::vector<Entry> out;
  for (const auto& [key, node] : table) out.push_back({LineOf(key), &key, &node});
  std::stable_sort(out.begin(), out.end(),
                   [](const Entry& a, const Entry& b) { return a.line < b.line; });
  return out;
}

class Checker {
 public:
  explicit Checker(std::string_view path) { file_.path = std::string(path); }

  Result<ConfigFile> Check(const toml::table& root) {
    for (const Entry& e : InFileOrder(root)) {
      const std::string name = UnshiftBmp(e.key->str());
      if (name == "schema_version") {
        if (auto ok = SchemaVersion(e); !ok) return ok.error();
        continue;
      }
      if (const SettingInfo* info = Find("", name)) {
        if (auto ok = Value(*info, e); !ok) return ok.error();
        continue;
      }
      if (IsTable(name)) {
        const toml::table* table = e.node->as_table();
        if (!table) {
          return Fail(e.line,
                      Msg("'{}' must be a table ([{}]), not {}", name, name, TypeName(*e.node)));
        }
        for (const Entry& inner : InFileOrder(*table)) {
          const std::string inner_name = UnshiftBmp(inner.key->str());
          const SettingInfo* info = Find(name, inner_name);
          if (!info) return Fail(inner.line, Unknown(name, inner_name, *inner.node));
          if (auto ok = Value(*info, inner); !ok) return ok.error();
        }
        continue;
      }
      return Fail(e.line, Unknown("", name, *e.node));
    }
    std::stable_sort(file_.settings.begin(), file_.settings.end(),
                     [](const FileSetting& a, const FileSetting& b) { return a.line < b.line; });
    return std::move(file_);
  }

 private:
  static const SettingInfo* Find(std::string_view table, std::string_view key) {
    for (const SettingInfo& info : AllSettings()) {
      if (info.table == table && info.key == key) return &info;
    }
    return nullptr;
  }
  static bool IsTable(std::string_view name) {
    return std::any_of(AllSettings().begin(), AllSettings().end(),
                       [&](const SettingInfo& i) { return !i.table.empty() && i.table == name; });
  }

  Error Fail(int line, Message what) const {
    return Error{Message("{}:{}: {}", {file_.path, int64_t{line},
                                       std::make_shared<const Message>(std::move(what))})};
  }
  Error Fail(int line, const std::string& what) const { return Fail(line, Message::Literal(what)); }

  static Message Unknown(std::string_view table, std::string_view key, const toml::node& node) {
    const std::string near = NearestSettingName(table, key);
    Message what;
    if (table.empty()) {
      what = node.is_table() ? Msg("unknown table [{}]", OneLineText(key))
                             : Msg("unknown key '{}'", OneLineText(key));
    } else {
      what = Msg("unknown key '{0}' in [{1}]", OneLineText(key), table);
    }
    if (near.empty()) return what;
    return Message("{}{}", {std::make_shared<const Message>(std::move(what)),
                            std::make_shared<const Message>(Msg(" (did you mean {}?)", near))});
  }

  Result<bool> SchemaVersion(const Entry& e) {
    const auto* v = e.node->as_integer();
    if (!v)
      return Fail(e.line, Msg("schema_version must be an integer, not {}", TypeName(*e.node)));
    const int64_t version = v->get();
    if (version > kConfigSchemaVersion) {
      return Fail(e.line,
                  Msg("schema_version {} is newer than this headroom reads ({}): upgrade headroom, "
                      "or write the file for version {}",
                      version, kConfigSchemaVersion, kConfigSchemaVersion));
    }
    if (version < 1)
      return Fail(e.line,
                  Msg("schema_version {} is not a version (this headroom reads 1)", version));
    file_.schema_version = version;
    return true;
  }

  Result<bool> Value(const SettingInfo& info, const Entry& e) {
    const std::string key = SettingKey(info);
    std::string text;
    if (info.kind == SettingKind::kWatts) {
      if (const auto* i = e.node->as_integer())
        text = fmt::format("{}", i->get());
      else if (const auto* f = e.node->as_floating_point())
        text = fmt::format("{}", f->get());
      else
        return Fail(e.line, Msg("{} must be a number of watts, not {}", key, TypeName(*e.node)));
    } else if (const auto* s = e.node->as_string()) {
      text = UnshiftBmp(s->get());
    } else {
      return Fail(e.line, Msg("{} must be a string, such as \"{}\", not {}", key,
                              ExampleOf(info.kind), TypeName(*e.node)));
    }
    if (info.id == SettingId::kJournal && !text.empty() && text.front() != '/' && text != "~" &&
        text.rfind("~/", 0) != 0) {
      return Fail(e.line, Msg("{}: '{}' is relative: give an absolute path or one starting with ~/",
                              key, OneLineText(text)));
    }
    Settings scratch;
    if (auto ok = SetSettingFromText(scratch, info.id, text, SettingOrigin::kFile, ""); !ok) {
      return Fail(e.line,
                  Message("{}: {}", {key, std::make_shared<const Message>(ErrorLine(ok.error()))}));
    }
    file_.settings.push_back({info.id, std::move(text), e.line});
    return true;
  }

  ConfigFile file_;
};

}  // namespace

Result<ConfigFile> ParseConfigToml(std::string_view text, std::string_view path) {
  if (text.size() > kMaxConfigFileBytes) {
    return Error{Msg("{}: larger than {} bytes (a configuration file is a few hundred)", path,
                     kMaxConfigFileBytes)};
  }
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a byte order mark
  if (const size_t bad = FirstBadByte(text); bad != std::string_view::npos) {
    const auto b = static_cast<unsigned char>(text[bad]);
    return Error{b == 0 ? Msg("{}:{}: a NUL byte", path, LineOf(text, bad))
                        : Msg("{}:{}: not UTF-8 (byte 0x{:02x})", path, LineOf(text, bad), b)};
  }
  if (const OutsideProblem p = ScanOutsideStrings(text); p.line > 0) {
    if (p.non_ascii)
      return Error{Msg("{}:{}: a non-ASCII character outside a string or comment", path, p.line)};
    if (p.quote_run)
      return Error{Msg("{}:{}: six or more quotes in a row end a multi-line string", path, p.line)};
    return Error{Msg("{}:{}: more than {} dots in one line: keys nest too deeply", path, p.line,
                     kMaxDotsPerLine)};
  }
  if (const int line = FirstPlane15Line(text); line > 0) {
    return Error{
        Msg("{}:{}: a code point of plane 15 (U+F0000-U+FFFFF, private use), which headroom "
            "does not read",
            path, line)};
  }
  const std::string shifted = ShiftBmp(text);
  toml::parse_result parsed = toml::parse(shifted, path);
  if (!parsed) {
    const toml::parse_error& e = parsed.error();
    return Error{fmt::format("{}:{}: {}", path, e.source().begin.line,
                             OneLineText(UnshiftBmp(e.description()), 200))};
  }
  return Checker(path).Check(parsed.table());
}

}  // namespace headroom
