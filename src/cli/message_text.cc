// Implementation notes: only the choice of format and strerror differ from EnglishText
// (base/message.cc renders both), so the two renderers cannot drift apart.
#include "cli/message_text.h"

#include <cstring>

#include "base/result.h"
#include "cli/i18n.h"

namespace headroom {
namespace {

std::string TranslatedFormat(const Message& m) {
  if (m.plural()) return TrPlural(m.id().c_str(), m.plural()->c_str(), m.n());
  // An empty msgid would return the catalog's header entry (Tr guards it too).
  if (m.id().empty()) return "";
  return Tr(m.id().c_str());
}

// strerror follows LC_MESSAGES, so it comes out in the user's language too.
std::string LocalErrnoText(int value) { return std::strerror(value); }

constexpr MessageLanguage kUserLanguage{&TranslatedFormat, &LocalErrnoText, true};

}  // namespace

std::string TranslatedText(const Message& message) { return RenderMessage(message, kUserLanguage); }

void PrintErrorLine(std::FILE* err, std::string_view text) {
  std::string line(text);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(err, "headroom: %s\n", line.c_str());
}

}  // namespace headroom
