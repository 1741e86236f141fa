// The Nvml class against the fake libnvidia-ml (tests/fakes/fake_nvml.cc): the real dlopen,
// dlsym table, fallbacks and n/a handling, one scenario per test.
#include "gpu/nvml.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "gpu/gpu.h"
#include "gpu/platform.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;

// Writes `script` to a file and points the fake library at it; removes both on destruction.
class FakeScript {
 public:
  explicit FakeScript(const std::string& script) {
    path_ =
        fs::temp_directory_path() / ("headroom-fake-nvml-" + std::to_string(::getpid()) + ".txt");
    std::ofstream(path_) << script;
    ::setenv("HEADROOM_FAKE_NVML_SCRIPT", path_.c_str(), 1);
  }
  ~FakeScript() {
    ::unsetenv("HEADROOM_FAKE_NVML_SCRIPT");
    fs::remove(path_);
  }

 private:
  fs::path path_;
};

std::unique_ptr<Nvml> OpenOrFail(const char* library) {
  auto nvml = Nvml::Open(library);
  EXPECT_TRUE(nvml.ok()) << EnglishText(nvml.error().what);
  return nvml.ok() ? std::move(nvml).value() : nullptr;
}

// The entry for `call` in reading.unavailable, or nullptr.
const GpuCallStatus* Unavailable(const GpuReading& r, std::string_view call) {
  const auto it = std::find_if(r.unavailable.begin(), r.unavailable.end(),
                               [&](const GpuCallStatus& s) { return s.call == call; });
  return it == r.unavailable.end() ? nullptr : &*it;
}

TEST(NvmlFake, Gb10MemoryIsNotSupportedAndProfileIsGb10) {
  FakeScript script("scenario gb10\ndegrade_after 3\n");
  auto nvml = OpenOrFail(HEADROOM_FAKE_NVML_PATH);
  ASSERT_TRUE(nvml);
  ASSERT_EQ(nvml->device_count(), 1u);

  const GpuReading r = nvml->ReadDevice(0);
  EXPECT_EQ(r.name, "NVIDIA GB10");
  EXPECT_EQ(r.driver_version, "580.95.05");
  EXPECT_EQ(r.cuda_driver_version, 13000);
  EXPECT_EQ(r.compute_capability_major, 12);
  EXPECT_EQ(r.compute_capability_minor, 1);
  // NOT_SUPPORTED is "no value", never 0.
  EXPECT_FALSE(r.memory_total_bytes);
  EXPECT_FALSE(r.memory_used_bytes);
  EXPECT_FALSE(r.memory_free_bytes);
  EXPECT_FALSE(r.enforced_power_limit_mw);
  EXPECT_FALSE(r.mem_clock_mhz);
  EXPECT_FALSE(r.sw_power_cap_ns);
  // Supported readings are there, including a zero mask (read, and no bit set).
  EXPECT_EQ(r.power_mw, 99'500u);
  EXPECT_EQ(r.clock_event_reasons, 0u);
  EXPECT_EQ(r.sm_clock_mhz, 2'405u);
  ASSERT_TRUE(r.processes);
  ASSERT_EQ(r.processes->size(), 1u);
  EXPECT_EQ((*r.processes)[0].pid, 4242u);
  EXPECT_EQ((*r.processes)[0].used_bytes, 63'931ULL << 20);
  EXPECT_FALSE(r.gpu_lost);

  // v2 and then v1 both said NOT_SUPPORTED: the last one of the chain is recorded.
  const GpuCallStatus* memory = Unavailable(r, "nvmlDeviceGetMemoryInfo");
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(memory->code, 3);
  EXPECT_EQ(memory->reason, "not supported (nvml error 3)");
  EXPECT_NE(Unavailable(r, "nvmlDeviceGetFieldValues(74)"), nullptr);

  const std::vector<GpuReading> gpus = {r};
  EXPECT_EQ(DetectPlatform(gpus).kind, PlatformKind::kGb10);
}

TEST(NvmlFake, Gb10TemperatureClimbsAndClocksCollapseWithoutAReason) {
  FakeScript script("scenario gb10\ndegrade_after 3\ntemp_start_c 50\ntemp_step_c 2\n");
  auto nvml = OpenOrFail(HEADROOM_FAKE_NVML_PATH);
  ASSERT_TRUE(nvml);
  std::vector<int> temps;
  std::vector<uint32_t> clocks;
  for (int i = 0; i < 5; ++i) {
    const GpuReading r = nvml->ReadDevice(0);
    temps.push_back(r.temperature_c.value_or(-1));
    clocks.push_back(r.sm_clock_mhz.value_or(0));
    EXPECT_EQ(r.clock_event_reasons, 0u) << i;  // the GB10 trap: slow, and no bit says why
    EXPECT_GE(*r.power_mw, 99'500u);
    EXPECT_LE(*r.power_mw, 100'500u);
  }
  EXPECT_EQ(temps, (std::vector<int>{50, 52, 54, 56, 58}));
  EXPECT_EQ(clocks, (std::vector<uint32_t>{2'405, 2'405, 2'405, 700, 700}));
}

TEST(NvmlFake, DiscreteHasEveryField) {
  FakeScript script("scenario discrete\n");
  auto nvml = OpenOrFail(HEADROOM_FAKE_NVML_PATH);
  ASSERT_TRUE(nvml);
  GpuBackend& backend = *nvml;  // used through the seam, as the sampler will
  EXPECT_EQ(backend.backend_name(), "nvml");
  const std::vector<GpuReading> gpus = SampleAllDevices(backend);
  ASSERT_EQ(gpus.size(), 1u);
  const GpuReading& r = gpus[0];

  EXPECT_EQ(r.index, 0u);
  EXPECT_EQ(r.name, "NVIDIA H200");
  EXPECT_EQ(r.uuid, "GPU-fa6e0000-0000-0000-0000-00000000h200");
  EXPECT_EQ(r.driver_version, "570.124.06");
  EXPECT_EQ(r.cuda_driver_version, 12080);
  EXPECT_EQ(r.compute_capability_major, 9);
  EXPECT_EQ(r.compute_capability_minor, 0);
  EXPECT_EQ(r.temperature_c, 45);
  EXPECT_EQ(r.power_mw, 350'000u);
  EXPECT_EQ(r.energy_mj, 5'000'000u);
  EXPECT_EQ(r.enforced_power_limit_mw, 700'000u);
  EXPECT_EQ(r.sm_clock_mhz, 1'980u);
  EXPECT_EQ(r.mem_clock_mhz, 3'201u);
  EXPECT_EQ(r.max_sm_clock_mhz, 1'980u);
  EXPECT_EQ(r.clock_event_reasons, 0x24u);
  EXPECT_EQ(r.sw_power_cap_ns, 1'500'000'000u);
  EXPECT_EQ(r.sync_boost_ns, 0u);  // read, and zero: not the same as n/a
  EXPECT_EQ(r.gpu_utilization_pct, 87u);
  EXPECT_EQ(r.memory_utilization_pct, 42u);
  // Only the v2 call gives `reserved`, and the fake answers it only for the header's
  // version word 0x02000028: a wrong constant would leave reserved empty.
  EXPECT_EQ(r.memory_total_bytes, 150'754'820'096u);
  EXPECT_EQ(r.memory_reserved_bytes, 536'870'912u);
  EXPECT_EQ(r.memory_used_bytes, 85'899'345'920u);
  EXPECT_EQ(r.memory_free_bytes, 150'754'820'096u - 85'899'345'920u - 536'870'912u);
  ASSERT_TRUE(r.processes);
  ASSERT_EQ(r.processes->size(), 2u);
  EXPECT_EQ((*r.processes)[0].pid, 1111u);
  EXPECT_EQ((*r.processes)[0].used_bytes, 40ULL << 30);
  EXPECT_EQ((*r.processes)[1].pid, 2222u);
  EXPECT_FALSE((*r.processes)[1].used_bytes);  // NVML_VALUE_NOT_AVAILABLE
  EXPECT_TRUE(r.unavailable.empty()) << r.unavailable.front().call;

  const PlatformProfile p = DetectPlatform(gpus);
  EXPECT_EQ(p.kind, PlatformKind::kDiscrete);
  EXPECT_EQ(p.gpu_memory_bytes, 150'754'820'096u);

  // Counters advance per sample.
  const GpuReading next = nvml->ReadDevice(0);
  EXPECT_EQ(next.energy_mj, 5'350'000u);
  EXPECT_EQ(next.sw_power_cap_ns, 2'500'000'000u);
  EXPECT_EQ(next.temperature_c, 46);
}

TEST(NvmlFake, MissingSymbolsGiveNulloptAndFallbacksWork) {
  FakeScript script("scenario discrete\n");
  auto nvml = OpenOrFail(HEADROOM_FAKE_NVML_MINIMAL_PATH);
  ASSERT_TRUE(nvml);
  const GpuReading r = nvml->ReadDevice(0);

  // No symbol, no fallback: nullopt, recorded as missing.
  EXPECT_FALSE(r.energy_mj);
  EXPECT_FALSE(r.sw_power_cap_ns);
  EXPECT_FALSE(r.sync_boost_ns);
  const GpuCallStatus* energy = Unavailable(r, "nvmlDeviceGetTotalEnergyConsumption");
  ASSERT_NE(energy, nullptr);
  EXPECT_EQ(energy->code, kGpuSymbolMissing);
  EXPECT_NE(Unavailable(r, "nvmlDeviceGetFieldValues"), nullptr);

  // Older symbols stand in for the newer ones.
  EXPECT_EQ(r.temperature_c, 45);                     // nvmlDeviceGetTemperature
  EXPECT_EQ(r.clock_event_reasons, 0x24u);            // ...ClocksThrottleReasons
  EXPECT_EQ(r.cuda_driver_version, 12080);            // ...CudaDriverVersion (unversioned)
  EXPECT_EQ(r.memory_total_bytes, 150'754'820'096u);  // MemoryInfo v1...
  EXPECT_FALSE(r.memory_reserved_bytes);              // ...which has no `reserved`
  EXPECT_EQ(r.memory_used_bytes, 85'899'345'920u + 536'870'912u);
  ASSERT_TRUE(r.processes);  // the 16-byte v1 process list
  ASSERT_EQ(r.processes->size(), 2u);
  EXPECT_EQ((*r.processes)[0].used_bytes, 40ULL << 30);
  EXPECT_FALSE((*r.processes)[1].used_bytes);
  // Everything else is present.
  EXPECT_EQ(r.name, "NVIDIA H200");
  EXPECT_EQ(r.power_mw, 350'000u);
  EXPECT_EQ(r.sm_clock_mhz, 1'980u);
  EXPECT_EQ(r.unavailable.size(), 2u);  // energy and field values, nothing repaired counts

  bool saw_throttle_fallback = false;
  for (const NvmlSymbolStatus& s : nvml->Symbols()) {
    if (s.wanted == "nvmlDeviceGetCurrentClocksEventReasons") {
      EXPECT_EQ(s.resolved, "nvmlDeviceGetCurrentClocksThrottleReasons");
      saw_throttle_fallback = true;
    }
    if (s.wanted == "nvmlDeviceGetMemoryInfo_v2") {
      EXPECT_TRUE(s.resolved.empty());
    }
    if (s.required) {
      EXPECT_FALSE(s.resolved.empty()) << s.wanted;
    }
  }
  EXPECT_TRUE(saw_throttle_fallback);
}

TEST(NvmlFake, LostGpuLeavesFieldsEmptyAndSaysSo) {
  FakeScript script("scenario discrete\nlost_after 1\n");
  auto nvml = OpenOrFail(HEADROOM_FAKE_NVML_PATH);
  ASSERT_TRUE(nvml);
  const GpuReading before = nvml->ReadDevice(0);
  EXPECT_FALSE(before.gpu_lost);
  EXPECT_EQ(before.power_mw, 350'000u);

  const GpuReading lost = nvml->ReadDevice(0);
  EXPECT_TRUE(lost.gpu_lost);
  EXPECT_FALSE(lost.name);
  EXPECT_FALSE(lost.power_mw);
  EXPECT_FALSE(lost.temperature_c);
  EXPECT_FALSE(lost.clock_event_reasons);
  EXPECT_FALSE(lost.memory_total_bytes);
  EXPECT_FALSE(lost.processes);
  const GpuCallStatus* power = Unavailable(lost, "nvmlDeviceGetPowerUsage");
  ASSERT_NE(power, nullptr);
  EXPECT_EQ(power->code, 15);
  EXPECT_EQ(power->reason, "gpu is lost (nvml error 15)");
  // System-wide readings were taken at open and stay.
  EXPECT_EQ(lost.driver_version, "570.124.06");
}

TEST(NvmlFake, InitFailureNamesTheCall) {
  FakeScript script("scenario init-fail\n");
  const auto nvml = Nvml::Open(HEADROOM_FAKE_NVML_PATH);
  ASSERT_FALSE(nvml.ok());
  EXPECT_EQ(EnglishText(nvml.error().what),
            "nvml: nvmlInit_v2(): driver not loaded (nvml error 9)");
}

TEST(NvmlFake, ReopensWithAFreshScript) {
  {
    FakeScript script("scenario init-fail\n");
    EXPECT_FALSE(Nvml::Open(HEADROOM_FAKE_NVML_PATH).ok());
  }
  FakeScript script("scenario gb10\n");
  auto nvml = OpenOrFail(HEADROOM_FAKE_NVML_PATH);
  ASSERT_TRUE(nvml);
  EXPECT_EQ(nvml->ReadDevice(0).name, "NVIDIA GB10");
}

TEST(Nvml, LibraryChoiceFlagThenEnvironment) {
  auto env = [](const char* value) {
    return [value](const char* name) -> const char* {
      return std::string_view(name) == "HEADROOM_NVML_LIB" ? value : nullptr;
    };
  };
  EXPECT_EQ(ResolveNvmlLibrary("/flag/lib.so", env("/env/lib.so")), "/flag/lib.so");
  EXPECT_EQ(ResolveNvmlLibrary("", env("/env/lib.so")), "/env/lib.so");
  EXPECT_EQ(ResolveNvmlLibrary("", env(nullptr)), "");  // Open's default
  EXPECT_EQ(ResolveNvmlLibrary("", env("")), "");
}

TEST(Nvml, MissingLibraryCarriesDlerrorText) {
  const std::string path = "/nonexistent/libnvidia-ml.so.1";
  const auto nvml = Nvml::Open(path);
  ASSERT_FALSE(nvml.ok());
  const std::string& message = EnglishText(nvml.error().what);
  EXPECT_TRUE(message.starts_with("nvml: dlopen(/nonexistent/libnvidia-ml.so.1): ")) << message;
  // glibc's dlerror names the file and the errno text.
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
}

TEST(Nvml, LibraryWithoutRequiredSymbolIsRefused) {
  // libm is on every glibc system and exports no NVML symbol.
  const auto nvml = Nvml::Open("libm.so.6");
  ASSERT_FALSE(nvml.ok());
  const std::string& message = EnglishText(nvml.error().what);
  EXPECT_TRUE(message.starts_with("nvml: dlsym(nvmlInit_v2): ")) << message;
  EXPECT_NE(message.find("undefined symbol: nvmlInit_v2"), std::string::npos) << message;
}

}  // namespace
}  // namespace headroom
