#include "plan/plan_words.h"

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

std::optional<PlanFlagText> ParseWorkloadWords(const std::vector<std::string>& words,
                                               std::vector<std::string>* plan_flags,
                                               Message* error) {
  static const std::pair<const char*, std::string PlanFlagText::*> kPairs[] = {
      {"seq", &PlanFlagText::seq},
      {"packing", &PlanFlagText::seq},
      {"batch", &PlanFlagText::batch},
      {"bs", &PlanFlagText::batch}};
  PlanFlagText fl;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word.rfind("--", 0) == 0) {
      plan_flags->push_back(word);
      if (word.find('=') == std::string::npos && i + 1 < words.size() &&
          words[i + 1].rfind("--", 0) != 0) {
        plan_flags->push_back(words[++i]);
      }
      continue;
    }
    if (ParseMethod(word)) {
      fl.method = word;
      continue;
    }
    bool paired = false;
    for (const auto& [name, field] : kPairs) {
      if (word != name) continue;
      if (i + 1 >= words.size()) {
        *error = Msg("--workload: '{}' needs a number after it", word);
        return std::nullopt;
      }
      fl.*field = words[++i];
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
  }
  if (fl.model.empty()) {
    *error = Msg("--workload: no model named (e.g. \"qlora llama-3.1-70b seq 8192\")");
    return std::nullopt;
  }
  return fl;
}

}  // namespace headroom
