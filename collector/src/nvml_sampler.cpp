// NvmlSampler: the few NVML entry points we need, declared here with NVML's C types (nvml.h is
// not needed at build time) and resolved with dlsym. Every reading is checked on its own: a GPU
// that does not report power still reports its clocks.
#include "collector/src/nvml_sampler.h"

#include <dlfcn.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "collector/src/nvml_abi.h"
#include "collector/src/parts.h"

namespace tg::internal {

namespace {

using NvmlDevice = nvmlDevice_t;
using NvmlMemory = nvmlMemory_t;
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlTemperatureGpu = 0;
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlClockMem = 2;
constexpr unsigned kNameLength = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kUuidLength = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE

struct NvmlApi {
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*device_count)(unsigned*) = nullptr;
  int (*device_by_index)(unsigned, NvmlDevice*) = nullptr;
  int (*name)(NvmlDevice, char*, unsigned) = nullptr;
  int (*temperature)(NvmlDevice, int, unsigned*) = nullptr;
  int (*clock)(NvmlDevice, int, unsigned*) = nullptr;
  int (*memory)(NvmlDevice, NvmlMemory*) = nullptr;
  int (*power)(NvmlDevice, unsigned*) = nullptr;  // mW
  int (*uuid)(NvmlDevice, char*, unsigned) = nullptr;  // optional: samples then keep NVML's index
};

template <class F>
bool Resolve(void* lib, const char* symbol, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(::dlsym(lib, symbol));
  if (!fn) missing = symbol;
  return fn != nullptr;
}

}  // namespace

struct NvmlSampler::Impl {
  NvmlSamplerOptions options;
  void* lib = nullptr;
  NvmlApi api;
  bool initialized = false;
  std::vector<NvmlDevice> devices;
  std::vector<std::string> uuids;
  std::string note;
  SampleTable samples;  // written by the thread until Stop joins it

  std::mutex mu;
  std::condition_variable wake;
  bool stopping = false;
  bool stopped = false;
  std::thread thread;

  std::string Error(int rc) const {
    return api.error_string ? std::string(api.error_string(rc)) : "NVML error " + std::to_string(rc);
  }
  bool Load();
  void SampleAll();
};

bool NvmlSampler::Impl::Load() {
  lib = ::dlopen(options.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    note = "not sampled: cannot load " + options.library + " (no NVIDIA driver on this machine?)";
    return false;
  }
  std::string missing;
  bool ok = Resolve(lib, "nvmlInit_v2", api.init, missing) && Resolve(lib, "nvmlShutdown", api.shutdown, missing) &&
            Resolve(lib, "nvmlErrorString", api.error_string, missing) &&
            Resolve(lib, "nvmlDeviceGetCount_v2", api.device_count, missing) &&
            Resolve(lib, "nvmlDeviceGetHandleByIndex_v2", api.device_by_index, missing) &&
            Resolve(lib, "nvmlDeviceGetName", api.name, missing) &&
            Resolve(lib, "nvmlDeviceGetTemperature", api.temperature, missing) &&
            Resolve(lib, "nvmlDeviceGetClockInfo", api.clock, missing) &&
            Resolve(lib, "nvmlDeviceGetMemoryInfo", api.memory, missing) &&
            Resolve(lib, "nvmlDeviceGetPowerUsage", api.power, missing);
  if (!ok) {
    note = "not sampled: " + options.library + " has no " + missing + " (NVML too old)";
    return false;
  }
  api.uuid = reinterpret_cast<decltype(api.uuid)>(::dlsym(lib, "nvmlDeviceGetUUID"));
  if (int rc = api.init(); rc != kNvmlSuccess) {
    note = "not sampled: nvmlInit failed: " + Error(rc);
    return false;
  }
  initialized = true;
  unsigned count = 0;
  if (int rc = api.device_count(&count); rc != kNvmlSuccess) {
    note = "not sampled: nvmlDeviceGetCount failed: " + Error(rc);
    return false;
  }
  std::string names;
  for (unsigned i = 0; i < count; ++i) {
    NvmlDevice d = nullptr;
    char name[kNameLength] = {};
    if (api.device_by_index(i, &d) != kNvmlSuccess) d = nullptr;  // sampled as -1 readings
    if (d && api.name(d, name, kNameLength) != kNvmlSuccess) name[0] = '\0';
    devices.push_back(d);
    char uuid[kUuidLength] = {};
    if (!d || !api.uuid || api.uuid(d, uuid, kUuidLength) != kNvmlSuccess) uuid[0] = '\0';
    uuids.emplace_back(uuid);
    names += (i ? ", " : "") + std::to_string(i) + ": " + (name[0] ? name : "?");
  }
  if (devices.empty()) {
    note = "not sampled: NVML sees no GPU";
    return false;
  }
  note = std::to_string(devices.size()) + " GPU" + (devices.size() == 1 ? "" : "s") + " every " +
         std::to_string(options.interval_ms) + " ms (" + names + ")";
  return true;
}

void NvmlSampler::Impl::SampleAll() {
  TimeNs now = RecordClockNs();
  for (size_t i = 0; i < devices.size(); ++i) {
    NvmlDevice d = devices[i];
    Sample s;
    s.time = now;
    s.device = static_cast<int32_t>(i);
    unsigned v = 0;
    NvmlMemory m{};
    if (d && api.temperature(d, kNvmlTemperatureGpu, &v) == kNvmlSuccess) s.temperature_c = v;
    if (d && api.clock(d, kNvmlClockSm, &v) == kNvmlSuccess) s.sm_clock_mhz = v;
    if (d && api.clock(d, kNvmlClockMem, &v) == kNvmlSuccess) s.mem_clock_mhz = v;
    if (d && api.memory(d, &m) == kNvmlSuccess) s.memory_used_mb = static_cast<double>(m.used) / (1024.0 * 1024.0);
    if (d && api.power(d, &v) == kNvmlSuccess) s.power_w = v / 1000.0;
    samples.Add(s);
  }
}

NvmlSampler::NvmlSampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::unique_ptr<NvmlSampler> NvmlSampler::Start(const NvmlSamplerOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (impl->options.interval_ms <= 0) impl->options.interval_ms = 100;
  std::unique_ptr<NvmlSampler> sampler(new NvmlSampler(std::move(impl)));
  Impl* p = sampler->impl_.get();
  if (p->Load()) {
    p->thread = std::thread([p] {
      std::unique_lock<std::mutex> lock(p->mu);
      auto interval = std::chrono::milliseconds(p->options.interval_ms);
      auto next = std::chrono::steady_clock::now();
      while (!p->stopping) {
        p->SampleAll();  // NVML calls take ~1 ms; stopping only waits for the current tick
        next += interval;
        p->wake.wait_until(lock, next, [p] { return p->stopping; });
      }
    });
  }
  return sampler;
}

void NvmlSampler::Stop() {
  Impl& p = *impl_;
  {
    std::lock_guard<std::mutex> lock(p.mu);
    if (p.stopped) return;
    p.stopped = p.stopping = true;
  }
  p.wake.notify_all();
  if (p.thread.joinable()) {
    p.thread.join();
    p.SampleAll();  // the state at the end of the run
  }
  if (p.initialized) p.api.shutdown();
  if (p.lib) ::dlclose(p.lib);
  p.lib = nullptr;
  p.devices.clear();
}

NvmlSampler::~NvmlSampler() { Stop(); }

const SampleTable& NvmlSampler::Samples() const { return impl_->samples; }
const std::string& NvmlSampler::Note() const { return impl_->note; }
const std::vector<std::string>& NvmlSampler::Uuids() const { return impl_->uuids; }

}  // namespace tg::internal
