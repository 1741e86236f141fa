// What `headroom --version` says: the release (CMakeLists.txt project VERSION) and the git
// revision the binary was built from (build/generated/git_revision.cc, rewritten by
// cmake/git_revision.cmake whenever `git describe` changes).
#pragma once

#include <string_view>

namespace headroom {

// "0.1.0".
std::string_view HeadroomVersion();

// `git describe --always --dirty` of the source tree at build time ("41af4a7c0d1e",
// "v0.1.0-3-g41af4a7c0d1e-dirty"), the HEADROOM_GIT_REVISION CMake variable when set (a
// tarball build), or "unknown".
std::string_view GitRevision();

}  // namespace headroom
