// Fuzz target for plan --from's front end (plan/run_config.h): YAML through yaml-cpp's events
// into a bounded tree (base/yaml_tree.h), the format's detection and its reader. Invariants
// in fuzz/plan_targets.h RunConfigHolds. Seeds: fuzz/corpus/run_config/ (real run configs and
// hostile ones: an alias bomb, deep nesting, wrong types).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "plan_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!headroom::fuzz::RunConfigHolds(std::string_view(reinterpret_cast<const char*>(data), size)))
    std::abort();
  return 0;
}
