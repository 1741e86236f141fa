// Implementation notes.
// - The spec is read off CLI11's own objects (names, descriptions, whether an option takes a
//   value), the same ones App::help() formats, so a flag added to a command appears in its
//   --help, its man page and both completions with no second list to update.
// - Man pages are plain man(7) macros (.TH .SH .TP .PP .nf): man-db, mandoc and groff all
//   read them. Paragraphs come from the app's description: a blank line starts a new one, a
//   paragraph of lines indented by two spaces is shown as written (usage lines), and one that
//   starts "exit status:" becomes the EXIT STATUS section.
// - Completions: which options take a file name is decided by the option's name (PATH-like
//   names: --journal, --root, --out, ...); the rest complete nothing after them, which is
//   what bash and zsh users expect for a size or a duration.
#include "cli/help_docs.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/text.h"

namespace headroom {
namespace {

using nlohmann::json;

// Options whose value is a path, completed with file names; --root and --logs are folders.
bool TakesPath(std::string_view long_name) {
  static constexpr std::string_view kPathOptions[] = {
      "--journal", "--state", "--out", "--events", "--log", "--samples", "--report", "--csv",
      "--config", "--nvml-lib", "--cuda-lib", "--python", "--root", "--logs", "-o"};
  for (const auto name : kPathOptions) {
    if (long_name == name) return true;
  }
  return false;
}

bool TakesDirectory(std::string_view long_name) { return long_name == "--root" || long_name == "--logs"; }

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

bool IsExitStatus(const std::vector<std::string>& paragraph) {
  return !paragraph.empty() && paragraph.front().rfind("exit status:", 0) == 0;
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
    for (const auto& n : opt["names"]) parts.push_back("\\fB" + RoffEscape(n.get<std::string>()) + "\\fR");
    label = Join(parts, ", ");
    if (opt.value("value", false)) {
      const std::string last = opt["names"].back().get<std::string>();
      label += TakesDirectory(last) ? " \\fIDIR\\fR" : TakesPath(last) ? " \\fIFILE\\fR" : " \\fIVALUE\\fR";
    }
  }
  if (opt.value("repeatable", false)) label += " ...";
  return label;
}

void RenderDescription(std::string& out, const json& spec, std::string* exit_status) {
  for (const auto& paragraph : Paragraphs(spec.value("description", ""))) {
    if (IsExitStatus(paragraph) && exit_status != nullptr) {
      *exit_status = Join(paragraph, " ").substr(std::string_view("exit status:").size());
      continue;
    }
    if (IsVerbatim(paragraph)) {
      out += ".PP\n.nf\n";
      for (const auto& line : paragraph) out += RoffEscape(line.substr(2)) + "\n";
      out += ".fi\n";
    } else {
      out += ".PP\n" + RoffEscape(Join(paragraph, " ")) + "\n";
    }
  }
}

void RenderOptions(std::string& out, const json& spec) {
  for (const auto& opt : spec["options"]) {
    out += ".TP\n" + OptionLabel(opt) + "\n" + RoffEscape(opt.value("description", "")) + "\n";
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

// Single-quoted for the shell: ' becomes '\''.
std::string ShellQuote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

// Text for a zsh _arguments description in [...]: no brackets or colons, one line.
std::string ZshDescription(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '[') out += '(';
    else if (c == ']') out += ')';
    else if (c == ':') out += ' ';
    else if (c == '\n') out += ' ';
    else if (c == '\\') out += "\\\\";
    else out += c;
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
      if (TakesDirectory(name)) dirs.push_back(name);
      else if (TakesPath(name)) files.push_back(name);
    }
  }
  std::vector<std::string> subs;
  for (const auto& sub : spec["subcommands"]) subs.push_back(sub["name"].get<std::string>());
  out += fmt::format("    {})\n      opts={}\n      valued={}\n      files={}\n      dirs={}\n      subs={}\n      ;;\n",
                     key, ShellQuote(WordList(spec["options"], false)),
                     ShellQuote(WordList(spec["options"], true)), ShellQuote(Join(files, " ")),
                     ShellQuote(Join(dirs, " ")), ShellQuote(Join(subs, " ")));
  for (const auto& sub : spec["subcommands"]) BashOptionCases(out, key + "/" + sub["name"].get<std::string>(), sub);
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
      action = TakesDirectory(first) ? ":directory:_files -/" : TakesPath(first) ? ":file:_files" : ":value:";
    }
    const std::string repeat = opt.value("repeatable", false) ? "*" : "";
    if (names.size() == 1) {
      out += fmt::format("    {} \\\n", ShellQuote(repeat + first + "[" + desc + "]" + action));
    } else {
      // Brace expansion outside the quotes: {-o,--out}'[...]' is one spec per name.
      std::vector<std::string> all;
      for (const auto& n : names) all.push_back(n.get<std::string>());
      out += fmt::format("    {}{{{}}}{} \\\n", repeat.empty() ? "" : ShellQuote(repeat), Join(all, ","),
                         ShellQuote("[" + desc + "]" + action));
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
      case '\\': out += "\\e"; break;
      case '-': out += "\\-"; break;
      case '\n': out += '\n'; line_start = true; break;
      default: out += c;
    }
  }
  return out;
}

json AppSpec(const CLI::App& app) {
  json spec = {{"name", app.get_name()}, {"description", app.get_description()},
               {"footer", app.get_footer()}, {"options", json::array()}, {"subcommands", json::array()}};
  const CLI::Option* help = app.get_help_ptr();
  for (const CLI::Option* opt : app.get_options()) {
    if (opt == help || opt == app.get_help_all_ptr()) continue;
    json o = {{"positional", opt->get_positional()},
              {"value", opt->get_items_expected_max() > 0},
              {"type", opt->get_type_name()},
              {"description", opt->get_description()},
              {"required", opt->get_required()},
              {"repeatable", opt->get_items_expected_max() > 1}};
    if (opt->get_positional()) o["names"] = json::array({opt->get_name()});
    else o["names"] = OptionNames(*opt);
    spec["options"].push_back(std::move(o));
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); })) {
    spec["subcommands"].push_back(AppSpec(*sub));
  }
  return spec;
}

std::vector<CommandDoc> CollectCommandDocs(const CliEnv& env, std::span<const Subcommand> commands) {
  std::vector<CommandDoc> docs;
  for (const auto& c : commands) {
    // The handler prints its spec into memory; its stderr stays the caller's.
    char* buffer = nullptr;
    size_t size = 0;
    std::FILE* mem = open_memstream(&buffer, &size);
    if (mem == nullptr) throw UsageError{"help: cannot capture output: open_memstream failed"};
    CliEnv captured = env;
    captured.out = mem;
    const int status = c.run(captured, {std::string(kHelpSpecFlag)});
    std::fclose(mem);
    const std::unique_ptr<char, decltype(&std::free)> owned(buffer, &std::free);
    json spec = json::parse(std::string_view(buffer, size), nullptr, /*allow_exceptions=*/false);
    if (status != kExitOk || spec.is_discarded() || !spec.is_object()) {
      throw UsageError{fmt::format("help: the {} command gave no usable spec (status {})", c.name, status)};
    }
    docs.push_back({std::string(c.name), std::string(c.summary), std::move(spec)});
  }
  return docs;
}

std::string RenderCommandManPage(const CommandDoc& doc, std::string_view version, std::string_view date) {
  std::string upper = "HEADROOM-" + doc.name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string out = ManHeader(RoffEscape(upper), version, date);
  out += ".SH NAME\nheadroom\\-" + RoffEscape(doc.name) + " \\- " + RoffEscape(doc.summary) + "\n";
  out += ".SH SYNOPSIS\n" + UsageLine(doc.name, doc.spec) + "\n";
  out += ".SH DESCRIPTION\n";
  std::string exit_status;
  RenderDescription(out, doc.spec, &exit_status);
  out += ".SH OPTIONS\n";
  RenderOptions(out, doc.spec);
  out += ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nprint the help and exit\n";
  if (!doc.spec["subcommands"].empty()) {
    out += ".SH SUBCOMMANDS\n";
    for (const auto& sub : doc.spec["subcommands"]) {
      out += ".SS " + RoffEscape(sub["name"].get<std::string>()) + "\n";
      RenderDescription(out, sub, nullptr);
      RenderOptions(out, sub);
    }
  }
  if (const std::string footer = doc.spec.value("footer", ""); !footer.empty()) {
    out += ".SH NOTES\n.PP\n" + RoffEscape(footer) + "\n";
  }
  if (!exit_status.empty()) {
    out += ".SH EXIT STATUS\n" + RoffEscape(std::string(TrimBlanks(exit_status))) + "\n";
  }
  out += ".SH SEE ALSO\n\\fBheadroom\\fR(1)\n";
  return out;
}

std::string RenderMainManPage(std::span<const CommandDoc> docs, std::string_view version, std::string_view date) {
  std::string out = ManHeader("HEADROOM", version, date);
  out += ".SH NAME\nheadroom \\- keep long ML training jobs alive on unified\\-memory machines\n";
  out += ".SH SYNOPSIS\n\\fBheadroom\\fR \\fIcommand\\fR [\\fIoptions\\fR]\n.br\n"
         "\\fBheadroom help\\fR [\\fIcommand\\fR]\n.br\n\\fBheadroom \\-\\-version\\fR\n";
  out += ".SH DESCRIPTION\n.PP\n"
         "headroom plans, guards, sweeps and watches ML training jobs on machines whose CPU and GPU share "
         "one memory pool (NVIDIA DGX Spark, GB10) and on any Linux machine with or without a GPU. "
         "The memory budget is MemAvailable from /proc/meminfo, never nvidia\\-smi. "
         "Sizes: GB = 1e9 bytes, GiB = 2^30 bytes.\n.PP\n"
         "headroom reads and explains; it changes system state (signals, cache flushes) only where a "
         "command is asked for exactly that.\n";
  out += ".SH COMMANDS\n";
  for (const auto& d : docs) {
    out += fmt::format(".TP\n\\fB{}\\fR\n{} (\\fB\\%headroom\\-{}\\fR(1))\n", RoffEscape(d.name),
                       RoffEscape(d.summary), RoffEscape(d.name));
  }
  out += ".SH EXIT STATUS\n.PP\n0 success; 1 a negative answer (plan: does not fit); 2 usage or input "
         "error. Some commands add their own (guard: the job's status, 99 when the guard killed it; "
         "doctor: 0 ready, 1 ready with warnings, 2 blocked, 3 usage error): see each command's page.\n";
  out += ".SH ENVIRONMENT\n"
         ".TP\n\\fBHEADROOM_JOURNAL\\fR\nthe journal (SQLite) of guarded runs, sweeps, watch runs and ladders\n"
         ".TP\n\\fBHEADROOM_NVML_LIB\\fR, \\fBHEADROOM_CUDA_LIB\\fR\nload these instead of libnvidia\\-ml.so.1 and libcuda.so.1\n"
         ".TP\n\\fBLANG\\fR, \\fBLC_MESSAGES\\fR, \\fBLANGUAGE\\fR\nthe language of messages (English by default; "
         "zh_TW is translated); \\-\\-json output is never translated\n";
  out += ".SH FILES\n"
         ".TP\n\\fI$XDG_STATE_HOME/headroom/journal.db\\fR\nthe journal (default ~/.local/state/headroom/journal.db)\n";
  out += ".SH SEE ALSO\n";
  std::vector<std::string> refs;
  for (const auto& d : docs) refs.push_back("\\fBheadroom\\-" + RoffEscape(d.name) + "\\fR(1)");
  out += Join(refs, ",\n") + "\n";
  return out;
}

std::string RenderBashCompletion(std::span<const CommandDoc> docs, std::span<const std::string> model_names) {
  std::vector<std::string> names;
  for (const auto& d : docs) names.push_back(d.name);
  std::string out =
      "# bash completion for headroom (generated by `headroom help --completion bash`; do not edit)\n"
      "_headroom() {\n"
      "  local cur prev i cmd key opts valued files dirs subs\n"
      "  cur=${COMP_WORDS[COMP_CWORD]}\n"
      "  prev=${COMP_WORDS[COMP_CWORD-1]}\n"
      "  cmd= key=\n"
      "  # The command, then a subcommand; after -- the words are the job's: complete commands.\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case ${COMP_WORDS[i]} in\n"
      "      --) COMPREPLY=($(compgen -c -- \"$cur\")); [[ $i -lt $((COMP_CWORD - 1)) ]] && COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
      "      -*) ;;\n"
      "      *) if [[ -z $cmd ]]; then cmd=${COMP_WORDS[i]}; key=$cmd;\n"
      "         elif [[ $key == \"$cmd\" && \" $subs \" == *\" ${COMP_WORDS[i]} \"* ]]; then key=$cmd/${COMP_WORDS[i]}; fi ;;\n"
      "    esac\n"
      "    _headroom_options \"$key\"\n"
      "  done\n"
      "  if [[ -z $cmd ]]; then\n"
      "    COMPREPLY=($(compgen -W " + ShellQuote(Join(names, " ") + " help --help --version") + " -- \"$cur\"))\n"
      "    return\n"
      "  fi\n"
      "  if [[ $cmd == help ]]; then COMPREPLY=($(compgen -W " + ShellQuote(Join(names, " ")) + " -- \"$cur\")); return; fi\n"
      "  _headroom_options \"$key\"\n"
      "  if [[ \" $valued \" == *\" $prev \"* ]]; then\n"
      "    if [[ \" $dirs \" == *\" $prev \"* ]]; then compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\"));\n"
      "    elif [[ \" $files \" == *\" $prev \"* ]]; then compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\"));\n"
      "    else COMPREPLY=(); fi\n"
      "    return\n"
      "  fi\n"
      "  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$opts --help\" -- \"$cur\")); return; fi\n"
      "  if [[ $key == \"$cmd\" && -n $subs ]]; then COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\")); return; fi\n";
  if (!model_names.empty()) {
    std::vector<std::string> models(model_names.begin(), model_names.end());
    out += "  if [[ $cmd == plan ]]; then COMPREPLY=($(compgen -W " + ShellQuote(Join(models, " ")) +
           " -- \"$cur\")); return; fi\n";
  }
  out += "  COMPREPLY=()\n}\n";
  out += "_headroom_options() {\n  opts= valued= files= dirs= subs=\n  case $1 in\n";
  for (const auto& d : docs) BashOptionCases(out, d.name, d.spec);
  out += "  esac\n}\ncomplete -F _headroom headroom\n";
  return out;
}

std::string RenderZshCompletion(std::span<const CommandDoc> docs, std::span<const std::string> model_names) {
  std::vector<std::string> models(model_names.begin(), model_names.end());
  const std::string model_list = Join(models, " ");
  std::string out =
      "#compdef headroom\n"
      "# zsh completion for headroom (generated by `headroom help --completion zsh`; do not edit)\n\n"
      "_headroom() {\n"
      "  local -a commands\n"
      "  commands=(\n";
  for (const auto& d : docs) out += "    " + ShellQuote(d.name + ":" + ZshDescription(d.summary)) + "\n";
  out += "    'help:show the help of a command'\n  )\n"
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
      out += "      if (( CURRENT == 2 )) && [[ $words[CURRENT] != -* ]]; then\n        local -a subs\n        subs=(\n";
      for (const auto& sub : d.spec["subcommands"]) {
        out += "          " + ShellQuote(sub["name"].get<std::string>() + ":" + ZshDescription(sub.value("description", ""))) + "\n";
      }
      out += "        )\n        _describe -t subcommands 'subcommand' subs\n        return\n      fi\n";
      out += "      case $words[2] in\n";
      for (const auto& sub : d.spec["subcommands"]) {
        out += "        " + sub["name"].get<std::string>() + ")\n          shift words; (( CURRENT-- ))\n          _arguments -s \\\n" +
               ZshArguments(sub, "") + "            && return ;;\n";
      }
      out += "      esac\n";
    }
    out += "      _arguments -s \\\n" + ZshArguments(d.spec, d.name == "plan" ? model_list : "") + "        && return\n      ;;\n";
  }
  out += "  esac\n}\n\n_headroom \"$@\"\n";
  return out;
}

}  // namespace headroom
