// Implementation notes.
//
// Attribute names are "<type><K>_<item>" (Documentation/hwmon/sysfs-interface): the type is
// letters, K a channel number starting at 1 (0 for some drivers' temps), the item after the
// first '_'. Only temp, power and energy channels are collected; in/curr/fan and the rest
// are left for when something needs them. Channel numbers above kMaxChannel are refused so
// a hostile tree cannot make us build a huge table.
//
// Files are read through SysRoot with a 4 KiB cap: a sysfs attribute is one page at most
// (sysfs_emit), so anything larger is not an attribute. A file that cannot be read (EIO from
// a sensor on a sleeping bus, ENODATA from spbm when the firmware lacks a register) is left
// out, which leaves its value nullopt.
#include "sys/hwmon.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <system_error>

#include "base/text.h"

namespace headroom {
namespace {

constexpr int kMaxChannel = 4096;
constexpr size_t kMaxLabelBytes = 64;
constexpr size_t kMaxAttributeBytes = 4096;

// Offline sensor, as Jetson thermal zones report it (jetson_stats temperature.py).
constexpr int64_t kOfflineMillidegrees = -256000;
constexpr int64_t kAbsoluteZeroMillidegrees = -273150;

// "temp12_input" -> {"temp", 12, "input"}; false when the name is not of that shape.
struct AttributeName {
  std::string_view type;
  int channel = 0;
  std::string_view item;
};

bool SplitAttributeName(std::string_view file, AttributeName* out) {
  size_t i = 0;
  while (i < file.size() && file[i] >= 'a' && file[i] <= 'z') ++i;
  if (i == 0) return false;
  const size_t digits_begin = i;
  while (i < file.size() && file[i] >= '0' && file[i] <= '9') ++i;
  if (i == digits_begin || i - digits_begin > 4 || i >= file.size() || file[i] != '_') {
    return false;
  }
  int channel = 0;
  std::from_chars(file.data() + digits_begin, file.data() + i, channel);
  if (channel > kMaxChannel) return false;
  out->type = file.substr(0, digits_begin);
  out->channel = channel;
  out->item = file.substr(i + 1);
  return !out->item.empty();
}

// The entry for `channel` in a vector kept sorted by channel, created when absent.
template <typename Channel>
Channel& ChannelEntry(std::vector<Channel>& channels, int channel) {
  auto it = std::lower_bound(channels.begin(), channels.end(), channel,
                             [](const Channel& c, int k) { return c.channel < k; });
  if (it == channels.end() || it->channel != channel) {
    it = channels.insert(it, Channel{});
    it->channel = channel;
  }
  return *it;
}

template <typename Channel>
const Channel* ByLabel(const std::vector<Channel>& channels, std::string_view label) {
  for (const Channel& c : channels) {
    if (c.label == label) return &c;
  }
  return nullptr;
}

// "hwmon12" -> 12 for sorting; entries without a number sort last, by name.
bool ByNumericSuffix(const std::string& a, const std::string& b, std::string_view prefix) {
  auto number = [&](const std::string& s) {
    int n = -1;
    if (s.starts_with(prefix)) {
      const char* begin = s.data() + prefix.size();
      const auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), n);
      if (ec != std::errc() || ptr != s.data() + s.size()) n = -1;
    }
    return n < 0 ? std::numeric_limits<int>::max() : n;
  };
  const int na = number(a), nb = number(b);
  return na != nb ? na < nb : a < b;
}

// Names of the entries of `dir` starting with `prefix`, sorted by their number.
std::vector<std::string> ListNumbered(const std::filesystem::path& dir, std::string_view prefix) {
  std::vector<std::string> names;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.starts_with(prefix)) names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    return ByNumericSuffix(a, b, prefix);
  });
  return names;
}

bool IsWantedAttribute(std::string_view file) {
  if (file == "name" || file == "prochot" || file == "pl_level") return true;
  AttributeName a;
  return SplitAttributeName(file, &a) &&
         (a.type == "temp" || a.type == "power" || a.type == "energy");
}

// Reads the wanted attribute files of `relative_dir` into `files` (existing keys win).
void ReadAttributes(const SysRoot& root, const std::string& relative_dir,
                    std::map<std::string, std::string, std::less<>>& files) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(root.Path(relative_dir), ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (!IsWantedAttribute(file) || files.contains(file)) continue;
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec)) continue;
    auto text = root.ReadFile(relative_dir + "/" + file, kMaxAttributeBytes);
    if (text.ok()) files.emplace(file, std::move(text).value());
  }
}

}  // namespace

std::optional<int64_t> ParseSysfsInteger(std::string_view text) {
  text = TrimBlanks(text);
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  // from_chars takes a '-' but no '+', no "0x", no inner blanks: exactly the kernel's %d.
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<uint64_t> ParseSysfsUnsigned(std::string_view text) {
  text = TrimBlanks(text);
  if (text.empty() || text.front() == '-') return std::nullopt;
  uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> ParseMillidegreesC(std::string_view text) {
  const auto millidegrees = ParseSysfsInteger(text);
  if (!millidegrees || *millidegrees == kOfflineMillidegrees ||
      *millidegrees < kAbsoluteZeroMillidegrees) {
    return std::nullopt;
  }
  return static_cast<double>(*millidegrees) / 1000.0;
}

std::string ParseSysfsLabel(std::string_view text) {
  text = text.substr(0, text.find('\n'));
  text = TrimBlanks(text.substr(0, kMaxLabelBytes));
  std::string label(text);
  for (char& c : label) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) c = '?';
  }
  return label;
}

HwmonDevice ParseHwmonDevice(std::string_view id,
                             const std::map<std::string, std::string, std::less<>>& files) {
  HwmonDevice device;
  device.id = std::string(id);
  for (const auto& [file, text] : files) {
    if (file == "name") {
      device.name = ParseSysfsLabel(text);
      continue;
    }
    if (file == "prochot") {
      if (const auto v = ParseSysfsInteger(text)) device.prochot = *v != 0;
      continue;
    }
    if (file == "pl_level") {
      device.pl_level = ParseSysfsInteger(text);
      continue;
    }
    AttributeName a;
    if (!SplitAttributeName(file, &a)) continue;
    if (a.type == "temp") {
      if (a.item == "input")
        ChannelEntry(device.temps, a.channel).celsius = ParseMillidegreesC(text);
      if (a.item == "label") ChannelEntry(device.temps, a.channel).label = ParseSysfsLabel(text);
    } else if (a.type == "power") {
      if (a.item == "input")
        ChannelEntry(device.powers, a.channel).input_uw = ParseSysfsUnsigned(text);
      if (a.item == "average") {
        ChannelEntry(device.powers, a.channel).average_uw = ParseSysfsUnsigned(text);
      }
      if (a.item == "cap") ChannelEntry(device.powers, a.channel).cap_uw = ParseSysfsUnsigned(text);
      if (a.item == "label") ChannelEntry(device.powers, a.channel).label = ParseSysfsLabel(text);
    } else if (a.type == "energy") {
      if (a.item == "input") {
        ChannelEntry(device.energies, a.channel).input_uj = ParseSysfsUnsigned(text);
      }
      if (a.item == "label") ChannelEntry(device.energies, a.channel).label = ParseSysfsLabel(text);
    }
  }
  return device;
}

ThermalZone ParseThermalZone(std::string_view id, std::string_view type_text,
                             std::string_view temp_text) {
  return ThermalZone{std::string(id), ParseSysfsLabel(type_text), ParseMillidegreesC(temp_text)};
}

const HwmonTemp* HwmonDevice::TempByLabel(std::string_view label) const {
  return ByLabel(temps, label);
}
const HwmonPower* HwmonDevice::PowerByLabel(std::string_view label) const {
  return ByLabel(powers, label);
}
const HwmonEnergy* HwmonDevice::EnergyByLabel(std::string_view label) const {
  return ByLabel(energies, label);
}

std::vector<HwmonDevice> ReadHwmon(const SysRoot& root) {
  constexpr std::string_view kDir = "sys/class/hwmon";
  std::vector<HwmonDevice> devices;
  for (const std::string& id : ListNumbered(root.Path(kDir), "hwmon")) {
    const std::string dir = std::string(kDir) + "/" + id;
    std::map<std::string, std::string, std::less<>> files;
    ReadAttributes(root, dir, files);
    ReadAttributes(root, dir + "/device", files);
    devices.push_back(ParseHwmonDevice(id, files));
  }
  return devices;
}

std::vector<ThermalZone> ReadThermalZones(const SysRoot& root) {
  constexpr std::string_view kDir = "sys/class/thermal";
  std::vector<ThermalZone> zones;
  for (const std::string& id : ListNumbered(root.Path(kDir), "thermal_zone")) {
    const std::string dir = std::string(kDir) + "/" + id;
    // A zone whose temp cannot be read (some drivers answer EINVAL while suspended) still
    // appears, with no temperature.
    const auto type = root.ReadFile(dir + "/type", kMaxAttributeBytes);
    const auto temp = root.ReadFile(dir + "/temp", kMaxAttributeBytes);
    zones.push_back(ParseThermalZone(id, type.ok() ? std::string_view(*type) : "",
                                     temp.ok() ? std::string_view(*temp) : ""));
  }
  return zones;
}

}  // namespace headroom
