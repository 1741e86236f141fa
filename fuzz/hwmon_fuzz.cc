// Fuzz target for the hwmon and thermal-zone parsers. The input is the text of one
// attribute file for the scalar parsers, and also a whole hwmon directory: NUL-separated
// "name\0contents\0name\0contents..." pairs for ParseHwmonDevice. Invariants: no crash,
// labels stay printable and at most 64 bytes, channels come out sorted and unique, and the
// offline sentinel never reads as a temperature.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "sys/hwmon.h"

namespace {

bool CleanLabel(const std::string& s) {
  if (s.size() > 64) return false;
  for (const char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) return false;
  }
  return true;
}

template <typename Channels>
bool SortedUnique(const Channels& channels) {
  for (size_t i = 1; i < channels.size(); ++i) {
    if (channels[i - 1].channel >= channels[i].channel) return false;
  }
  for (const auto& c : channels) {
    if (!CleanLabel(c.label)) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)headroom::ParseSysfsInteger(text);
  (void)headroom::ParseSysfsUnsigned(text);
  if (const auto c = headroom::ParseMillidegreesC(text); c && *c == -256.0) std::abort();
  if (!CleanLabel(headroom::ParseSysfsLabel(text))) std::abort();

  std::map<std::string, std::string, std::less<>> files;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t name_end = text.find('\0', pos);
    if (name_end == std::string_view::npos) break;
    size_t value_end = text.find('\0', name_end + 1);
    if (value_end == std::string_view::npos) value_end = text.size();
    files[std::string(text.substr(pos, name_end - pos))] =
        std::string(text.substr(name_end + 1, value_end - name_end - 1));
    pos = value_end + 1;
  }
  const headroom::HwmonDevice d = headroom::ParseHwmonDevice("hwmon0", files);
  if (!CleanLabel(d.name) || !SortedUnique(d.temps) || !SortedUnique(d.powers) ||
      !SortedUnique(d.energies)) {
    std::abort();
  }
  for (const auto& t : d.temps) {
    if (t.celsius && *t.celsius < -273.15) std::abort();
  }
  const headroom::ThermalZone z = headroom::ParseThermalZone("z", text, text);
  if (!CleanLabel(z.type)) std::abort();
  return 0;
}
