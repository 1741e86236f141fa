// The dynamic loader's last error, in English.
//
// glibc translates dlerror()'s text when it is asked for it (LC_MESSAGES), and that text
// cannot be rendered again later in another language, the way an errno can. The libraries'
// open errors end up in files (watch's CSV header, --json) as well as on the terminal, so
// the text is taken in the C locale, for this thread only, and kept as a third party's
// literal text inside the translated sentence (po/README.md, "Errors").
#pragma once

#include <string>

namespace headroom {

// dlerror()'s text in the C locale, or "unknown dynamic loader error" when it has none.
std::string DlErrorText();

}  // namespace headroom
