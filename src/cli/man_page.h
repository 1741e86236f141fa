// Man pages (roff, man(7) macros) made from the commands' definitions (cli/help_docs.h):
// headroom-NAME(1) for each command and headroom(1), in the language of the messages.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/help_docs.h"

namespace headroom {

// The man page of one command, headroom-NAME(1). `date` goes into .TH ("2026-12-01").
std::string RenderCommandManPage(const CommandDoc& doc, std::string_view version,
                                 std::string_view date);

// headroom(1): the command list, exit statuses, environment, files, and the per-command pages.
std::string RenderMainManPage(std::span<const CommandDoc> docs, std::string_view version,
                              std::string_view date);

// One file `help --man-dir` writes.
struct ManPageFile {
  std::string name;  // "headroom.1", "headroom-plan.1"
  std::string text;  // roff
};

// The pages for --man-dir: headroom.1 first when `with_main` (every command was asked for),
// then headroom-NAME.1 for each doc.
std::vector<ManPageFile> ManPageFiles(std::span<const CommandDoc> docs, bool with_main,
                                      std::string_view version, std::string_view date);

// Escapes text for roff: backslashes, leading dots and quotes, and '-' as \- where it
// means a minus or an option dash.
std::string RoffEscape(std::string_view text);

// RoffEscape for running text, with a zero-width break point (\:) after each CJK character
// that a line may end at: groff finds no spaces in Chinese to break a line at, and would
// run it past the page's width ("can't break line"). No break point comes before closing
// punctuation (，。）...) or after opening punctuation (（「...).
std::string RoffText(std::string_view text);

}  // namespace headroom
