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
#include <sys/syscall.h>
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
#include "capture.h"
#include "completed.h"
#include "convert.h"
#include "devices.h"
#include "collector/src/cupti_clients.h"
#include "collector/src/part_writer.h"
#include "collector/src/parts.h"

namespace tg::cupti {

using internal::kCuptiClientImports;
using internal::kDeviceUuidPrefix;
using internal::ObjectsImporting;
using internal::OtherCuptiClientsMetadata;
using internal::PartWriter;
using internal::PartWriterOptions;
using internal::RecordClockNs;

namespace {

struct Session {
  RecordingOptions options;
  ActivityPlan plan;
  std::unique_ptr<CaptureWindow> capture;  // set with a capture range
  std::mutex window_mu;                    // OnWindow's
  bool window_on = false;                  // under window_mu: the windowed part is on
  int64_t pid = 0;
  std::unique_ptr<PartWriter> writer;
  std::unique_ptr<ActivityConverter> converter;  // under g_convert
  std::vector<CUpti_ActivityKind> enabled;  // the plan's `always` kinds CUPTI accepted
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
// application's threads take one from the free list instead of allocating: one per thread that has
// asked for a buffer (CUPTI fills a buffer per thread) plus kReadyBuffers, topped up at start and
// after every flush, on the collector's flush thread.
constexpr size_t kReadyBuffers = 2;
std::atomic<size_t> g_requesting_threads{0};

// The collector's own work as ranges in the trace (domain kSelfDomain), so that an outlier
// iteration can be explained from the trace: buffer requests on the application's threads, buffer
// conversions, flushes, capture windows. Noted from any thread, moved into the part each flush.
struct SelfRange {
  const char* name;
  TimeNs start, end;
  int64_t tid;
};
std::mutex g_self_mu;
std::vector<SelfRange> g_self;  // under g_self_mu

int64_t ThreadId() {
  thread_local const int64_t tid = static_cast<int64_t>(::syscall(SYS_gettid));
  return tid;
}

// Called from CUPTI's callbacks: never throws (a range that cannot be noted is left out).
void NoteSelf(const char* name, TimeNs start) noexcept {
  const TimeNs end = RecordClockNs();
  try {
    std::lock_guard<std::mutex> lock(g_self_mu);
    if (g_self.size() < 100000) g_self.push_back({name, start, end, ThreadId()});
  } catch (...) {
  }
}

// Moves the noted ranges into `batch` (pid `pid`). Under g_convert.
void TakeSelfRanges(int64_t pid, Trace& batch) {
  std::vector<SelfRange> taken;
  {
    std::lock_guard<std::mutex> lock(g_self_mu);
    taken.swap(g_self);
  }
  const StringId domain = taken.empty() ? 0 : batch.strings.Intern(kSelfDomain);
  for (const SelfRange& r : taken) {
    Range row;
    row.start = r.start;
    row.end = r.end;
    row.name = batch.strings.Intern(r.name);
    row.domain = domain;
    row.pid = pid;
    row.tid = r.tid;
    batch.ranges.Add(row);
  }
}

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
    s.writer->SetMetadata(std::string(meta::kMemoryPeakMb),
                          StrFormat("%.1f", static_cast<double>(peak) / (1024.0 * 1024.0)));
    s.writer->SetMetadata(std::string(meta::kMemoryPeakMbSource), kMemoryPeakSource);
  }
  for (const auto& [kind, ns] : s.converter->overhead_ns())
    s.writer->SetMetadata(kOverheadPrefix + kind, std::to_string(ns));
  if (uint64_t refused = Refusals(s))
    s.writer->SetMetadata(kBufferRefusalsKey, std::to_string(refused));
  Trace self;
  TakeSelfRanges(s.pid, self);
  if (self.ranges.size() > 0) s.writer->Submit(std::move(self));
  if (s.capture) {
    s.writer->SetMetadata(kCaptureSeenKey, std::to_string(s.capture->seen()));
    s.writer->SetMetadata(kCaptureWindowsKey, std::to_string(s.capture->windows()));
  }
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
    const TimeNs start = RecordClockNs();
    thread_local bool counted = false;
    if (!counted) {
      counted = true;
      g_requesting_threads.fetch_add(1);
    }
    BufferPool* pool = g_pool.load();
    *buffer = pool ? pool->Acquire() : nullptr;
    *size = *buffer ? pool->buffer_bytes() : 0;
    NoteSelf(*buffer ? "tracegate: CUPTI buffer request" : "tracegate: CUPTI buffer request refused", start);
  });
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_bytes) {
  // Walk the buffer without our lock (cuptiActivityGetNextRecord is CUPTI's), convert under it
  // (completed.h).
  std::vector<const CUpti_Activity*> records;
  size_t freed = 0;
  const TimeNs start = RecordClockNs();
  Guarded("CUPTI buffer", [&] {
    WalkBuffer(buffer, valid_bytes, records);
    std::lock_guard<std::mutex> lock(g_convert);
    Session* s = g_session;
    Trace batch;
    std::vector<DeviceUuid> uuids;
    ConvertBuffer(s ? s->converter.get() : nullptr, records, batch, uuids, &freed, s ? s->pid : -1);
    if (s) {
      for (const DeviceUuid& u : uuids)
        s->writer->SetMetadata(std::string(kDeviceUuidPrefix) + std::to_string(u.device), u.uuid);
      Publish(*s, std::move(batch));
    }
  });
  for (size_t i = freed; i < records.size(); ++i) FreeClientOwned(*records[i]);
  if (BufferPool* pool = g_pool.load()) pool->Release(buffer, valid_bytes);
  if (buffer) NoteSelf("tracegate: convert a CUPTI buffer", start);
}

// A capture window opens or closes: the windowed kinds and functions on or off (capture.h).
// Threads that close one window and open the next at once apply, one at a time, the window's state
// as it is then, so the last one leaves CUPTI as the window is. window_mu is taken only at a
// window's edges; the CUPTI calls under it may flush buffers, whose callback takes g_convert only.
void OnWindow(Session& s, CaptureWindow::Action action) {
  if (action == CaptureWindow::Action::kNone) return;
  const TimeNs start = RecordClockNs();
  {
    std::lock_guard<std::mutex> lock(s.window_mu);
    const bool open = s.capture->open();
    if (open != s.window_on) SetWindowed(s.plan, open, nullptr);
    s.window_on = open;
  }
  NoteSelf(action == CaptureWindow::Action::kStart ? "tracegate: capture window opens" : "tracegate: capture window closes",
           start);
}

// cudaDeviceReset and a context's destruction end the life of that context's records: CUPTI's
// buffers are flushed now, while they can still be delivered, as NVIDIA's injection sample does.
void CUPTIAPI OnCallback(void* user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  Guarded("CUPTI callback", [&] {
    if (domain == CUPTI_CB_DOMAIN_NVTX) {
      // CUPTI calls this on the application's thread, inside the NVTX call; the session outlives
      // every callback (StopCollector unsubscribes before deleting it).
      auto* s = static_cast<Session*>(user);
      if (s && s->capture) OnWindow(*s, s->capture->OnNvtxCallback(cbid, data, ThreadId()));
      return;
    }
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
    const TimeNs start = RecordClockNs();
    // Without a subscription (CUPTI unusable) only the part is appended: its metadata says why.
    if (s->subscriber) cuptiActivityFlushAll(0);
    uint64_t dropped = s->subscriber ? DroppedSinceLastCall() : 0;
    if (BufferPool* pool = g_pool.load()) pool->Reserve(g_requesting_threads.load() + kReadyBuffers);
    if (s->subscriber) NoteSelf("tracegate: flush", start);
    {
      std::lock_guard<std::mutex> lock(g_convert);
      PublishCounters(*s, dropped);
    }
    // The one flush thread: the part writer has none of its own (PartWriterOptions::background).
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
  if (!s.plan.quiet) return;
  std::string names;
  for (const QuietApi& q : QuietApis()) {
    if (q.driver && !s.options.driver_api) continue;
    CUptiResult r = q.driver ? cuptiActivityEnableDriverApi(q.cbid, 0) : cuptiActivityEnableRuntimeApi(q.cbid, 0);
    if (r == CUPTI_SUCCESS) names += (names.empty() ? "" : ",") + std::string(q.name);
  }
  if (!names.empty()) s.writer->SetMetadata(kQuietApisKey, names);
}

// How API calls are recorded, and the capture window, in the part's metadata.
void WriteTierMetadata(Session& s) {
  s.writer->SetMetadata(kApiTierKey, s.plan.tier);
  if (s.plan.per_cbid) {
    std::string names;
    for (const RecordedApi& a : s.plan.apis) names += (names.empty() ? "" : ",") + a.name;
    s.writer->SetMetadata(kApiRecordedKey, names);
  }
  s.writer->SetMetadata(kGraphTraceKey, s.options.graph_trace == GraphTrace::kGraph ? "graph" : "node");
  if (s.capture) {
    std::string window = "nvtx:" + s.capture->name();
    if (s.options.record_ranges > 0)
      window += StrFormat(", ranges %lld to %lld", static_cast<long long>(s.options.skip_ranges + 1),
                          static_cast<long long>(s.options.skip_ranges + s.options.record_ranges));
    s.writer->SetMetadata(kCaptureRangeKey, window);
  }
}

// Subscribes and enables every kind; what fails goes to s.missed. False: CUPTI is unusable here.
bool EnableCupti(Session& s) {
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "tracegate";
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
  CUptiResult r = cuptiSubscribe_v2(&s.subscriber, OnCallback, &s, &params);
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
  if (s.capture) cuptiEnableDomain(1, s.subscriber, CUPTI_CB_DOMAIN_NVTX);
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
  if (!s.options.driver_api) s.missed.push_back(std::string("driver API") + " (disabled: " + internal::kDriverApi + "=0)");
  for (CUpti_ActivityKind k : s.plan.always) {
    r = cuptiActivityEnable(k);
    if (r == CUPTI_SUCCESS) s.enabled.push_back(k);
    else s.missed.push_back(std::string(FindRecordedKind(k)->name) + ": " + CuptiError(r));
  }
  // With a capture range the windowed part waits for its first window (OnNvtx); CUPTI's refusals
  // are found by turning it on and off once here.
  SetWindowed(s.plan, true, &s.missed);
  if (s.capture) SetWindowed(s.plan, false, nullptr);
  QuietenApis(s);
  WriteTierMetadata(s);
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
  uint32_t version = 0;
  if (cuptiGetVersion(&version) != CUPTI_SUCCESS) version = 0;
  s->plan = PlanActivity(options, version);
  if (!options.capture_nvtx.empty())
    s->capture = std::make_unique<CaptureWindow>(options.capture_nvtx, options.skip_ranges, options.record_ranges);
  PartWriterOptions wo;
  wo.path = part_path;
  wo.flush_interval_ms = options.flush_ms;
  wo.background = false;  // the collector's flush thread appends the part
  if (Status st = PartWriter::Open(wo, &s->writer); !st.ok()) return st;
  s->converter = std::make_unique<ActivityConverter>(s->pid, ApiNameFromCupti);
  WriteStartMetadata(*s);

  const size_t buffer_bytes = static_cast<size_t>(options.buffer_mb) << 20;
  const size_t cap_bytes = static_cast<size_t>(options.buffer_cap_mb) << 20;
  BufferPool* pool = g_pool.load();
  if (!pool || pool->buffer_bytes() != buffer_bytes || pool->max_buffers() != std::max<size_t>(1, cap_bytes / buffer_bytes))
    g_pool.store(pool = new BufferPool(buffer_bytes, cap_bytes));  // an older pool leaks: CUPTI may hold its buffers
  s->refusals_before = pool->refusals();
  pool->Reserve(g_requesting_threads.load() + kReadyBuffers);

  {
    std::lock_guard<std::mutex> lock(g_convert);
    g_session = s.get();  // before enabling: the first buffers may complete at once
  }
  bool usable = EnableCupti(*s);
  {
    // Event syncs wait for their CUDA event record only when CUPTI took the kind.
    std::lock_guard<std::mutex> lock(g_convert);
    s->converter->ExpectEventRecords(std::find(s->enabled.begin(), s->enabled.end(), CUPTI_ACTIVITY_KIND_CUDA_EVENT) !=
                                     s->enabled.end());
  }
  if (!s->missed.empty()) {
    std::string all;
    for (const std::string& m : s->missed) all += (all.empty() ? "" : "; ") + m;
    s->writer->SetMetadata(kMissedKey, StrFormat("pid %lld: %s", static_cast<long long>(s->pid), all.c_str()));
    // The driver switch is the user's choice, not a problem worth a warning.
    if (!usable || s->missed.size() > (options.driver_api ? 0u : 1u))
      Warn(StrFormat("process %lld is not fully recorded: %s%s", static_cast<long long>(s->pid), all.c_str(),
                     usable ? "" : "; the program runs on unrecorded"));
  }
  // Always: the part writer has no thread of its own, and the part is appended every interval even
  // when CUPTI is unusable, so a killed process's part still says what was missed.
  s->flusher = std::thread(FlushLoop, s.get());
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
  if (s->subscriber) SetWindowed(s->plan, false, nullptr);
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
