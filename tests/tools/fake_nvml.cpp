// A fake libnvidia-ml.so.1 for the NVML sampler's tests: two GPUs with fixed readings, except
// that GPU 1 has no power reading (NVML_ERROR_NOT_SUPPORTED, 3), as some boards report.
// Values (checked by nvml_sampler_test.cpp): GPU i: temperature 40 + i C, SM clock 1980 MHz,
// memory clock 2619 MHz, 1 GiB + i MiB used, GPU 0 at 350.5 W; UUID "GPU-" and i in every digit.
#include <cstdint>
#include <cstring>

#include "collector/src/nvml_abi.h"

extern "C" {

static int g_devices[2];
static int g_initialized = 0;

int nvmlInit_v2() { g_initialized = 1; return 0; }
int nvmlShutdown() { g_initialized = 0; return 0; }
const char* nvmlErrorString(int rc) { return rc == 3 ? "Not Supported" : "Unknown Error"; }
int nvmlDeviceGetCount_v2(unsigned* count) { *count = 2; return g_initialized ? 0 : 1; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t* d) {
  if (i >= 2) return 2;
  *d = reinterpret_cast<nvmlDevice_t>(&g_devices[i]);
  return 0;
}
static unsigned Index(nvmlDevice_t d) { return d == reinterpret_cast<nvmlDevice_t>(&g_devices[0]) ? 0 : 1; }
int nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned length) {
  const char* n = Index(d) == 0 ? "Fake H200" : "Fake H100";
  std::strncpy(name, n, length);
  return 0;
}
int nvmlDeviceGetTemperature(nvmlDevice_t d, int, unsigned* t) { *t = 40 + Index(d); return 0; }
int nvmlDeviceGetClockInfo(nvmlDevice_t, int type, unsigned* mhz) { *mhz = type == 1 ? 1980 : 2619; return 0; }
int nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  m->total = 80ull << 30;
  m->used = (1ull << 30) + (uint64_t{Index(d)} << 20);
  m->free = m->total - m->used;
  return 0;
}
int nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned length) {
  std::strncpy(uuid, Index(d) == 0 ? "GPU-00000000-0000-0000-0000-000000000000" : "GPU-11111111-1111-1111-1111-111111111111",
               length);
  return 0;
}
int nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned* mw) {
  if (Index(d) == 1) return 3;
  *mw = 350500;
  return 0;
}

}  // extern "C"
