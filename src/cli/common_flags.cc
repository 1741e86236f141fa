#include "cli/common_flags.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/i18n.h"

namespace headroom {

CLI::Option* AddRootFlag(CLI::App& app, std::string& root) {
  return app.add_option("--root", root,
                        Tr("read proc/, sys/ and etc/ below this directory instead of /"));
}

SysRoot RootFromFlag(const CliEnv& env, const std::string& root) {
  if (root.empty()) return SysRoot(env.default_root);
  SysRoot given{std::filesystem::path(root)};
  // With an error code: a root the user cannot enter is an error line, not an exception.
  std::error_code ec;
  const bool has_proc = std::filesystem::is_directory(given.Path("proc"), ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw UsageError{TrFormat("--root: cannot look into {}: {}", root, ec.message())};
  if (!has_proc) throw UsageError{TrFormat("--root: {} has no proc/ directory", root)};
  return given;
}

CLI::Option* AddJournalFlag(CLI::App& app, std::string& journal, const std::string& names) {
  return app.add_option(names, journal,
                        Tr("the journal (default: $HEADROOM_JOURNAL, else journal in config.toml, "
                           "else $XDG_STATE_HOME/headroom/journal.db)"));
}

CLI::Option* AddJsonFlag(CLI::App& app, bool& json) {
  return app.add_flag("--json", json, Tr("print JSON (schema_version 1)"));
}

void PrintJson(const CliEnv& env, const nlohmann::ordered_json& document) {
  std::fprintf(
      env.out, "%s\n",
      document.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
}

CLI::Option* AddNvmlLibFlag(CLI::App& app, std::string& nvml_lib) {
  return app.add_option(
      "--nvml-lib", nvml_lib,
      Tr("load this libnvidia-ml (default: $HEADROOM_NVML_LIB, else libnvidia-ml.so.1)"));
}

CLI::Option* AddCudaLibFlag(CLI::App& app, std::string& cuda_lib) {
  return app.add_option("--cuda-lib", cuda_lib,
                        Tr("load this libcuda (default: $HEADROOM_CUDA_LIB, else libcuda.so.1)"));
}

}  // namespace headroom
