// Hwmon and thermal zones: temperatures, power and energy that NVML does not give.
//
// /sys/class/hwmon/hwmonN/ holds one file per value (Documentation/hwmon/sysfs-interface):
//   name              the driver's name ("spbm", "nvme", "acpitz", "ina3221")
//   tempK_input       millidegrees C          tempK_label   channel name
//   powerK_input      microwatts              powerK_label, powerK_average (uW), powerK_cap (uW)
//   energyK_input     microjoules, cumulative energyK_label
// On a DGX Spark with the out-of-tree spark_hwmon ("spbm") driver this is the only view of
// system power, the SysPL1/PL1 controllers and PROCHOT (reference section 2.3): hwmon name
// "spbm", power labels sys_total, soc_pkg, cpu_gpu, cpu_p, cpu_e, vcore, dc_input, gpu,
// prereg, dla, pl1, pl2, syspl1, syspl2, budget_*; energy pkg, cpu_e, cpu_p, gpu; temps
// tj_max, tj_max_c, cpu_*_clu*, gpu, soc, dla; plain attributes `prochot` (0/1) and
// `pl_level` beside them (jaim12005/spark_hwmon spbm.c).
//
// /sys/class/thermal/thermal_zoneN/{type,temp}: millidegrees C. Jetson reports an offline
// sensor as -256000 (-256 C; jetson_stats temperature.py): that is nullopt, not a reading.
//
// Parsing apart from reading (docs/style.md rule 2): the Parse* functions take file contents;
// Read* walk a SysRoot. Channels are found by file name, never by position, and anything
// that does not parse is nullopt: a broken sensor must not cost the other readings.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sys/sysroot.h"

namespace headroom {

struct HwmonTemp {
  int channel = 0;                // K in tempK_*
  std::string label;              // tempK_label, empty when the driver gives none
  std::optional<double> celsius;  // tempK_input / 1000; nullopt when missing or offline
};

struct HwmonPower {
  int channel = 0;
  std::string label;
  std::optional<uint64_t> input_uw;    // powerK_input
  std::optional<uint64_t> average_uw;  // powerK_average
  std::optional<uint64_t> cap_uw;      // powerK_cap: the limit the controller holds to
};

struct HwmonEnergy {
  int channel = 0;
  std::string label;
  std::optional<uint64_t> input_uj;  // energyK_input, cumulative (wraps per driver)
};

struct HwmonDevice {
  std::string id;                     // "hwmon3"
  std::string name;                   // contents of `name`; empty when missing
  std::vector<HwmonTemp> temps;       // by channel number
  std::vector<HwmonPower> powers;     // by channel number
  std::vector<HwmonEnergy> energies;  // by channel number
  // spbm's status attributes: PROCHOT asserted (thermal throttle), power-limit level.
  std::optional<bool> prochot;
  std::optional<int64_t> pl_level;

  // The first channel with this label, or nullptr.
  const HwmonTemp* TempByLabel(std::string_view label) const;
  const HwmonPower* PowerByLabel(std::string_view label) const;
  const HwmonEnergy* EnergyByLabel(std::string_view label) const;
};

struct ThermalZone {
  std::string id;    // "thermal_zone0"
  std::string type;  // contents of `type` ("cpu-thermal", "acpitz"); empty when missing
  std::optional<double> celsius;  // nullopt when missing, unparsable or offline
};

// A sysfs integer: optional blanks, an optional '-', digits, optional blanks (the kernel
// prints "%d\n" or "%ld\n"). nullopt for anything else, including overflow of int64.
std::optional<int64_t> ParseSysfsInteger(std::string_view text);

// A non-negative sysfs integer (power, energy, caps): nullopt for negative values.
std::optional<uint64_t> ParseSysfsUnsigned(std::string_view text);

// Millidegrees C to degrees. nullopt for -256000 (an offline Jetson sensor) and for
// anything below absolute zero (-273150), which no sensor can read.
std::optional<double> ParseMillidegreesC(std::string_view text);

// A name or label: the first line, trailing blanks removed, at most 64 bytes, bytes outside
// printable ASCII replaced by '?' so a hostile label cannot inject terminal escapes.
std::string ParseSysfsLabel(std::string_view text);

// One hwmon directory from its files (file name -> contents). Files that are not hwmon
// attributes this code knows are ignored (voltage and current channels included).
HwmonDevice ParseHwmonDevice(std::string_view id,
                             const std::map<std::string, std::string, std::less<>>& files);

ThermalZone ParseThermalZone(std::string_view id, std::string_view type_text,
                             std::string_view temp_text);

// Every sys/class/hwmon/hwmonN below `root`, sorted by N. Attributes are read from hwmonN/
// and, as old drivers put them there, from hwmonN/device/ (hwmonN/ wins). A missing
// sys/class/hwmon gives an empty list: a machine without sensors is not an error.
std::vector<HwmonDevice> ReadHwmon(const SysRoot& root);

// Every sys/class/thermal/thermal_zoneN below `root`, sorted by N; empty when none.
std::vector<ThermalZone> ReadThermalZones(const SysRoot& root);

}  // namespace headroom
