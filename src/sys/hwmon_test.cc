#include "sys/hwmon.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "testing_files.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;

using Files = std::map<std::string, std::string, std::less<>>;

TEST(SysfsParse, IntegersAsTheKernelPrintsThem) {
  EXPECT_EQ(ParseSysfsInteger("45000\n"), 45000);
  EXPECT_EQ(ParseSysfsInteger("-256000\n"), -256000);
  EXPECT_EQ(ParseSysfsInteger("0"), 0);
  EXPECT_EQ(ParseSysfsInteger(" 12 \r\n"), 12);
  EXPECT_EQ(ParseSysfsUnsigned("25000000\n"), 25'000'000u);
  EXPECT_EQ(ParseSysfsUnsigned("18446744073709551615\n"), UINT64_MAX);
}

TEST(SysfsParse, HostileTextIsNullopt) {
  for (const std::string_view text : std::initializer_list<std::string_view>{
           "", "\n", " ", "abc", "12abc", "12 34", "+5", "0x10", "1e3", "--1", "-",
           "99999999999999999999", "4 5\n", std::string_view("12\0", 3), "\xff\xfe"}) {
    EXPECT_FALSE(ParseSysfsInteger(text)) << '"' << text << '"';
    EXPECT_FALSE(ParseSysfsUnsigned(text)) << '"' << text << '"';
  }
  EXPECT_FALSE(ParseSysfsUnsigned("-1\n"));                  // negative power is not a reading
  EXPECT_FALSE(ParseSysfsUnsigned("18446744073709551616"));  // 2^64
  EXPECT_FALSE(ParseSysfsInteger("9223372036854775808"));    // 2^63
}

TEST(SysfsParse, MillidegreesWithOfflineSensor) {
  EXPECT_DOUBLE_EQ(*ParseMillidegreesC("45500\n"), 45.5);
  EXPECT_DOUBLE_EQ(*ParseMillidegreesC("-40000\n"), -40.0);  // a real cold reading
  EXPECT_DOUBLE_EQ(*ParseMillidegreesC("0\n"), 0.0);
  EXPECT_FALSE(ParseMillidegreesC("-256000\n"));  // Jetson: sensor offline
  EXPECT_FALSE(ParseMillidegreesC("-273151\n"));  // below absolute zero
  EXPECT_DOUBLE_EQ(*ParseMillidegreesC("-273150\n"), -273.15);
  EXPECT_FALSE(ParseMillidegreesC("N/A\n"));
}

TEST(SysfsParse, LabelsAreOneCleanLine) {
  EXPECT_EQ(ParseSysfsLabel("syspl1\n"), "syspl1");
  EXPECT_EQ(ParseSysfsLabel("Sensor 1\n"), "Sensor 1");
  EXPECT_EQ(ParseSysfsLabel("a\nb\n"), "a");
  EXPECT_EQ(ParseSysfsLabel("\x1b[31mred\n"), "?[31mred");  // no terminal escapes
  EXPECT_EQ(ParseSysfsLabel(std::string(1000, 'x')), std::string(64, 'x'));
  EXPECT_EQ(ParseSysfsLabel(""), "");
}

TEST(HwmonParse, ChannelsByFileNameNotOrder) {
  const Files files = {
      {"name", "spbm\n"},
      {"power13_label", "syspl1\n"},
      {"power13_input", "98000000\n"},
      {"power13_cap", "100000000\n"},
      {"power2_input", "17000000\n"},  // no label
      {"power2_average", "16500000\n"},
      {"energy4_label", "gpu\n"},
      {"energy4_input", "402117000\n"},
      {"temp7_label", "gpu\n"},
      {"temp7_input", "61500\n"},
      {"prochot", "1\n"},
      {"pl_level", "2\n"},
      {"in1_input", "5032\n"},  // voltage: ignored
      {"uevent", "DRIVER=spbm\n"},
  };
  const HwmonDevice d = ParseHwmonDevice("hwmon2", files);
  EXPECT_EQ(d.id, "hwmon2");
  EXPECT_EQ(d.name, "spbm");
  ASSERT_EQ(d.powers.size(), 2u);
  EXPECT_EQ(d.powers[0].channel, 2);  // sorted by channel
  EXPECT_EQ(d.powers[0].label, "");
  EXPECT_EQ(d.powers[0].input_uw, 17'000'000u);
  EXPECT_EQ(d.powers[0].average_uw, 16'500'000u);
  EXPECT_FALSE(d.powers[0].cap_uw);
  const HwmonPower* syspl1 = d.PowerByLabel("syspl1");
  ASSERT_NE(syspl1, nullptr);
  EXPECT_EQ(syspl1->channel, 13);
  EXPECT_EQ(syspl1->input_uw, 98'000'000u);
  EXPECT_EQ(syspl1->cap_uw, 100'000'000u);
  ASSERT_NE(d.EnergyByLabel("gpu"), nullptr);
  EXPECT_EQ(d.EnergyByLabel("gpu")->input_uj, 402'117'000u);
  ASSERT_NE(d.TempByLabel("gpu"), nullptr);
  EXPECT_DOUBLE_EQ(*d.TempByLabel("gpu")->celsius, 61.5);
  EXPECT_EQ(d.prochot, true);
  EXPECT_EQ(d.pl_level, 2);
  EXPECT_EQ(d.PowerByLabel("nope"), nullptr);
}

TEST(HwmonParse, HostileFilesCostOnlyTheirOwnValue) {
  const Files files = {
      {"name", "\xff\x01weird\n"}, {"temp1_input", "garbage\n"},
      {"temp1_label", "cpu\n"},    {"temp2_input", "-256000\n"},
      {"temp3_input", "50000\n"},  {"power1_input", "-5\n"},
      {"power1_label", "gpu\n"},   {"temp99999_input", "1\n"},  // channel number too large: ignored
      {"temp_input", "1\n"},                                    // no channel number
      {"temp1input", "1\n"},                                    // no '_'
      {"temp1_", "1\n"},                                        // no item
      {"Temp1_input", "1\n"},                                   // not lower case
      {"prochot", "maybe\n"},      {"energy1_input", ""},
  };
  const HwmonDevice d = ParseHwmonDevice("hwmon9", files);
  EXPECT_EQ(d.name, "??weird");
  ASSERT_EQ(d.temps.size(), 3u);
  EXPECT_EQ(d.temps[0].label, "cpu");
  EXPECT_FALSE(d.temps[0].celsius);
  EXPECT_FALSE(d.temps[1].celsius);  // offline
  EXPECT_DOUBLE_EQ(*d.temps[2].celsius, 50.0);
  ASSERT_EQ(d.powers.size(), 1u);
  EXPECT_EQ(d.powers[0].label, "gpu");
  EXPECT_FALSE(d.powers[0].input_uw);
  EXPECT_FALSE(d.prochot);
  ASSERT_EQ(d.energies.size(), 1u);
  EXPECT_FALSE(d.energies[0].input_uj);
}

TEST(ThermalZoneParse, TypeAndTemperature) {
  const ThermalZone z = ParseThermalZone("thermal_zone3", "cv0-thermal\n", "-256000\n");
  EXPECT_EQ(z.id, "thermal_zone3");
  EXPECT_EQ(z.type, "cv0-thermal");
  EXPECT_FALSE(z.celsius);
  EXPECT_DOUBLE_EQ(*ParseThermalZone("z", "cpu-thermal\n", "45500\n").celsius, 45.5);
}

TEST(HwmonRead, Gb10TreeWithSpbm) {
  const std::vector<HwmonDevice> devices = ReadHwmon(testing::FixtureRoot("gb10-idle"));
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(devices[0].name, "acpitz");
  EXPECT_DOUBLE_EQ(*devices[0].temps.at(0).celsius, 41.0);
  EXPECT_EQ(devices[1].name, "nvme");
  ASSERT_NE(devices[1].TempByLabel("Composite"), nullptr);
  EXPECT_DOUBLE_EQ(*devices[1].TempByLabel("Composite")->celsius, 38.85);

  const HwmonDevice& spbm = devices[2];
  EXPECT_EQ(spbm.id, "hwmon2");
  EXPECT_EQ(spbm.name, "spbm");
  EXPECT_EQ(spbm.powers.size(), 18u);
  EXPECT_EQ(spbm.energies.size(), 4u);
  EXPECT_EQ(spbm.temps.size(), 9u);
  // The figures of tests/fixtures/README.md (spark_hwmon README, idle column).
  EXPECT_EQ(spbm.PowerByLabel("sys_total")->input_uw, 25'000'000u);
  EXPECT_EQ(spbm.PowerByLabel("gpu")->input_uw, 5'000'000u);
  EXPECT_EQ(spbm.PowerByLabel("syspl1")->channel, 13);
  EXPECT_EQ(spbm.PowerByLabel("syspl1")->cap_uw, 231'000'000u);
  EXPECT_FALSE(spbm.PowerByLabel("sys_total")->cap_uw);
  EXPECT_EQ(spbm.EnergyByLabel("gpu")->input_uj, 402'117'000u);
  EXPECT_DOUBLE_EQ(*spbm.TempByLabel("dla")->celsius, 27.3);
  EXPECT_EQ(spbm.prochot, false);
  EXPECT_EQ(spbm.pl_level, 0);

  const std::vector<ThermalZone> zones = ReadThermalZones(testing::FixtureRoot("gb10-idle"));
  ASSERT_EQ(zones.size(), 1u);
  EXPECT_EQ(zones[0].type, "acpitz");
  EXPECT_DOUBLE_EQ(*zones[0].celsius, 41.0);
}

TEST(HwmonRead, JetsonTreeWithOfflineZones) {
  const std::vector<ThermalZone> zones = ReadThermalZones(testing::FixtureRoot("jetson-orin"));
  ASSERT_EQ(zones.size(), 9u);
  EXPECT_EQ(zones[0].type, "cpu-thermal");
  EXPECT_DOUBLE_EQ(*zones[0].celsius, 45.5);
  for (int i : {2, 3, 4}) {
    EXPECT_EQ(zones[i].type, "cv" + std::to_string(i - 2) + "-thermal");
    EXPECT_FALSE(zones[i].celsius) << zones[i].id;  // -256000: offline
  }
  EXPECT_DOUBLE_EQ(*zones[8].celsius, 45.5);

  const std::vector<HwmonDevice> devices = ReadHwmon(testing::FixtureRoot("jetson-orin"));
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(devices[0].id, "hwmon0");
  EXPECT_EQ(devices[1].id, "hwmon1");
  EXPECT_EQ(devices[2].id, "hwmon10");  // numeric order: 10 after 1, not between 1 and 2
  EXPECT_FALSE(devices[0].TempByLabel("cv0")->celsius);
  EXPECT_EQ(devices[1].name, "ina3221");
  EXPECT_TRUE(devices[1].powers.empty());  // voltage and current channels are not collected
  // An old-style driver keeps its attributes in device/; hwmonN/name still wins.
  EXPECT_EQ(devices[2].name, "pwmfan");
  ASSERT_EQ(devices[2].temps.size(), 1u);
  EXPECT_DOUBLE_EQ(*devices[2].temps[0].celsius, 30.0);
}

TEST(HwmonRead, MissingTreesAreEmptyNotErrors) {
  EXPECT_TRUE(ReadHwmon(testing::FixtureRoot("old-kernel")).empty());
  EXPECT_TRUE(ReadThermalZones(testing::FixtureRoot("old-kernel")).empty());
  EXPECT_TRUE(ReadHwmon(SysRoot("/nonexistent/headroom/root")).empty());
}

}  // namespace
}  // namespace headroom
