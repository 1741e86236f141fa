// Implementation notes.
// - Which options take a file name or a directory is the option's ValueKind (help_docs.h),
//   decided by its name; the rest complete nothing after them.
// - The scripts' fixed parts are raw strings, as bash and zsh read them; the lists between
//   them (commands, options, subcommands, plan's models) come from the definitions.
#include "cli/completion.h"

#include <fmt/format.h>

#include <vector>

#include "model/catalog.h"

namespace headroom {
namespace {

// An option's zsh _arguments action, by ValueKind.
constexpr std::string_view kZshActions[] = {":value:", ":file:_files", ":directory:_files -/"};

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

std::string WordList(const nlohmann::json& options, bool with_values_only) {
  std::vector<std::string> words;
  for (const auto& opt : options) {
    if (opt.value("positional", false)) continue;
    if (with_values_only && !opt.value("value", false)) continue;
    for (const auto& n : opt["names"]) words.push_back(n.get<std::string>());
  }
  return JoinWords(words, " ");
}

// `case` arms for one level of bash completion: options of the app and its subcommands.
void BashOptionCases(std::string& out, const std::string& key, const nlohmann::json& spec) {
  std::vector<std::string> files, dirs;
  for (const auto& opt : spec["options"]) {
    if (opt.value("positional", false) || !opt.value("value", false)) continue;
    for (const auto& n : opt["names"]) {
      const std::string name = n.get<std::string>();
      const ValueKind kind = ValueKindOf(name);
      if (kind != ValueKind::kValue) (kind == ValueKind::kDirectory ? dirs : files).push_back(name);
    }
  }
  std::vector<std::string> subs;
  for (const auto& sub : spec["subcommands"]) subs.push_back(sub["name"].get<std::string>());
  out += fmt::format(
      "    {})\n      opts={}\n      valued={}\n      files={}\n      dirs={}\n      subs={}\n     "
      " ;;\n",
      key, ShellQuote(WordList(spec["options"], false)),
      ShellQuote(WordList(spec["options"], true)), ShellQuote(JoinWords(files, " ")),
      ShellQuote(JoinWords(dirs, " ")), ShellQuote(JoinWords(subs, " ")));
  for (const auto& sub : spec["subcommands"])
    BashOptionCases(out, key + "/" + sub["name"].get<std::string>(), sub);
}

std::string ZshArguments(const nlohmann::json& spec, std::string_view models) {
  std::string out;
  const auto quoted_line = [&out](const std::string& arg) {
    out += fmt::format("    {} \\\n", ShellQuote(arg));
  };
  for (const auto& opt : spec["options"]) {
    const std::string desc = ZshDescription(opt.value("description", ""));
    if (opt.value("positional", false)) {
      const std::string name = opt["names"][0].get<std::string>();
      if (!models.empty() && name == "model") {
        quoted_line(fmt::format("::{}:({})", name, models));
      } else {
        quoted_line((opt.value("repeatable", false) ? "*::" : "::") + name +
                    (opt.value("repeatable", false) ? ":_normal" : ":"));
      }
      continue;
    }
    const auto& names = opt["names"];
    const std::string first = names.back().get<std::string>();
    const std::string action(
        opt.value("value", false) ? kZshActions[static_cast<int>(ValueKindOf(first))] : "");
    const std::string repeat = opt.value("repeatable", false) ? "*" : "";
    if (names.size() == 1) {
      quoted_line(repeat + first + "[" + desc + "]" + action);
    } else {
      // Brace expansion outside the quotes: {-o,--out}'[...]' is one spec per name.
      std::vector<std::string> all;
      for (const auto& n : names) all.push_back(n.get<std::string>());
      out += fmt::format("    {}{{{}}}{} \\\n", repeat.empty() ? "" : ShellQuote(repeat),
                         JoinWords(all, ","), ShellQuote("[" + desc + "]" + action));
    }
  }
  return out;
}

}  // namespace

std::string RenderCompletion(std::string_view shell, std::span<const CommandDoc> docs) {
  std::vector<std::string> models;
  for (const auto& m : Catalog()) models.push_back(m.name);
  return shell == "bash" ? RenderBashCompletion(docs, models) : RenderZshCompletion(docs, models);
}

std::string RenderBashCompletion(std::span<const CommandDoc> docs,
                                 std::span<const std::string> model_names) {
  std::vector<std::string> names;
  for (const auto& d : docs) names.push_back(d.name);
  std::string out =
      R"sh(# bash completion for headroom (generated by `headroom help --completion bash`; do not edit)
_headroom() {
  local cur prev i cmd key opts valued files dirs subs
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  cmd= key=
  # The command, then a subcommand; after -- the words are the job's: complete commands.
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      --) COMPREPLY=($(compgen -c -- "$cur")); [[ $i -lt $((COMP_CWORD - 1)) ]] && COMPREPLY=($(compgen -f -- "$cur")); return ;;
      -*) ;;
      *) if [[ -z $cmd ]]; then cmd=${COMP_WORDS[i]}; key=$cmd;
         elif [[ $key == "$cmd" && " $subs " == *" ${COMP_WORDS[i]} "* ]]; then key=$cmd/${COMP_WORDS[i]}; fi ;;
    esac
    _headroom_options "$key"
  done
  if [[ -z $cmd ]]; then
    COMPREPLY=($(compgen -W )sh" +
      ShellQuote(JoinWords(names, " ") + " help --help --version") + R"sh( -- "$cur"))
    return
  fi
  if [[ $cmd == help ]]; then COMPREPLY=($(compgen -W )sh" +
      ShellQuote(JoinWords(names, " ")) + R"sh( -- "$cur")); return; fi
  _headroom_options "$key"
  if [[ " $valued " == *" $prev "* ]]; then
    if [[ " $dirs " == *" $prev "* ]]; then compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur"));
    elif [[ " $files " == *" $prev "* ]]; then compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur"));
    else COMPREPLY=(); fi
    return
  fi
  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "$opts --help" -- "$cur")); return; fi
  if [[ $key == "$cmd" && -n $subs ]]; then COMPREPLY=($(compgen -W "$subs" -- "$cur")); return; fi
)sh";
  if (!model_names.empty()) {
    out += "  if [[ $cmd == plan ]]; then COMPREPLY=($(compgen -W " +
           ShellQuote(JoinWords(model_names, " ")) + " -- \"$cur\")); return; fi\n";
  }
  out += "  COMPREPLY=()\n}\n";
  out += "_headroom_options() {\n  opts= valued= files= dirs= subs=\n  case $1 in\n";
  for (const auto& d : docs) BashOptionCases(out, d.name, d.spec);
  out += "  esac\n}\ncomplete -F _headroom headroom\n";
  return out;
}

std::string RenderZshCompletion(std::span<const CommandDoc> docs,
                                std::span<const std::string> model_names) {
  const std::string model_list = JoinWords(model_names, " ");
  std::string out = R"sh(#compdef headroom
# zsh completion for headroom (generated by `headroom help --completion zsh`; do not edit)

_headroom() {
  local -a commands
  commands=(
)sh";
  for (const auto& d : docs)
    out += "    " + ShellQuote(d.name + ":" + ZshDescription(d.summary)) + "\n";
  out += R"sh(    'help:show the help of a command'
  )
  if (( CURRENT == 2 )); then
    _describe -t commands 'headroom command' commands
    return
  fi
  local cmd=$words[2]
  shift words
  (( CURRENT-- ))
  case $cmd in
    help) _describe -t commands 'headroom command' commands ;;
)sh";
  for (const auto& d : docs) {
    out += "    " + d.name + ")\n";
    if (!d.spec["subcommands"].empty()) {
      out += R"sh(      if (( CURRENT == 2 )) && [[ $words[CURRENT] != -* ]]; then
        local -a subs
        subs=(
)sh";
      for (const auto& sub : d.spec["subcommands"]) {
        out += "          " +
               ShellQuote(sub["name"].get<std::string>() + ":" +
                          ZshDescription(sub.value("description", ""))) +
               "\n";
      }
      out += R"sh(        )
        _describe -t subcommands 'subcommand' subs
        return
      fi
      case $words[2] in
)sh";
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
