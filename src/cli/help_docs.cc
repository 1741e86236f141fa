// Implementation notes.
// - The spec is read off CLI11's own objects (names, descriptions, whether an option takes a
//   value), the same ones App::help() formats, so a flag added to a command appears in its
//   --help, its man page and both completions with no second list to update.
// - Man pages are plain man(7) macros (.TH .SH .TP .PP .nf): man-db, mandoc and groff all
//   read them. Paragraphs come from the app's description: a blank line starts a new one, a
//   paragraph of lines indented by two spaces is shown as written (usage lines), and one that
//   starts "exit status:" (or its translation) becomes the EXIT STATUS section.
// - The pages are in the language of the messages (gettext): the descriptions come from the
//   apps, which are built with Tr(), and the headings and headroom(1)'s text are translated
//   here. The build writes the English pages and one set per language in po/LINGUAS.
// - Completions: which options take a file name is decided by the option's name (PATH-like
//   names: --journal, --root, --out, ...); the rest complete nothing after them, which is
//   what bash and zsh users expect for a size or a duration.
#include "cli/help_docs.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>

#include "base/text.h"
#include "base/utf8.h"
#include "cli/i18n.h"

namespace headroom {
namespace {

using nlohmann::json;

// Options whose value is a path, completed with file names; --root and --logs are folders.
bool TakesPath(std::string_view long_name) {
  static constexpr std::string_view kPathOptions[] = {
      "--journal",  "--state",  "--out",  "--events", "--log",
      "--samples",  "--report", "--csv",  "--config", "--nvml-lib",
      "--cuda-lib", "--python", "--root", "--logs",   "-o"};
  for (const auto name : kPathOptions) {
    if (long_name == name) return true;
  }
  return false;
}

bool TakesDirectory(std::string_view long_name) {
  return long_name == "--root" || long_name == "--logs";
}

std::vector<std::string> OptionNames(const CLI::Option& opt) {
  std::vector<std::string> names;
  for (const auto& s : opt.get_snames()) names.push_back("-" + s);
  for (const auto& l : opt.get_lnames()) names.push_back("--" + l);
  return names;
}

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

std::string Join(const std::vector<std::string>& lines, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += sep;
    out += lines[i];
  }
  return out;
}

// Text with roff font escapes for option names: "--batch" -> \fB\-\-batch\fR.
std::string OptionLabel(const json& opt) {
  std::string label;
  if (opt.value("positional", false)) {
    label = fmt::format("\\fI{}\\fR", RoffEscape(opt["names"][0].get<std::string>()));
  } else {
    std::vector<std::string> parts;
    for (const auto& n : opt["names"])
      parts.push_back("\\fB" + RoffEscape(n.get<std::string>()) + "\\fR");
    label = Join(parts, ", ");
    if (opt.value("value", false)) {
      const std::string last = opt["names"].back().get<std::string>();
      label += TakesDirectory(last) ? " \\fIDIR\\fR"
               : TakesPath(last)    ? " \\fIFILE\\fR"
                                    : " \\fIVALUE\\fR";
    }
  }
  if (opt.value("repeatable", false)) label += " ...";
  return label;
}

void RenderDescription(std::string& out, const json& spec, std::string* exit_status) {
  for (const auto& paragraph : Paragraphs(spec.value("description", ""))) {
    if (const size_t prefix = ExitStatusPrefix(paragraph); prefix > 0 && exit_status != nullptr) {
      *exit_status = Join(paragraph, " ").substr(prefix);
      continue;
    }
    if (IsVerbatim(paragraph)) {
      out += ".PP\n.nf\n";
      for (const auto& line : paragraph) out += RoffEscape(line.substr(2)) + "\n";
      out += ".fi\n";
    } else {
      out += ".PP\n" + RoffText(Join(paragraph, " ")) + "\n";
    }
  }
}

void RenderOptions(std::string& out, const json& spec) {
  for (const auto& opt : spec["options"]) {
    out += ".TP\n" + OptionLabel(opt) + "\n" + RoffText(opt.value("description", "")) + "\n";
  }
}

std::string UsageLine(const std::string& command, const json& spec) {
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

// Single-quoted for the shell: ' becomes '\''.
std::string ShellQuote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

// Text for a zsh _arguments description in [...]: no brackets or colons, one line.
std::string ZshDescription(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '[')
      out += '(';
    else if (c == ']')
      out += ')';
    else if (c == ':')
      out += ' ';
    else if (c == '\n')
      out += ' ';
    else if (c == '\\')
      out += "\\\\";
    else
      out += c;
  }
  if (out.size() > 120) out = out.substr(0, 117) + "...";
  return out;
}

std::string WordList(const json& options, bool with_values_only) {
  std::vector<std::string> words;
  for (const auto& opt : options) {
    if (opt.value("positional", false)) continue;
    if (with_values_only && !opt.value("value", false)) continue;
    for (const auto& n : opt["names"]) words.push_back(n.get<std::string>());
  }
  return Join(words, " ");
}

// `case` arms for one level of bash completion: options of the app and its subcommands.
void BashOptionCases(std::string& out, const std::string& key, const json& spec) {
  std::vector<std::string> files, dirs;
  for (const auto& opt : spec["options"]) {
    if (opt.value("positional", false) || !opt.value("value", false)) continue;
    for (const auto& n : opt["names"]) {
      const std::string name = n.get<std::string>();
      if (TakesDirectory(name))
        dirs.push_back(name);
      else if (TakesPath(name))
        files.push_back(name);
    }
  }
  std::vector<std::string> subs;
  for (const auto& sub : spec["subcommands"]) subs.push_back(sub["name"].get<std::string>());
  out += fmt::format(
      "    {})\n      opts={}\n      valued={}\n      files={}\n      dirs={}\n      subs={}\n     "
      " ;;\n",
      key, ShellQuote(WordList(spec["options"], false)),
      ShellQuote(WordList(spec["options"], true)), ShellQuote(Join(files, " ")),
      ShellQuote(Join(dirs, " ")), ShellQuote(Join(subs, " ")));
  for (const auto& sub : spec["subcommands"])
    BashOptionCases(out, key + "/" + sub["name"].get<std::string>(), sub);
}

std::string ZshArguments(const json& spec, std::string_view models) {
  std::string out;
  for (const auto& opt : spec["options"]) {
    const std::string desc = ZshDescription(opt.value("description", ""));
    if (opt.value("positional", false)) {
      const std::string name = opt["names"][0].get<std::string>();
      if (!models.empty() && name == "model") {
        out += fmt::format("    {} \\\n", ShellQuote(fmt::format("::{}:({})", name, models)));
      } else if (opt.value("repeatable", false)) {
        out += fmt::format("    {} \\\n", ShellQuote("*::" + name + ":_normal"));
      } else {
        out += fmt::format("    {} \\\n", ShellQuote("::" + name + ":"));
      }
      continue;
    }
    const auto& names = opt["names"];
    const std::string first = names.back().get<std::string>();
    std::string action;
    if (opt.value("value", false)) {
      action = TakesDirectory(first) ? ":directory:_files -/"
               : TakesPath(first)    ? ":file:_files"
                                     : ":value:";
    }
    const std::string repeat = opt.value("repeatable", false) ? "*" : "";
    if (names.size() == 1) {
      out += fmt::format("    {} \\\n", ShellQuote(repeat + first + "[" + desc + "]" + action));
    } else {
      // Brace expansion outside the quotes: {-o,--out}'[...]' is one spec per name.
      std::vector<std::string> all;
      for (const auto& n : names) all.push_back(n.get<std::string>());
      out += fmt::format("    {}{{{}}}{} \\\n", repeat.empty() ? "" : ShellQuote(repeat),
                         Join(all, ","), ShellQuote("[" + desc + "]" + action));
    }
  }
  return out;
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

json AppSpec(const CLI::App& app) {
  json spec = {{"name", app.get_name()},
               {"description", app.get_description()},
               {"footer", app.get_footer()},
               {"options", json::array()},
               {"subcommands", json::array()}};
  const CLI::Option* help = app.get_help_ptr();
  for (const CLI::Option* opt : app.get_options()) {
    if (opt == help || opt == app.get_help_all_ptr()) continue;
    json o = {
        {"positional", opt->get_positional()}, {"value", opt->get_items_expected_max() > 0},
        {"type", opt->get_type_name()},        {"description", opt->get_description()},
        {"required", opt->get_required()},     {"repeatable", opt->get_items_expected_max() > 1}};
    if (opt->get_positional())
      o["names"] = json::array({opt->get_name()});
    else
      o["names"] = OptionNames(*opt);
    spec["options"].push_back(std::move(o));
  }
  for (const CLI::App* sub :
       app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); })) {
    spec["subcommands"].push_back(AppSpec(*sub));
  }
  return spec;
}

std::vector<CommandDoc> CollectCommandDocs(std::span<const Subcommand> commands) {
  std::vector<CommandDoc> docs;
  for (const auto& c : commands) {
    const std::unique_ptr<CommandFlags> flags = c.define();
    docs.push_back({std::string(c.name), Tr(c.summary.data()), AppSpec(flags->App())});
  }
  return docs;
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
  out += Heading(N_("ENVIRONMENT")) + ".TP\n\\fBHEADROOM_JOURNAL\\fR\n" +
         RoffText(Tr("the journal (SQLite) of guarded runs, sweeps, watch runs and ladders")) +
         "\n.TP\n\\fBHEADROOM_CONFIG\\fR\n" +
         RoffText(Tr(
             "the configuration file (default $XDG_CONFIG_HOME/headroom/config.toml); see headroom "
             "config")) +
         "\n.TP\n\\fBHEADROOM_NVML_LIB\\fR, \\fBHEADROOM_CUDA_LIB\\fR\n" +
         RoffText(Tr("load these instead of libnvidia-ml.so.1 and libcuda.so.1")) +
         "\n.TP\n\\fBLANG\\fR, \\fBLC_MESSAGES\\fR, \\fBLANGUAGE\\fR\n" +
         RoffText(Tr(
             "the language of messages (English by default; zh_TW is translated); --json output is "
             "never translated")) +
         "\n";
  out += Heading(N_("FILES")) + ".TP\n\\fI$XDG_CONFIG_HOME/headroom/config.toml\\fR\n" +
         RoffText(Tr("the settings users set once (default ~/.config/headroom/config.toml)")) +
         "\n.TP\n\\fI$XDG_STATE_HOME/headroom/journal.db\\fR\n" +
         RoffText(Tr("the journal (default ~/.local/state/headroom/journal.db)")) + "\n";
  out += Heading(N_("SEE ALSO"));
  std::vector<std::string> refs;
  for (const auto& d : docs) refs.push_back("\\fBheadroom\\-" + RoffEscape(d.name) + "\\fR(1)");
  out += Join(refs, ",\n") + "\n";
  return FinishPage(std::move(out));
}

std::string RenderBashCompletion(std::span<const CommandDoc> docs,
                                 std::span<const std::string> model_names) {
  std::vector<std::string> names;
  for (const auto& d : docs) names.push_back(d.name);
  std::string out =
      "# bash completion for headroom (generated by `headroom help --completion bash`; do not "
      "edit)\n"
      "_headroom() {\n"
      "  local cur prev i cmd key opts valued files dirs subs\n"
      "  cur=${COMP_WORDS[COMP_CWORD]}\n"
      "  prev=${COMP_WORDS[COMP_CWORD-1]}\n"
      "  cmd= key=\n"
      "  # The command, then a subcommand; after -- the words are the job's: complete commands.\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case ${COMP_WORDS[i]} in\n"
      "      --) COMPREPLY=($(compgen -c -- \"$cur\")); [[ $i -lt $((COMP_CWORD - 1)) ]] && "
      "COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
      "      -*) ;;\n"
      "      *) if [[ -z $cmd ]]; then cmd=${COMP_WORDS[i]}; key=$cmd;\n"
      "         elif [[ $key == \"$cmd\" && \" $subs \" == *\" ${COMP_WORDS[i]} \"* ]]; then "
      "key=$cmd/${COMP_WORDS[i]}; fi ;;\n"
      "    esac\n"
      "    _headroom_options \"$key\"\n"
      "  done\n"
      "  if [[ -z $cmd ]]; then\n"
      "    COMPREPLY=($(compgen -W " +
      ShellQuote(Join(names, " ") + " help --help --version") +
      " -- \"$cur\"))\n"
      "    return\n"
      "  fi\n"
      "  if [[ $cmd == help ]]; then COMPREPLY=($(compgen -W " +
      ShellQuote(Join(names, " ")) +
      " -- \"$cur\")); return; fi\n"
      "  _headroom_options \"$key\"\n"
      "  if [[ \" $valued \" == *\" $prev \"* ]]; then\n"
      "    if [[ \" $dirs \" == *\" $prev \"* ]]; then compopt -o filenames 2>/dev/null; "
      "COMPREPLY=($(compgen -d -- \"$cur\"));\n"
      "    elif [[ \" $files \" == *\" $prev \"* ]]; then compopt -o filenames 2>/dev/null; "
      "COMPREPLY=($(compgen -f -- \"$cur\"));\n"
      "    else COMPREPLY=(); fi\n"
      "    return\n"
      "  fi\n"
      "  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$opts --help\" -- \"$cur\")); return; "
      "fi\n"
      "  if [[ $key == \"$cmd\" && -n $subs ]]; then COMPREPLY=($(compgen -W \"$subs\" -- "
      "\"$cur\")); return; fi\n";
  if (!model_names.empty()) {
    std::vector<std::string> models(model_names.begin(), model_names.end());
    out += "  if [[ $cmd == plan ]]; then COMPREPLY=($(compgen -W " +
           ShellQuote(Join(models, " ")) + " -- \"$cur\")); return; fi\n";
  }
  out += "  COMPREPLY=()\n}\n";
  out += "_headroom_options() {\n  opts= valued= files= dirs= subs=\n  case $1 in\n";
  for (const auto& d : docs) BashOptionCases(out, d.name, d.spec);
  out += "  esac\n}\ncomplete -F _headroom headroom\n";
  return out;
}

std::string RenderZshCompletion(std::span<const CommandDoc> docs,
                                std::span<const std::string> model_names) {
  std::vector<std::string> models(model_names.begin(), model_names.end());
  const std::string model_list = Join(models, " ");
  std::string out =
      "#compdef headroom\n"
      "# zsh completion for headroom (generated by `headroom help --completion zsh`; do not "
      "edit)\n\n"
      "_headroom() {\n"
      "  local -a commands\n"
      "  commands=(\n";
  for (const auto& d : docs)
    out += "    " + ShellQuote(d.name + ":" + ZshDescription(d.summary)) + "\n";
  out +=
      "    'help:show the help of a command'\n  )\n"
      "  if (( CURRENT == 2 )); then\n"
      "    _describe -t commands 'headroom command' commands\n"
      "    return\n"
      "  fi\n"
      "  local cmd=$words[2]\n"
      "  shift words\n"
      "  (( CURRENT-- ))\n"
      "  case $cmd in\n"
      "    help) _describe -t commands 'headroom command' commands ;;\n";
  for (const auto& d : docs) {
    out += "    " + d.name + ")\n";
    if (!d.spec["subcommands"].empty()) {
      out +=
          "      if (( CURRENT == 2 )) && [[ $words[CURRENT] != -* ]]; then\n        local -a "
          "subs\n        subs=(\n";
      for (const auto& sub : d.spec["subcommands"]) {
        out += "          " +
               ShellQuote(sub["name"].get<std::string>() + ":" +
                          ZshDescription(sub.value("description", ""))) +
               "\n";
      }
      out +=
          "        )\n        _describe -t subcommands 'subcommand' subs\n        return\n      "
          "fi\n";
      out += "      case $words[2] in\n";
      for (const auto& sub : d.spec["subcommands"]) {
        out += "        " + sub["name"].get<std::string>() +
               ")\n          shift words; (( CURRENT-- ))\n          _arguments -s \\\n" +
               ZshArguments(sub, "") + "            && return ;;\n";
      }
      out += "      esac\n";
    }
    out += "      _arguments -s \\\n" + ZshArguments(d.spec, d.name == "plan" ? model_list : "") +
           "        && return\n      ;;\n";
  }
  out += "  esac\n}\n\n_headroom \"$@\"\n";
  return out;
}

}  // namespace headroom
