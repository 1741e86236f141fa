// The terminal's renderer of message values (base/message.h): the message's format in the
// user's language (gettext, cli/ is the only place that translates), strerror in the same
// language, nested messages likewise, text arguments with control characters escaped (a value
// from a file or a peer is shown, never obeyed by the terminal). A translation whose fields do not
// fit the arguments gives the English sentence, never an abort.
#pragma once

#include <string>

#include "base/message.h"

namespace headroom {

// `message` in the user's language (LC_MESSAGES), for the terminal.
std::string TranslatedText(const Message& message);

}  // namespace headroom
