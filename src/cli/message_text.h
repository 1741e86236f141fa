// The terminal's renderer of message values (base/message.h): the message's format in the
// user's language (gettext, cli/ is the only place that translates), strerror in the same
// language, nested messages likewise, text arguments with control characters escaped (a value
// from a file or a peer is shown, never obeyed by the terminal). A translation whose fields do not
// fit the arguments gives the English sentence, never an abort.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "base/message.h"

namespace headroom {

// `message` in the user's language (LC_MESSAGES), for the terminal.
std::string TranslatedText(const Message& message);

// "headroom: TEXT" and a line break on `err`, the text's own line breaks made blanks: one
// line per error (cli.h PrintError, the guardian's worker).
void PrintErrorLine(std::FILE* err, std::string_view text);

}  // namespace headroom
