// The zh_TW catalog and helpers for the tests that run the real binary in Traditional
// Chinese (i18n_cli_test.cc: the screens; i18n_records_test.cc: what a command records while
// it prints Chinese). The expected text is read from the catalog the build merged,
// build/po/zh_TW.po, never written in the tests.
//
// LC_ALL, LC_MESSAGES and LANGUAGE are removed from each child's environment (glibc's
// putenv("NAME") unsets NAME), so only the variables a case sets choose its language.
// Skipped when the zh_TW.UTF-8 locale or the catalog is missing (scripts/install-deps makes
// both).
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <clocale>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "base/display_width.h"
#include "run_cli.h"
#include "testing_files.h"

namespace headroom::i18n_cli {

using testing::CliResult;
using testing::RunCli;

inline const std::string kFixtures = testing::FixturePath("");
inline const std::string kIdle = kFixtures + "gb10-idle";
inline const std::string kCatalog = std::string(HEADROOM_BINARY_DIR) + "/po/zh_TW.po";

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Whether `text` holds a character of the zh_TW translation: a CJK ideograph or CJK or
// full-width punctuation, the characters a terminal draws two columns wide. Data may hold
// other non-ASCII characters (a sensor's "°C").
inline bool HasCjk(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    const size_t n = (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (n != 0 && DisplayWidth(std::string_view(text).substr(i, n)) == 2) return true;
  }
  return false;
}

inline std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lines of `text` that start with `prefix`.
inline std::vector<std::string> LinesStartingWith(const std::string& text,
                                                  const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  }
  return out;
}

// The merged catalog's translations, msgid -> msgstr (plural entries by their singular).
inline std::map<std::string, std::string> ReadCatalog(const std::string& path) {
  std::ifstream in(path);
  std::map<std::string, std::string> out;
  std::string line, msgid, msgstr, *field = nullptr;
  const auto flush = [&] {
    if (!msgid.empty()) out[msgid] = msgstr;
    msgid.clear();
    msgstr.clear();
    field = nullptr;
  };
  const auto unquote = [](const std::string& q) {
    std::string s;
    for (size_t i = q.find('"') + 1; i + 1 < q.size(); ++i) {
      if (q[i] == '\\' && i + 2 < q.size()) {
        const char c = q[++i];
        s += c == 'n' ? '\n' : c == 't' ? '\t' : c;
      } else {
        s += q[i];
      }
    }
    return s;
  };
  while (std::getline(in, line)) {
    if (line.empty()) {
      flush();
    } else if (line.rfind("msgid_plural ", 0) == 0) {
      field = nullptr;
    } else if (line.rfind("msgid ", 0) == 0) {
      field = &msgid;
      *field = unquote(line);
    } else if (line.rfind("msgstr ", 0) == 0 || line.rfind("msgstr[0] ", 0) == 0) {
      field = &msgstr;
      *field = unquote(line);
    } else if (line.rfind("msgstr[", 0) == 0) {
      field = nullptr;
    } else if (line[0] == '"' && field) {
      *field += unquote(line);
    }
  }
  flush();
  return out;
}

// The environment of a child that speaks `vars` only.
inline std::vector<std::string> Locale(std::vector<std::string> vars) {
  std::vector<std::string> env = {"LC_ALL", "LC_MESSAGES", "LANGUAGE", "LANG"};
  env.insert(env.end(), vars.begin(), vars.end());
  return env;
}
inline const std::vector<std::string> kChinese = Locale({"LANG=zh_TW.UTF-8"});
inline const std::vector<std::string> kEnglish = Locale({"LANG=C"});

inline CliResult Headroom(const std::vector<std::string>& args,
                          const std::vector<std::string>& env) {
  return RunCli(args, 20000, env);
}

inline std::vector<std::string> With(std::vector<std::string> a,
                                     const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class I18nCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (locale_t zh = newlocale(LC_ALL_MASK, "zh_TW.UTF-8", static_cast<locale_t>(nullptr))) {
      freelocale(zh);
      has_locale_ = true;
    }
    catalog_ = ReadCatalog(kCatalog);
  }
  void SetUp() override {
    if (!has_locale_)
      GTEST_SKIP() << "the zh_TW.UTF-8 locale is not installed (scripts/install-deps generates it)";
    if (catalog_.empty())
      GTEST_SKIP() << "no merged catalog at " << kCatalog << " (gettext's msgcat/msgfmt missing?)";
  }
  // The translation of `msgid`; a test that asks for one the catalog lacks fails here.
  static std::string Zh(const std::string& msgid) {
    const auto it = catalog_.find(msgid);
    if (it == catalog_.end() || it->second.empty()) {
      ADD_FAILURE() << "not in " << kCatalog << ": " << msgid;
      return "(untranslated: " + msgid + ")";
    }
    return it->second;
  }
  // The translation of a format `msgid` filled with `args`, as TrFormat does.
  template <typename... Args>
  static std::string ZhFormat(const std::string& msgid, const Args&... args) {
    return fmt::vformat(Zh(msgid), fmt::make_format_args(args...));
  }

  static inline bool has_locale_ = false;
  static inline std::map<std::string, std::string> catalog_;
};

}  // namespace headroom::i18n_cli
