// The guard group's per-job secret (docs/guard-group.md "Security"): read from a file only
// its owner can read, or taken from a value the CLI found (HEADROOM_GROUP_SECRET), or made
// by node rank 0's guard when none is given. The library reads no environment; the CLI
// passes the variable's value in.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace headroom::group {

// The secret in regular file `path`, one trailing newline dropped. Refused: not a regular
// file, owned by another user, readable or writable by group or others (any of mode 077),
// and a secret that CheckSecret refuses. The checks are made on the opened descriptor, so
// the file checked is the file read.
Result<std::string> ReadGroupSecretFile(const std::string& path);

// `value` as a secret (one trailing newline dropped), named `origin` in an error.
Result<std::string> GroupSecretFromValue(std::string_view value, std::string_view origin);

// A fresh secret: 32 bytes from getrandom(2), as 64 lower-case hex digits.
Result<std::string> GenerateGroupSecret();

// A fresh nonce, never 0: 8 bytes from getrandom(2). The coordinator's run nonce and a
// member's join challenge (group_message.h): only their freshness matters, not their secrecy.
Result<uint64_t> RandomNonce();

}  // namespace headroom::group
