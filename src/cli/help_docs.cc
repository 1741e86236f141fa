// Implementation notes.
// - The spec is read off CLI11's own objects (names, descriptions, whether an option takes a
//   value), the same ones App::help() formats, so a flag added to a command appears in its
//   --help, its man page and both completions with no second list to update.
#include "cli/help_docs.h"

#include <CLI/CLI.hpp>
#include <memory>

#include "cli/i18n.h"

namespace headroom {
namespace {

std::vector<std::string> OptionNames(const CLI::Option& opt) {
  std::vector<std::string> names;
  for (const auto& s : opt.get_snames()) names.push_back("-" + s);
  for (const auto& l : opt.get_lnames()) names.push_back("--" + l);
  return names;
}

}  // namespace

ValueKind ValueKindOf(std::string_view name) {
  static constexpr std::string_view kFiles[] = {
      "--journal", "--state",  "--out",      "--events",   "--log",    "--samples", "--report",
      "--csv",     "--config", "--nvml-lib", "--cuda-lib", "--python", "-o"};
  if (name == "--root" || name == "--logs") return ValueKind::kDirectory;
  for (const auto file : kFiles) {
    if (name == file) return ValueKind::kFile;
  }
  return ValueKind::kValue;
}

std::string JoinWords(std::span<const std::string> lines, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += sep;
    out += lines[i];
  }
  return out;
}

nlohmann::json AppSpec(const CLI::App& app) {
  nlohmann::json spec = {{"name", app.get_name()},
                         {"description", app.get_description()},
                         {"footer", app.get_footer()},
                         {"options", nlohmann::json::array()},
                         {"subcommands", nlohmann::json::array()}};
  const CLI::Option* help = app.get_help_ptr();
  for (const CLI::Option* opt : app.get_options()) {
    if (opt == help || opt == app.get_help_all_ptr()) continue;
    nlohmann::json o = {
        {"positional", opt->get_positional()}, {"value", opt->get_items_expected_max() > 0},
        {"type", opt->get_type_name()},        {"description", opt->get_description()},
        {"required", opt->get_required()},     {"repeatable", opt->get_items_expected_max() > 1}};
    if (opt->get_positional())
      o["names"] = nlohmann::json::array({opt->get_name()});
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

}  // namespace headroom
