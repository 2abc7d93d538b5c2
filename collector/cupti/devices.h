// Device descriptions that do not depend on CUPTI's DEVICE records, and the UUIDs that tie a CUDA
// device to the NVML device the launcher samples.
//
// CUPTI emits DEVICE records when activity is enabled before the devices are first used; in a
// process where CUDA started before the collector (the in-process recorder after torch's first
// CUDA call, say) they may never come. The collector then asks the CUDA driver the process has
// already loaded (never loading or initialising it itself).
//
// CUDA numbers devices as CUDA_VISIBLE_DEVICES orders them and NVML numbers all of them, so an
// index means different GPUs on the two sides; the UUID means the same one. The collector writes
// each CUDA device's UUID into its part (kDeviceUuidPrefix, parts.h), and `record` moves NVML
// samples onto the CUDA device with the same UUID.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/src/parts.h"
#include "tracegate/analyzer/model.h"

namespace tg::cupti {

// 16 UUID bytes as NVML prints them: "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
std::string GpuUuidString(const unsigned char bytes[16]);

// A symbol of the CUDA driver already loaded in the process (dlsym(RTLD_DEFAULT, name)), or
// nullptr. Injected so tests can stand in for the driver.
using DriverSymbol = std::function<void*(const char* name)>;

struct DriverDevice {
  Device device;
  std::string uuid;  // GpuUuidString; "" when the driver does not say
};

// Every device the driver reports, described as CUPTI's DEVICE record would be (name, SMs, memory,
// peak bandwidth from memory clock and bus width, compute capability). Empty when the driver is
// not loaded or not initialised: no error, the trace then has no device table, as before.
std::vector<DriverDevice> DevicesFromDriver(const DriverSymbol& symbol);

}  // namespace tg::cupti
