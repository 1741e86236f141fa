// Which interpreter flags of a Python command keep `guard --hooks` out (docs/companion.md,
// "Without code changes"). The hooks are a sitecustomize the guard puts on the job's
// PYTHONPATH; CPython runs it from the site module. `-S` skips the site module, `-E` ignores
// the PYTHON* variables (PYTHONPATH with them) and `-I` implies `-E`, so under any of them the
// companion is never wired in and the job runs as if --hooks had not been given.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace headroom {

// The first of -S, -E, -I that `command` gives its Python interpreter ("-S", "-E" or "-I",
// also when combined, as in -IS or -Ic CODE), or nullopt: when the command is not a Python
// interpreter (its program's name is python, python3, python3.12, ..., possibly after
// `env [NAME=VALUE ...]`), or the flags stop before one (a script, -c, -m, - or --). The
// options are read as CPython's own parser reads them (short options clustered, -W, -X, -c
// and -m taking the rest of the word or the next word, --check-hash-based-pycs its value).
std::optional<std::string> PythonFlagSkippingHooks(const std::vector<std::string>& command);

}  // namespace headroom
