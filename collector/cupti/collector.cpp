// The collector's CUPTI session; see collector.h.
//
// Locks: g_control serialises start, stop and fork; g_convert guards the session as CUPTI's
// buffer-completed callback sees it (converter, counters). Order: g_control before g_convert.
// No lock of ours is held across a CUPTI call that can run our callbacks (cuptiActivityFlushAll,
// cuptiActivityDisable, cuptiActivityEnable), and no CUPTI function is called under g_convert:
// CUPTI may call the completed callback, which takes g_convert, while holding its own locks.
//
// Every function CUPTI or a thread of ours calls catches what it might throw (std::bad_alloc from
// a conversion, say): an exception leaving a C callback would end the recorded program.
#include "collector.h"

#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "buffer_pool.h"
#include "completed.h"
#include "convert.h"
#include "devices.h"
#include "collector/src/cupti_clients.h"
#include "collector/src/part_writer.h"
#include "collector/src/parts.h"

namespace tg::cupti {

namespace {

struct Session {
  RecordingOptions options;
  int64_t pid = 0;
  std::unique_ptr<PartWriter> writer;
  std::unique_ptr<ActivityConverter> converter;  // under g_convert
  std::vector<CUpti_ActivityKind> enabled;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::vector<std::string> missed;
  uint64_t dropped = 0;         // records CUPTI reported dropped, under g_convert
  uint64_t published_peak = 0;  // under g_convert
  bool devices_published = false;  // under g_convert
  uint64_t refusals_before = 0; // the pool's refusals when this session started
  std::thread flusher;
  std::mutex flush_mu;
  std::condition_variable flush_cv;
  bool flush_stop = false;      // under flush_mu
};

std::mutex g_control;
std::mutex g_convert;
Session* g_session = nullptr;  // read and written under g_convert; Start and Stop also keep
                               // each other out through g_stopping
bool g_stopping = false;       // under g_control
std::atomic<BufferPool*> g_pool{nullptr};  // never freed: CUPTI may hold its buffers until exit
// Free buffers the pool keeps ready (zeroed, their pages touched), so that CUPTI's requests on the
// application's threads take one from the free list instead of allocating: topped up at start and
// after every flush, on the collector's threads.
constexpr size_t kReadyBuffers = 2;

std::string CuptiError(CUptiResult r) {
  const char* text = nullptr;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text) return StrFormat("CUPTI error %d", static_cast<int>(r));
  return text;
}

std::string ApiNameFromCupti(ApiKind kind, uint32_t cbid) {
  const char* name = nullptr;
  CUpti_CallbackDomain domain = kind == ApiKind::kDriver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) return {};
  return name;
}

// The command line, arguments joined by spaces (what `record`'s summary shows per process).
std::string ProcessName() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!all.empty() && all.back() == '\0') all.pop_back();
  for (char& c : all)
    if (c == '\0') c = ' ';
  constexpr size_t kMax = 256;
  if (all.size() > kMax) all = all.substr(0, kMax) + "...";
  return all;
}

// cuDriverGetVersion from the driver the process already loaded (we do not link libcuda).
std::string DriverCudaVersion() {
  using Fn = int (*)(int*);
  auto fn = reinterpret_cast<Fn>(::dlsym(RTLD_DEFAULT, "cuDriverGetVersion"));
  int v = 0;
  if (!fn || fn(&v) != 0 || v <= 0) return {};
  return StrFormat("%d.%d", v / 1000, (v % 1000) / 10);
}

void WriteStartMetadata(Session& s) {
  PartWriter& w = *s.writer;
  uint32_t version = 0;
  if (cuptiGetVersion(&version) == CUPTI_SUCCESS) w.SetMetadata(std::string(meta::kCuptiVersion), std::to_string(version));
  if (std::string cuda = DriverCudaVersion(); !cuda.empty()) w.SetMetadata(std::string(meta::kCudaVersion), cuda);
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) w.SetMetadata(std::string(meta::kHost), host);
  w.SetMetadata("cupti_buffer_mb", std::to_string(s.options.buffer_mb));
  w.SetMetadata("cupti_buffer_cap_mb", std::to_string(s.options.buffer_cap_mb));
  w.SetMetadata("cupti_flush_ms", std::to_string(s.options.flush_ms));
  w.AddProcess(Process{s.pid, ProcessName()});
}

// Hands one converted batch to the writer: events, devices, quality counters. Under g_convert.
void Publish(Session& s, Trace&& batch) {
  for (const Device& d : batch.devices) s.writer->AddDevice(d);
  s.devices_published = s.devices_published || !batch.devices.empty();
  for (const QualityInfo& q : kQualityInfo)
    if (uint64_t n = batch.quality.Get(q.id)) s.writer->AddQuality(q.id, n);
  if (batch.GpuEventCount() + batch.api_calls.size() + batch.syncs.size() + batch.ranges.size() > 0)
    s.writer->Submit(std::move(batch));
}

// Buffers this session's CUPTI asked for and the cap refused.
uint64_t Refusals(const Session& s) {
  BufferPool* pool = g_pool.load();
  return pool ? pool->refusals() - s.refusals_before : 0;
}

// Counters that change slowly: written every flush and at stop. Under g_convert; `dropped` was
// read from CUPTI before taking it.
void PublishCounters(Session& s, uint64_t dropped) {
  if (dropped > 0) {
    s.dropped += dropped;
    s.writer->AddQuality(Quality::kSourceDroppedRecords, dropped);
  }
  uint64_t peak = s.converter->allocations().PeakBytes();
  if (peak != s.published_peak) {
    s.published_peak = peak;
    s.writer->SetMetadata(std::string(kMemoryPeakKey), StrFormat("%.1f", static_cast<double>(peak) / (1024.0 * 1024.0)));
    s.writer->SetMetadata(kMemoryPeakSourceKey, kMemoryPeakSource);
  }
  for (const auto& [kind, ns] : s.converter->overhead_ns())
    s.writer->SetMetadata(kOverheadPrefix + kind, std::to_string(ns));
  if (uint64_t refused = Refusals(s))
    s.writer->SetMetadata(kBufferRefusalsKey, std::to_string(refused));
}

uint64_t DroppedSinceLastCall() {
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) != CUPTI_SUCCESS) return 0;
  return dropped;
}

void Warn(const std::string& line) { std::fprintf(stderr, "tracegate: %s\n", line.c_str()); }

// Runs `body`; an exception becomes one warning per place (`where`), never a crash of the program.
template <typename Body>
void Guarded(const char* where, Body body) noexcept {
  try {
    body();
  } catch (const std::exception& e) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true)) Warn(std::string(where) + ": " + e.what() + "; the recording may be incomplete");
  } catch (...) {
    Warn(std::string(where) + ": unknown error; the recording may be incomplete");
  }
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;
  Guarded("CUPTI buffer request", [&] {
    BufferPool* pool = g_pool.load();
    *buffer = pool ? pool->Acquire() : nullptr;
    *size = *buffer ? pool->buffer_bytes() : 0;
  });
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_bytes) {
  // Walk the buffer without our lock (cuptiActivityGetNextRecord is CUPTI's), convert under it
  // (completed.h).
  std::vector<const CUpti_Activity*> records;
  size_t freed = 0;
  Guarded("CUPTI buffer", [&] {
    WalkBuffer(buffer, valid_bytes, records);
    std::lock_guard<std::mutex> lock(g_convert);
    Session* s = g_session;
    Trace batch;
    std::vector<DeviceUuid> uuids;
    ConvertBuffer(s ? s->converter.get() : nullptr, records, batch, uuids, &freed);
    if (s) {
      for (const DeviceUuid& u : uuids)
        s->writer->SetMetadata(std::string(kDeviceUuidPrefix) + std::to_string(u.device), u.uuid);
      Publish(*s, std::move(batch));
    }
  });
  for (size_t i = freed; i < records.size(); ++i) FreeClientOwned(*records[i]);
  if (BufferPool* pool = g_pool.load()) pool->Release(buffer);
}

// cudaDeviceReset and a context's destruction end the life of that context's records: CUPTI's
// buffers are flushed now, while they can still be delivered, as NVIDIA's injection sample does.
void CUPTIAPI OnCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  Guarded("CUPTI callback", [&] {
    const bool reset = domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 &&
                       static_cast<const CUpti_CallbackData*>(data)->callbackSite == CUPTI_API_ENTER;
    const bool destroy = domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING;
    if (reset || destroy) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  });
}

// Every flush interval: CUPTI's completed buffers to the converter, then the part to disk, so a
// killed process loses about one interval. Holds no lock across cuptiActivityFlushAll: CUPTI calls
// BufferCompleted from inside it, which takes g_convert.
void FlushLoopUnguarded(Session* s) {
  bool reported = false;
  std::unique_lock<std::mutex> lk(s->flush_mu);
  while (!s->flush_stop) {
    s->flush_cv.wait_for(lk, std::chrono::milliseconds(s->options.flush_ms));
    if (s->flush_stop) break;
    lk.unlock();
    cuptiActivityFlushAll(0);
    uint64_t dropped = DroppedSinceLastCall();
    {
      std::lock_guard<std::mutex> lock(g_convert);
      PublishCounters(*s, dropped);
    }
    if (BufferPool* pool = g_pool.load()) pool->Reserve(kReadyBuffers);
    Status st = s->writer->Flush();
    if (!st.ok() && !reported) {
      Warn("cannot append to the recording: " + st.message());
      reported = true;
    }
    lk.lock();
  }
}

void FlushLoop(Session* s) {
  Guarded("the flush thread", [s] { FlushLoopUnguarded(s); });
}

// When no DEVICE record came (CUDA started before the collector), the devices as the driver the
// process loaded describes them. Under g_convert.
void PublishDriverDevices(Session& s) {
  if (s.devices_published) {
    s.writer->SetMetadata(kDeviceSourceKey, "cupti");
    return;
  }
  std::vector<DriverDevice> devices = DevicesFromDriver([](const char* name) { return ::dlsym(RTLD_DEFAULT, name); });
  for (const DriverDevice& d : devices) {
    s.writer->AddDevice(d.device);
    if (!d.uuid.empty()) s.writer->SetMetadata(std::string(kDeviceUuidPrefix) + std::to_string(d.device.id), d.uuid);
  }
  if (!devices.empty()) s.writer->SetMetadata(kDeviceSourceKey, "driver");
}

// The QuietApis' records off; what CUPTI refused stays on and is not worth a warning.
void QuietenApis(Session& s) {
  std::string names;
  for (const QuietApi& q : QuietApis()) {
    if (q.driver && !s.options.driver_api) continue;
    CUptiResult r = q.driver ? cuptiActivityEnableDriverApi(q.cbid, 0) : cuptiActivityEnableRuntimeApi(q.cbid, 0);
    if (r == CUPTI_SUCCESS) names += (names.empty() ? "" : ",") + std::string(q.name);
  }
  if (!names.empty()) s.writer->SetMetadata(kQuietApisKey, names);
}

// Subscribes and enables every kind; what fails goes to s.missed. False: CUPTI is unusable here.
bool EnableCupti(Session& s) {
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "tracegate";
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
  CUptiResult r = cuptiSubscribe_v2(&s.subscriber, OnCallback, nullptr, &params);
  if (r != CUPTI_SUCCESS) {
    s.subscriber = nullptr;
    std::string who = holder[0] ? std::string(" (") + holder + ")" : "";
    s.missed.push_back(r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                           ? "all CUDA activity: CUPTI is already in use by another tool" + who
                           : "all CUDA activity: CUPTI cannot be used: " + CuptiError(r));
    return false;
  }
  cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
  cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  // Thread ids as the OS numbers them (gettid), like the other tools' traces.
  cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  // The pool's buffers come zeroed (buffer_pool.h); otherwise CUPTI zeroes each one on the thread
  // that asked for it, the application's. An older CUPTI without the attribute zeroes them itself.
  uint8_t zeroed = 1;
  size_t zeroed_size = sizeof zeroed;
  const bool pool_zeroes =
      cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &zeroed_size, &zeroed) == CUPTI_SUCCESS;
  s.writer->SetMetadata(kBufferZeroingKey, pool_zeroes ? "tracegate" : "cupti");
  r = cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
  if (r != CUPTI_SUCCESS) {
    s.missed.push_back("all CUDA activity: CUPTI refused the buffer callbacks: " + CuptiError(r));
    return false;
  }
  for (const RecordedKind& k : kRecordedKinds) {
    if (k.kind == CUPTI_ACTIVITY_KIND_DRIVER && !s.options.driver_api) {
      s.missed.push_back(std::string(k.name) + " (disabled: " + internal::kDriverApi + "=0)");
      continue;
    }
    r = cuptiActivityEnable(k.kind);
    if (r == CUPTI_SUCCESS) s.enabled.push_back(k.kind);
    else s.missed.push_back(std::string(k.name) + ": " + CuptiError(r));
  }
  QuietenApis(s);
  return true;
}

void AfterForkChild() {
  // The child of a fork without exec: the parent's threads do not exist here and its part is not
  // ours; the session is dropped without running any of its destructors.
  g_session = nullptr;
  g_stopping = false;
  g_convert.unlock();
  g_control.unlock();
}

void InstallForkHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    ::pthread_atfork([] { g_control.lock(); g_convert.lock(); },
                     [] { g_convert.unlock(); g_control.unlock(); },
                     AfterForkChild);
  });
}

}  // namespace

const std::vector<QuietApi>& QuietApis() {
  // Per eager ResNet-50 iteration (PyTorch 2.11, CUDA 13, tests/fixtures/gpu/resnet50_eager_b32.db)
  // the ones after the first four made 906 of the ~1180 API records (27166 of 30 iterations); docs/gpu/README.md.
  static const std::vector<QuietApi> apis = {
      // Kineto's
      {false, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, "cudaGetDevice"},
      {true, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, "cuCtxGetCurrent"},
      {true, CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState, "cuDevicePrimaryCtxGetState"},
      {true, CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute, "cuKernelGetAttribute"},
      // error queries PyTorch makes around every launch
      {false, CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020, "cudaGetLastError"},
      {false, CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020, "cudaPeekAtLastError"},
      {false, CUPTI_RUNTIME_TRACE_CBID_cudaGetErrorString_v3020, "cudaGetErrorString"},
      // attribute, occupancy and capture-state queries of libraries (cuDNN, cuBLAS, PyTorch)
      {false, CUPTI_RUNTIME_TRACE_CBID_cudaFuncGetAttributes_v3020, "cudaFuncGetAttributes"},
      {false, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000, "cudaDeviceGetAttribute"},
      {false, CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000, "cudaStreamIsCapturing"},
      {false, CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_ptsz_v10000, "cudaStreamIsCapturing_ptsz"},
      {true, CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute, "cuDeviceGetAttribute"},
      {true, CUPTI_DRIVER_TRACE_CBID_cuFuncGetAttribute, "cuFuncGetAttribute"},
      {true, CUPTI_DRIVER_TRACE_CBID_cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
       "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags"},
      // look-ups the runtime makes for each launch: a kernel's name and function, driver entry points
      {true, CUPTI_DRIVER_TRACE_CBID_cuKernelGetName, "cuKernelGetName"},
      {true, CUPTI_DRIVER_TRACE_CBID_cuKernelGetFunction, "cuKernelGetFunction"},
      {true, CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress, "cuGetProcAddress"},
      {true, CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2, "cuGetProcAddress_v2"},
  };
  return apis;
}

std::string QuietApiNames(bool driver_api) {
  std::string names;
  for (const QuietApi& q : QuietApis())
    if (!q.driver || driver_api) names += (names.empty() ? "" : ",") + std::string(q.name);
  return names;
}

Status StartCollector(const RecordingOptions& options, const std::string& part_path) {
  if (options.flush_ms <= 0 || options.buffer_mb <= 0 || options.buffer_cap_mb <= 0)
    return InvalidInput(StrFormat("recording options must be positive (flush_ms %lld, buffer_mb %lld, buffer_cap_mb %lld)",
                                  static_cast<long long>(options.flush_ms), static_cast<long long>(options.buffer_mb),
                                  static_cast<long long>(options.buffer_cap_mb)));
  InstallForkHandlers();
  std::lock_guard<std::mutex> control(g_control);
  bool busy;
  {
    std::lock_guard<std::mutex> lock(g_convert);
    busy = g_session != nullptr;
  }
  if (busy || g_stopping) return {StatusCode::kInternal, "a recording is already running in this process; stop it first"};

  auto s = std::make_unique<Session>();
  s->options = options;
  s->pid = ::getpid();
  PartWriterOptions wo;
  wo.path = part_path;
  wo.flush_interval_ms = options.flush_ms;
  if (Status st = PartWriter::Open(wo, &s->writer); !st.ok()) return st;
  s->converter = std::make_unique<ActivityConverter>(s->pid, ApiNameFromCupti);
  WriteStartMetadata(*s);

  const size_t buffer_bytes = static_cast<size_t>(options.buffer_mb) << 20;
  const size_t cap_bytes = static_cast<size_t>(options.buffer_cap_mb) << 20;
  BufferPool* pool = g_pool.load();
  if (!pool || pool->buffer_bytes() != buffer_bytes || pool->max_buffers() != std::max<size_t>(1, cap_bytes / buffer_bytes))
    g_pool.store(pool = new BufferPool(buffer_bytes, cap_bytes));  // an older pool leaks: CUPTI may hold its buffers
  s->refusals_before = pool->refusals();
  pool->Reserve(kReadyBuffers);

  {
    std::lock_guard<std::mutex> lock(g_convert);
    g_session = s.get();  // before enabling: the first buffers may complete at once
  }
  bool usable = EnableCupti(*s);
  if (!s->missed.empty()) {
    std::string all;
    for (const std::string& m : s->missed) all += (all.empty() ? "" : "; ") + m;
    s->writer->SetMetadata(kMissedKey, StrFormat("pid %lld: %s", static_cast<long long>(s->pid), all.c_str()));
    // The driver switch is the user's choice, not a problem worth a warning.
    if (!usable || s->missed.size() > (options.driver_api ? 0u : 1u))
      Warn(StrFormat("process %lld is not fully recorded: %s%s", static_cast<long long>(s->pid), all.c_str(),
                     usable ? "" : "; the program runs on unrecorded"));
  }
  if (usable) s->flusher = std::thread(FlushLoop, s.get());
  (void)s.release();  // owned through g_session until StopCollector
  return Status::Ok();
}

Status StopCollector() {
  Session* s;
  {
    std::lock_guard<std::mutex> control(g_control);
    std::lock_guard<std::mutex> lock(g_convert);
    if (!g_session || g_stopping) return Status::Ok();
    s = g_session;
    g_stopping = true;
  }
  // Before any CUPTI call of ours on this thread: CUPTI's last error of this thread. Our own
  // subscription succeeded, so a refused subscription here was another client's (cupti_clients.h).
  const bool refused = s->subscriber && cuptiGetLastError() == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  if (s->flusher.joinable()) {
    {
      std::lock_guard<std::mutex> lk(s->flush_mu);
      s->flush_stop = true;
    }
    s->flush_cv.notify_all();
    s->flusher.join();
  }
  // Stop new records, then have CUPTI hand over every buffer, complete or not.
  for (CUpti_ActivityKind k : s->enabled) cuptiActivityDisable(k);
  if (s->subscriber) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  uint64_t dropped = s->subscriber ? DroppedSinceLastCall() : 0;
  // The other CUPTI clients, found without our lock held: the walk takes the dynamic loader's lock,
  // which a thread inside dlopen may hold while CUDA, and so CUPTI's callbacks, wait for ours.
  std::map<std::string, std::string> clients;
  if (s->subscriber) {
    const std::vector<std::string_view> imports(std::begin(kCuptiClientImports), std::end(kCuptiClientImports));
    const auto self = reinterpret_cast<const void*>(&StopCollector);  // this library: the client that holds CUPTI
    clients = OtherCuptiClientsMetadata(s->pid, ObjectsImporting(imports, self), refused);
  }
  {
    std::lock_guard<std::mutex> lock(g_convert);
    Trace last;
    s->converter->Close(last);
    Publish(*s, std::move(last));
    PublishDriverDevices(*s);
    PublishCounters(*s, dropped);
    // A refused buffer loses at least one record even if CUPTI's count says none.
    if (s->dropped == 0) s->writer->AddQuality(Quality::kSourceDroppedRecords, Refusals(*s));
    for (const auto& [key, value] : clients) s->writer->SetMetadata(key, value);
    g_session = nullptr;
  }
  if (s->subscriber) cuptiUnsubscribe(s->subscriber);
  Status st = s->writer->Finish();
  delete s;
  std::lock_guard<std::mutex> control(g_control);
  g_stopping = false;
  return st;
}

bool CollectorRecording() {
  std::lock_guard<std::mutex> control(g_control);
  std::lock_guard<std::mutex> lock(g_convert);
  return g_session != nullptr && !g_stopping;
}

}  // namespace tg::cupti
