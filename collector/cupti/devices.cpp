// Devices from the CUDA driver; see devices.h. cuda.h gives the types and attribute numbers only:
// every call goes through a pointer looked up in the process, so libcuda is never linked.
#include "devices.h"

#include <cuda.h>

#include <cstdio>

namespace tg::cupti {

std::string GpuUuidString(const unsigned char b[16]) {
  char s[48];
  std::snprintf(s, sizeof s, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return s;
}

std::vector<DriverDevice> DevicesFromDriver(const DriverSymbol& symbol) {
  using GetCount = CUresult (*)(int*);
  using Get = CUresult (*)(CUdevice*, int);
  using GetName = CUresult (*)(char*, int, CUdevice);
  using TotalMem = CUresult (*)(size_t*, CUdevice);
  using Attribute = CUresult (*)(int*, CUdevice_attribute, CUdevice);
  using Uuid = CUresult (*)(CUuuid*, CUdevice);
  auto count_fn = reinterpret_cast<GetCount>(symbol("cuDeviceGetCount"));
  auto get_fn = reinterpret_cast<Get>(symbol("cuDeviceGet"));
  auto name_fn = reinterpret_cast<GetName>(symbol("cuDeviceGetName"));
  auto mem_fn = reinterpret_cast<TotalMem>(symbol("cuDeviceTotalMem_v2"));
  auto attr_fn = reinterpret_cast<Attribute>(symbol("cuDeviceGetAttribute"));
  auto uuid_fn = reinterpret_cast<Uuid>(symbol("cuDeviceGetUuid_v2"));
  std::vector<DriverDevice> out;
  int count = 0;
  if (!count_fn || !get_fn || !attr_fn || count_fn(&count) != CUDA_SUCCESS) return out;
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    if (get_fn(&dev, i) != CUDA_SUCCESS) continue;
    auto attr = [&](CUdevice_attribute a) {
      int v = 0;
      return attr_fn(&v, a, dev) == CUDA_SUCCESS ? v : 0;
    };
    DriverDevice d;
    d.device.id = i;
    char name[256] = {};
    if (name_fn && name_fn(name, sizeof name - 1, dev) == CUDA_SUCCESS) d.device.name = name;
    size_t bytes = 0;
    if (mem_fn && mem_fn(&bytes, dev) == CUDA_SUCCESS) d.device.memory_bytes = static_cast<int64_t>(bytes);
    d.device.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    d.device.compute_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    d.device.compute_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    // Double data rate: two transfers per memory clock (kHz) over a bus of `bits`.
    const double clock_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    const double bits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    d.device.peak_bandwidth_gbs = 2.0 * clock_khz * 1e3 * bits / 8.0 / 1e9;
    CUuuid uuid{};
    if (uuid_fn && uuid_fn(&uuid, dev) == CUDA_SUCCESS) d.uuid = GpuUuidString(reinterpret_cast<const unsigned char*>(uuid.bytes));
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace tg::cupti
