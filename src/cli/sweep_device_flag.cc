#include "cli/sweep_device_flag.h"

#include <fmt/format.h>

#include "base/mem_level.h"
#include "cli/cli.h"
#include "cli/i18n.h"
#include "cli/message_text.h"

namespace headroom {

std::optional<uint64_t> SweepDeviceLimit(const std::string& device_limit, const std::string& limit,
                                         const std::string& platform) {
  const bool discrete = platform == "discrete";
  if (!device_limit.empty() && !limit.empty()) {
    throw UsageError{
        Tr("--device-limit and --limit: give one (--platform discrete reads --limit as the "
           "device's)")};
  }
  if (device_limit.empty() && !discrete) return std::nullopt;
  const std::string& text = device_limit.empty() ? limit : device_limit;
  const char* flag = device_limit.empty() ? "--limit" : "--device-limit";
  if (text.empty()) {
    throw UsageError{
        Tr("--platform discrete needs --limit SIZE: the device memory a trial may "
           "reach (e.g. 80GiB)")};
  }
  const auto level = ParseMemLevel(text);
  if (!level) throw UsageError{fmt::format("{}: {}", flag, TranslatedText(level.error().what))};
  if (level->is_percent) {
    // TRANSLATORS: {0} is the flag, {1} the text given.
    throw UsageError{
        TrFormat("{0}: {1}: give the device's size with its unit (e.g. 80GiB); a percentage "
                 "would be of the host's MemTotal",
                 flag, text)};
  }
  return level->bytes;
}

}  // namespace headroom
