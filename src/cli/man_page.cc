// Implementation notes.
// - Man pages are plain man(7) macros (.TH .SH .TP .PP .nf): man-db, mandoc and groff all
//   read them. Paragraphs come from the app's description: a blank line starts a new one, a
//   paragraph of lines indented by two spaces is shown as written (usage lines), and one that
//   starts "exit status:" (or its translation) becomes the EXIT STATUS section.
// - The pages are in the language of the messages (gettext): the descriptions come from the
//   apps, which are built with Tr(), and the headings and headroom(1)'s text are translated
//   here. The build writes the English pages and one set per language in po/LINGUAS.
#include "cli/man_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "base/text.h"
#include "base/utf8.h"
#include "cli/i18n.h"

namespace headroom {
namespace {

// An option's value on a man page, by ValueKind.
constexpr std::string_view kPlaceholders[] = {" \\fIVALUE\\fR", " \\fIFILE\\fR", " \\fIDIR\\fR"};

// Lines of `text` (no trailing empty line).
std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      if (start < text.size()) lines.emplace_back(text.substr(start));
      break;
    }
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// Paragraphs: runs of non-blank lines.
std::vector<std::vector<std::string>> Paragraphs(std::string_view text) {
  std::vector<std::vector<std::string>> paragraphs(1);
  for (auto& line : Lines(text)) {
    if (line.find_first_not_of(" \t") == std::string::npos) {
      if (!paragraphs.back().empty()) paragraphs.emplace_back();
      continue;
    }
    paragraphs.back().push_back(std::move(line));
  }
  if (paragraphs.back().empty()) paragraphs.pop_back();
  return paragraphs;
}

bool IsVerbatim(const std::vector<std::string>& paragraph) {
  for (const auto& line : paragraph) {
    if (line.rfind("  ", 0) != 0) return false;
  }
  return true;
}

// The length of the "exit status:" that begins a description's last paragraph (English, or
// the translation, which every translated description begins that paragraph with); 0 when the
// paragraph is another.
size_t ExitStatusPrefix(const std::vector<std::string>& paragraph) {
  if (paragraph.empty()) return 0;
  // TRANSLATORS: exactly the words that begin the "exit status: ..." paragraph of every
  // command's help in the translation: the man pages find that paragraph by them.
  for (const std::string_view prefix :
       {std::string_view("exit status:"), std::string_view(Tr("exit status:"))}) {
    if (paragraph.front().rfind(prefix, 0) == 0) return prefix.size();
  }
  return 0;
}

// A man page's section heading, in the language of the messages.
std::string Heading(const char* english) {
  return std::string(".SH ") + RoffEscape(Tr(english)) + "\n";
}

// Text with roff font escapes for option names: "--batch" -> \fB\-\-batch\fR.
std::string OptionLabel(const nlohmann::json& opt) {
  std::string label;
  if (opt.value("positional", false)) {
    label = fmt::format("\\fI{}\\fR", RoffEscape(opt["names"][0].get<std::string>()));
  } else {
    std::vector<std::string> parts;
    for (const auto& n : opt["names"])
      parts.push_back("\\fB" + RoffEscape(n.get<std::string>()) + "\\fR");
    label = JoinWords(parts, ", ");
    if (opt.value("value", false))
      label += kPlaceholders[static_cast<int>(ValueKindOf(opt["names"].back().get<std::string>()))];
  }
  if (opt.value("repeatable", false)) label += " ...";
  return label;
}

void RenderDescription(std::string& out, const nlohmann::json& spec, std::string* exit_status) {
  for (const auto& paragraph : Paragraphs(spec.value("description", ""))) {
    if (const size_t prefix = ExitStatusPrefix(paragraph); prefix > 0 && exit_status != nullptr) {
      *exit_status = JoinWords(paragraph, " ").substr(prefix);
      continue;
    }
    if (IsVerbatim(paragraph)) {
      out += ".PP\n.nf\n";
      for (const auto& line : paragraph) out += RoffEscape(line.substr(2)) + "\n";
      out += ".fi\n";
    } else {
      out += ".PP\n" + RoffText(JoinWords(paragraph, " ")) + "\n";
    }
  }
}

void RenderOptions(std::string& out, const nlohmann::json& spec) {
  for (const auto& opt : spec["options"]) {
    out += ".TP\n" + OptionLabel(opt) + "\n" + RoffText(opt.value("description", "")) + "\n";
  }
}

std::string UsageLine(const std::string& command, const nlohmann::json& spec) {
  std::string line = "\\fBheadroom " + RoffEscape(command) + "\\fR [\\fIoptions\\fR]";
  if (!spec["subcommands"].empty()) line += " [\\fIsubcommand\\fR]";
  for (const auto& opt : spec["options"]) {
    if (!opt.value("positional", false)) continue;
    const std::string name = RoffEscape(opt["names"][0].get<std::string>());
    line += opt.value("repeatable", false) ? fmt::format(" [\\-\\- \\fI{}\\fR ...]", name)
                                           : fmt::format(" [\\fI{}\\fR]", name);
  }
  return line;
}

std::string ManHeader(std::string_view title, std::string_view version, std::string_view date) {
  return fmt::format(".TH {} 1 \"{}\" \"headroom {}\" \"headroom manual\"\n", title, date, version);
}

// A finished page. One with text beyond ASCII (a translation) is set ragged-right: Chinese has
// no spaces for groff to stretch, so a justified line of it cannot be adjusted.
std::string FinishPage(std::string page) {
  const bool ascii = std::all_of(page.begin(), page.end(),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (!ascii) page.insert(page.find('\n') + 1, ".ad l\n");
  return page;
}

}  // namespace

std::string RoffEscape(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = false;
    switch (c) {
      case '\\':
        out += "\\e";
        break;
      case '-':
        out += "\\-";
        break;
      case '\n':
        out += '\n';
        line_start = true;
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

// Ideographs, kana, hangul, CJK punctuation and the full-width forms.
bool IsCjk(char32_t c) {
  return (c >= 0x2E80 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7AF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) ||
         (c >= 0xFF00 && c <= 0xFFEF) || (c >= 0x20000 && c <= 0x3FFFF);
}

// Punctuation a line must not begin with, and punctuation it must not end with.
bool NoBreakBefore(char32_t c) {
  return std::u32string_view(U"，。、；：！？）」』】〉》〕…・ー,.;:!?)]}%").find(c) !=
         std::u32string_view::npos;
}
bool NoBreakAfter(char32_t c) {
  return std::u32string_view(U"（「『【〈《〔([{").find(c) != std::u32string_view::npos;
}

}  // namespace

std::string RoffText(std::string_view text) {
  // The escapes are ASCII, so the break points go into the escaped text.
  const std::string escaped = RoffEscape(text);
  std::string out;
  size_t pos = 0;
  while (pos < escaped.size()) {
    const size_t start = pos;
    const char32_t c = DecodeUtf8(escaped, pos);
    out.append(escaped, start, pos - start);
    if (!IsCjk(c) || NoBreakAfter(c) || pos >= escaped.size()) continue;
    size_t next_pos = pos;
    const char32_t next = DecodeUtf8(escaped, next_pos);
    if (!NoBreakBefore(next) && next != ' ' && next != '\n') out += "\\:";
  }
  return out;
}

std::string RenderCommandManPage(const CommandDoc& doc, std::string_view version,
                                 std::string_view date) {
  std::string upper = "HEADROOM-" + doc.name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string out = ManHeader(RoffEscape(upper), version, date);
  // TRANSLATORS: the headings of a man page's sections (man(7)); English pages write them in
  // capitals.
  out += Heading(N_("NAME")) + "headroom\\-" + RoffEscape(doc.name) + " \\- " +
         RoffText(doc.summary) + "\n";
  out += Heading(N_("SYNOPSIS")) + UsageLine(doc.name, doc.spec) + "\n";
  out += Heading(N_("DESCRIPTION"));
  std::string exit_status;
  RenderDescription(out, doc.spec, &exit_status);
  out += Heading(N_("OPTIONS"));
  RenderOptions(out, doc.spec);
  out += ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\n" + RoffText(Tr("print the help and exit")) + "\n";
  if (!doc.spec["subcommands"].empty()) {
    out += Heading(N_("SUBCOMMANDS"));
    for (const auto& sub : doc.spec["subcommands"]) {
      out += ".SS " + RoffEscape(sub["name"].get<std::string>()) + "\n";
      RenderDescription(out, sub, nullptr);
      RenderOptions(out, sub);
    }
  }
  if (const std::string footer = doc.spec.value("footer", ""); !footer.empty()) {
    out += Heading(N_("NOTES")) + ".PP\n" + RoffText(footer) + "\n";
  }
  if (!exit_status.empty()) {
    out += Heading(N_("EXIT STATUS")) + RoffText(TrimBlanks(exit_status)) + "\n";
  }
  out += Heading(N_("SEE ALSO")) + "\\fBheadroom\\fR(1)\n";
  return FinishPage(std::move(out));
}

namespace {

// headroom(1)'s ENVIRONMENT and FILES: each a term (roff) and its text (translated).
struct TaggedParagraph {
  const char* term;
  const char* text;
};
constexpr TaggedParagraph kEnvironment[] = {
    {"\\fBHEADROOM_JOURNAL\\fR",
     N_("the journal (SQLite) of guarded runs, sweeps, watch runs and ladders")},
    {"\\fBHEADROOM_CONFIG\\fR",
     N_("the configuration file (default $XDG_CONFIG_HOME/headroom/config.toml); see headroom "
        "config")},
    {"\\fBHEADROOM_NVML_LIB\\fR, \\fBHEADROOM_CUDA_LIB\\fR",
     N_("load these instead of libnvidia-ml.so.1 and libcuda.so.1")},
    {"\\fBLANG\\fR, \\fBLC_MESSAGES\\fR, \\fBLANGUAGE\\fR",
     N_("the language of messages (English by default; zh_TW is translated); --json output is "
        "never translated")},
};
constexpr TaggedParagraph kFiles[] = {
    {"\\fI$XDG_CONFIG_HOME/headroom/config.toml\\fR",
     N_("the settings users set once (default ~/.config/headroom/config.toml)")},
    {"\\fI$XDG_STATE_HOME/headroom/journal.db\\fR",
     N_("the journal (default ~/.local/state/headroom/journal.db)")},
};

std::string TaggedParagraphs(std::span<const TaggedParagraph> items) {
  std::string out;
  for (const auto& [term, text] : items)
    out += fmt::format(".TP\n{}\n{}\n", term, RoffText(Tr(text)));
  return out;
}

}  // namespace

std::string RenderMainManPage(std::span<const CommandDoc> docs, std::string_view version,
                              std::string_view date) {
  std::string out = ManHeader("HEADROOM", version, date);
  out += Heading(N_("NAME")) + "headroom \\- " +
         RoffText(Tr("keep long ML training jobs alive on unified-memory machines")) + "\n";
  // The placeholders stay English, as in --help's usage line.
  out += Heading(N_("SYNOPSIS")) +
         "\\fBheadroom\\fR \\fIcommand\\fR [\\fIoptions\\fR]\n.br\n"
         "\\fBheadroom help\\fR [\\fIcommand\\fR]\n.br\n\\fBheadroom \\-\\-version\\fR\n";
  out += Heading(N_("DESCRIPTION")) + ".PP\n" +
         RoffText(Tr("headroom plans, guards, sweeps and watches ML training jobs on machines "
                     "whose CPU and GPU "
                     "share one memory pool (NVIDIA DGX Spark, GB10) and on any Linux machine with "
                     "or without a "
                     "GPU. The memory budget is MemAvailable from /proc/meminfo, never nvidia-smi. "
                     "Sizes: GB = "
                     "1e9 bytes, GiB = 2^30 bytes.")) +
         "\n.PP\n" +
         RoffText(Tr("headroom reads and explains; it changes system state (signals, cache "
                     "flushes) only where "
                     "a command is asked for exactly that.")) +
         "\n";
  out += Heading(N_("COMMANDS"));
  for (const auto& d : docs) {
    out += fmt::format(".TP\n\\fB{}\\fR\n{} (\\fB\\%headroom\\-{}\\fR(1))\n", RoffEscape(d.name),
                       RoffText(d.summary), RoffEscape(d.name));
  }
  out +=
      Heading(N_("EXIT STATUS")) + ".PP\n" +
      RoffText(Tr(
          "0 success; 1 a negative answer (plan: does not fit); 2 usage or input error. Some "
          "commands add their own (guard: the job's status, 99 when the guard killed it; doctor: 0 "
          "ready, 1 ready with warnings, 2 blocked, 3 usage error): see each command's page.")) +
      "\n";
  out += Heading(N_("ENVIRONMENT")) + TaggedParagraphs(kEnvironment);
  out += Heading(N_("FILES")) + TaggedParagraphs(kFiles);
  out += Heading(N_("SEE ALSO"));
  std::vector<std::string> refs;
  for (const auto& d : docs) refs.push_back("\\fBheadroom\\-" + RoffEscape(d.name) + "\\fR(1)");
  out += JoinWords(refs, ",\n") + "\n";
  return FinishPage(std::move(out));
}

std::vector<ManPageFile> ManPageFiles(std::span<const CommandDoc> docs, bool with_main,
                                      std::string_view version, std::string_view date) {
  std::vector<ManPageFile> files;
  if (with_main) files.push_back({"headroom.1", RenderMainManPage(docs, version, date)});
  for (const auto& doc : docs)
    files.push_back({"headroom-" + doc.name + ".1", RenderCommandManPage(doc, version, date)});
  return files;
}

}  // namespace headroom
