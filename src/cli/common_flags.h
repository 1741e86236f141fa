// The flags several commands share, each defined once here with one help text, so that it is
// spelled, described and completed the same in every command's --help, man page and shell
// completion. A command adds the ones it takes in its Define function (cli.h).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "sys/sysroot.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace headroom {

// --root DIR: read the machine's files (proc/, sys/, etc/) below DIR instead of / (fixture
// trees); empty when not given (the command then uses CliEnv::default_root).
CLI::Option* AddRootFlag(CLI::App& app, std::string& root);

struct CliEnv;
// The system root --root names (a UsageError when DIR has no proc/), or `default_root`
// when it was not given.
SysRoot RootFromFlag(const CliEnv& env, const std::string& root);

// --journal FILE: the journal; empty when not given (JournalPath in cli/config_defaults.h
// then picks the configured one). `names` lets a command keep an older name beside it
// (sweep's "--state,--journal").
CLI::Option* AddJournalFlag(CLI::App& app, std::string& journal,
                            const std::string& names = "--journal");

// --json: print JSON instead of text (main then runs the command in English: cli.h GaveJson).
CLI::Option* AddJsonFlag(CLI::App& app, bool& json);

// What --json prints: the document on env.out, indented by two spaces, with a newline; bytes
// that are not UTF-8 (read or stored text need not be) are replaced, where dump would throw.
void PrintJson(const CliEnv& env, const nlohmann::ordered_json& document);

// --nvml-lib FILE: the NVML library to load (ResolveNvmlLibrary in gpu/nvml.h gives the
// default).
CLI::Option* AddNvmlLibFlag(CLI::App& app, std::string& nvml_lib);

// --cuda-lib FILE: the CUDA driver library to load.
CLI::Option* AddCudaLibFlag(CLI::App& app, std::string& cuda_lib);

}  // namespace headroom
