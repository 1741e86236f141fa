#include "base/version.h"

namespace headroom {

std::string_view HeadroomVersion() { return HEADROOM_VERSION; }

}  // namespace headroom
