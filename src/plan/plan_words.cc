#include "plan/plan_words.h"

#include <tuple>
#include <utility>

#include "plan/workload.h"

namespace headroom {

std::optional<std::vector<std::string>> SplitShellWords(std::string_view text,
                                                        std::string_view flag, Message* error) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote) {
    *error = Msg("{}: unterminated quote", flag);
    return std::nullopt;
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string JoinShellWords(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) {
    if (!text.empty()) text += ' ';
    if (!word.empty() && word.find_first_of(" \t\n'\"") == std::string::npos) {
      text += word;
      continue;
    }
    if (word.empty()) text += "''";
    bool open = false;  // inside a single-quoted run
    for (char c : word) {
      if (c == '\'') {
        if (open) text += '\'';
        open = false;
        text += "\"'\"";
      } else {
        if (!open) text += '\'';
        open = true;
        text += c;
      }
    }
    if (open) text += '\'';
  }
  return text;
}

std::optional<PlanFlagText> ParseWorkloadWords(const std::vector<std::string>& words,
                                               std::vector<std::string>* plan_flags, Message* error,
                                               std::vector<std::string>* given) {
  static const std::tuple<const char*, std::string PlanFlagText::*, const char*> kPairs[] = {
      {"seq", &PlanFlagText::seq, "seq"},
      {"packing", &PlanFlagText::seq, "seq"},
      {"batch", &PlanFlagText::batch, "batch"},
      {"bs", &PlanFlagText::batch, "batch"}};
  PlanFlagText fl;
  std::vector<std::string> set;
  bool from = false;  // a --from file may name the model
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word.rfind("--", 0) == 0) {
      from = from || word == "--from" || word.rfind("--from=", 0) == 0;
      plan_flags->push_back(word);
      if (word.find('=') == std::string::npos && i + 1 < words.size() &&
          words[i + 1].rfind("--", 0) != 0) {
        plan_flags->push_back(words[++i]);
      }
      continue;
    }
    if (word == "from") {
      if (i + 1 >= words.size()) {
        *error = Msg("--workload: 'from' needs the run's configuration file after it");
        return std::nullopt;
      }
      plan_flags->push_back("--from");
      plan_flags->push_back(words[++i]);
      from = true;
      continue;
    }
    if (ParseMethod(word)) {
      fl.method = word;
      set.emplace_back("method");
      continue;
    }
    bool paired = false;
    for (const auto& [name, field, field_name] : kPairs) {
      if (word != name) continue;
      if (i + 1 >= words.size()) {
        *error = Msg("--workload: '{}' needs a number after it", word);
        return std::nullopt;
      }
      fl.*field = words[++i];
      set.emplace_back(field_name);
      paired = true;
    }
    if (paired) continue;
    if (!fl.model.empty()) {
      *error =
          Msg("--workload: '{}' is not a method (full, lora, qlora, nvfp4-lora), 'seq N', "
              "'batch N' or a plan flag, and the model is already '{}'",
              word, fl.model);
      return std::nullopt;
    }
    fl.model = word;
    set.emplace_back("model");
  }
  if (fl.model.empty() && !from) {
    *error = Msg("--workload: no model named (e.g. \"qlora llama-3.1-70b seq 8192\")");
    return std::nullopt;
  }
  if (given) *given = std::move(set);
  return fl;
}

}  // namespace headroom
