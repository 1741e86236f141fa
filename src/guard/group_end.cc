#include "guard/group_end.h"

namespace headroom {

std::string_view GroupEndCauseName(GroupEnd::Cause cause) {
  switch (cause) {
    case GroupEnd::Cause::kPeerMemory:
      return "peer-memory";
    case GroupEnd::Cause::kPeerFailed:
      return "peer-failed";
    case GroupEnd::Cause::kPeerLost:
      break;
  }
  return "peer-lost";
}

}  // namespace headroom
