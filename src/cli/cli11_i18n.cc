// Implementation notes.
//  - CLI::Formatter reads its fixed words from a label table (get_label("Usage")), so most
//    of the translation is filling that table with Tr(). Group names ("Options",
//    "Subcommands") are stored on each option or subcommand and are translated where they
//    are printed (make_group) or, for subcommands, set once in LocalizeHelp.
//  - make_option, make_subcommand and make_option_opts are rewritten here, not wrapped:
//    CLI11 pads the first column with setw, which counts bytes, so a translated "TEXT"
//    (two CJK characters, six bytes, four columns) would push the descriptions out of line.
//    Ours pad by DisplayWidth (base/display_width.h) and are otherwise CLI11 2.1's code
//    (Formatter.hpp).
//  - A validator's description is appended to the type name ("INT:INT in [1 - 10000]");
//    each part is translated on its own.
//  - Parse errors: CLI11 builds its messages in English with the values inside; the values
//    are matched back out by the error's type and one pattern per message (Error.hpp,
//    Validators.hpp of 2.1). Anything unmatched is returned as it is.
#include "cli/cli11_i18n.h"

#include <CLI/CLI.hpp>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "base/display_width.h"
#include "cli/i18n.h"

namespace headroom {
namespace {

// The label keys CLI::Formatter looks up, and the type names CLI11 prints for our options'
// value types (detail::type_name: std::string, integers, unsigned, floating point, bool).
constexpr const char* kLabels[] = {
    // TRANSLATORS: the help screen's first line: "Usage: headroom plan [OPTIONS] [model]".
    N_("Usage"),
    // TRANSLATORS: the placeholder for options in the usage line, "[OPTIONS]".
    N_("OPTIONS"), N_("SUBCOMMAND"), N_("SUBCOMMANDS"),
    // TRANSLATORS: the heading over the positional arguments (those without a flag).
    N_("Positionals"),
    // TRANSLATORS: after an option or argument that must be given.
    N_("REQUIRED"),
    // TRANSLATORS: "(Env:NAME)": the environment variable an option is read from.
    N_("Env"),
    // TRANSLATORS: "Needs: --a": the options that must come with this one.
    N_("Needs"),
    // TRANSLATORS: "Excludes: --a": the options that cannot come with this one.
    N_("Excludes"),
    // TRANSLATORS: the kind of value an option takes, after its name: "--seq TEXT".
    N_("TEXT"), N_("INT"), N_("UINT"), N_("FLOAT"), N_("BOOLEAN")};

// Default group names CLI11 gives options and subcommands, and its help flag's text.
// TRANSLATORS: the heading over a command's options in its help screen.
[[maybe_unused]] constexpr const char* kOptionsGroup = N_("Options");
// TRANSLATORS: the heading over a command's subcommands in its help screen.
constexpr const char* kSubcommandsGroup = N_("Subcommands");
constexpr const char* kHelpFlagText = N_("Print this help message and exit");

// One line of the help's two columns, as CLI::detail::format_help writes it, padded by
// display width.
std::string HelpLine(const std::string& name, const std::string& description, size_t width) {
  const std::string first = "  " + name;
  std::string out = PadToWidth(first, width);
  if (!description.empty()) {
    if (DisplayWidth(first) >= width) out += "\n" + std::string(width, ' ');
    for (const char c : description) {
      out += c;
      if (c == '\n') out += std::string(width, ' ');
    }
  }
  return out + "\n";
}

// A type name or a validator's description ("INT", "INT in [1 - 10000]"), translated.
std::string TypePart(const CLI::FormatterBase& f, const std::string& part) {
  static const std::regex kRange(R"((\w+) in \[(.*) - (.*)\])");
  std::smatch m;
  if (std::regex_match(part, m, kRange)) {
    // TRANSLATORS: the values an option accepts: "INT in [1 - 10000]"; {0} is the type.
    return TrFormat("{0} in [{1} - {2}]", f.get_label(m.str(1)), m.str(2), m.str(3));
  }
  return f.get_label(part);
}

class LocalizedFormatter : public CLI::Formatter {
 public:
  LocalizedFormatter() {
    for (const char* key : kLabels) label(key, Tr(key));
  }

  std::string make_group(std::string group, bool is_positional,
                         std::vector<const CLI::Option*> opts) const override {
    const std::string shown = Tr(group.c_str());
    return CLI::Formatter::make_group(shown, is_positional, std::move(opts));
  }

  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    return HelpLine(make_option_name(opt, is_positional) + make_option_opts(opt),
                    make_option_desc(opt), column_width_);
  }

  std::string make_subcommand(const CLI::App* sub) const override {
    return HelpLine(sub->get_display_name(true), sub->get_description(), column_width_);
  }

  std::string make_option_opts(const CLI::Option* opt) const override {
    if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
    std::string out;
    if (opt->get_type_size() != 0) {
      if (const std::string type = opt->get_type_name(); !type.empty()) {
        std::string shown;
        size_t start = 0;
        for (;;) {
          const size_t colon = type.find(':', start);
          shown += TypePart(*this, type.substr(start, colon - start));
          if (colon == std::string::npos) break;
          shown += ':';
          start = colon + 1;
        }
        out += " " + shown;
      }
      if (!opt->get_default_str().empty()) out += "=" + opt->get_default_str();
      if (opt->get_expected_max() == CLI::detail::expected_max_vector_size) {
        out += " ...";
      } else if (opt->get_expected_min() > 1) {
        out += " x " + std::to_string(opt->get_expected());
      }
      if (opt->get_required()) out += " " + get_label("REQUIRED");
    }
    if (!opt->get_envname().empty())
      out += " (" + get_label("Env") + ":" + opt->get_envname() + ")";
    if (!opt->get_needs().empty()) {
      out += " " + get_label("Needs") + ":";
      for (const CLI::Option* op : opt->get_needs()) out += " " + op->get_name();
    }
    if (!opt->get_excludes().empty()) {
      out += " " + get_label("Excludes") + ":";
      for (const CLI::Option* op : opt->get_excludes()) out += " " + op->get_name();
    }
    return out;
  }
};

}  // namespace

void LocalizeHelp(CLI::App& app) {
  app.formatter(std::make_shared<LocalizedFormatter>());
  if (CLI::Option* help = app.get_help_ptr();
      help != nullptr && help->get_description() == kHelpFlagText) {
    help->description(Tr(kHelpFlagText));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_group() == kSubcommandsGroup) sub->group(Tr(kSubcommandsGroup));
    LocalizeHelp(*sub);
  }
}

std::string ParseErrorText(const CLI::ParseError& e) {
  const std::string what = e.what();
  std::smatch m;
  const auto is = [&](const char* pattern) {
    return std::regex_match(what, m, std::regex(pattern));
  };
  const auto type = [](const std::string& name) { return std::string(Tr(name.c_str())); };
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    if (is("The following argument was not expected: (.*)")) {
      return TrFormat("The following argument was not expected: {}", m.str(1));
    }
    if (is("The following arguments were not expected: (.*)")) {
      return TrFormat("The following arguments were not expected: {}", m.str(1));
    }
  } else if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr) {
    if (is("The value (.*) is not an allowed value for (.*)")) {
      return TrFormat("The value {0} is not an allowed value for {1}", m.str(1), m.str(2));
    }
    if (is("Could not convert: (.*?) = (.*)"))
      return TrFormat("Could not convert: {0} = {1}", m.str(1), m.str(2));
    if (is("(.*): too many inputs for a flag"))
      return TrFormat("{}: too many inputs for a flag", m.str(1));
    if (is("(.*): Should be true/false or a number")) {
      return TrFormat("{}: Should be true/false or a number", m.str(1));
    }
  } else if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) {
    if (is(R"((.*?): Value (.*) not in range (\S+) to (\S+))")) {
      return TrFormat("{0}: Value {1} not in range {2} to {3}", m.str(1), m.str(2), m.str(3),
                      m.str(4));
    }
    if (is("(.*?): Value (.*) could not be converted")) {
      return TrFormat("{0}: Value {1} could not be converted", m.str(1), m.str(2));
    }
  } else if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
    // TRANSLATORS: CLI11's whole message when a command needs a subcommand and got none.
    if (what == "A subcommand") return Tr("A subcommand");
    if (is("(.*) is required")) return TrFormat("{} is required", m.str(1));
  } else if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    if (is(R"((.*): (\d+) required (\S+) missing)")) {
      // TRANSLATORS: "--symptom: 1 required TEXT missing": {1} values of type {2} are missing.
      return TrFormat("{0}: {1} required {2} missing", m.str(1), m.str(2), type(m.str(3)));
    }
    if (is(R"(Expected exactly (\d+) arguments to (.*), got (\d+))")) {
      return TrFormat("Expected exactly {0} arguments to {1}, got {2}", m.str(1), m.str(2),
                      m.str(3));
    }
    if (is(R"(Expected at least (\d+) arguments to (.*), got (\d+))")) {
      return TrFormat("Expected at least {0} arguments to {1}, got {2}", m.str(1), m.str(2),
                      m.str(3));
    }
    if (is(R"((.*): At least (\d+) required but received (\d+))")) {
      return TrFormat("{0}: At least {1} required but received {2}", m.str(1), m.str(2), m.str(3));
    }
    if (is(R"((.*): At Most (\d+) required but received (\d+))")) {
      return TrFormat("{0}: At Most {1} required but received {2}", m.str(1), m.str(2), m.str(3));
    }
    if (is("(.*) was given a disallowed flag override")) {
      return TrFormat("{} was given a disallowed flag override", m.str(1));
    }
  } else if (dynamic_cast<const CLI::RequiresError*>(&e) != nullptr) {
    if (is("(.*) requires (.*)")) return TrFormat("{0} requires {1}", m.str(1), m.str(2));
  } else if (dynamic_cast<const CLI::ExcludesError*>(&e) != nullptr) {
    if (is("(.*) excludes (.*)")) return TrFormat("{0} excludes {1}", m.str(1), m.str(2));
  } else if (dynamic_cast<const CLI::FileError*>(&e) != nullptr) {
    if (is(R"((.*) was not readable \(missing\?\))"))
      return TrFormat("{} was not readable (missing?)", m.str(1));
  }
  return what;
}

}  // namespace headroom
