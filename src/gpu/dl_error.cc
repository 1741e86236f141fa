#include "gpu/dl_error.h"

#include <dlfcn.h>
#include <locale.h>

namespace headroom {

std::string DlErrorText() {
  // The C locale for this thread while dlerror() formats its text; glibc's messages follow
  // the thread's locale (uselocale), so no other thread sees a change.
  const locale_t c_locale = ::newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr));
  const locale_t previous = c_locale != nullptr ? ::uselocale(c_locale) : nullptr;
  const char* text = ::dlerror();
  std::string out = text != nullptr ? text : "unknown dynamic loader error";
  if (c_locale != nullptr) {
    ::uselocale(previous);
    ::freelocale(c_locale);
  }
  return out;
}

}  // namespace headroom
