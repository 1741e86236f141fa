// Shell completions made from the commands' definitions (cli/help_docs.h): a bash script and
// a zsh function, in English (one script serves every user of the machine).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "cli/help_docs.h"

namespace headroom {

// A bash completion script (for bash-completion's completions/ directory, or `source`).
std::string RenderBashCompletion(std::span<const CommandDoc> docs,
                                 std::span<const std::string> model_names);

// A zsh completion function file (_headroom, for a directory on $fpath).
std::string RenderZshCompletion(std::span<const CommandDoc> docs,
                                std::span<const std::string> model_names);

// The completion script for `shell` ("bash" or "zsh"; the caller has checked which), with
// plan's models from the catalog.
std::string RenderCompletion(std::string_view shell, std::span<const CommandDoc> docs);

}  // namespace headroom
