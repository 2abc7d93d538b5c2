// The API tiers of the collector; see api_tiers.h.
#include "api_tiers.h"

#include <cupti.h>

#include <algorithm>

#include "convert.h"

namespace tg::cupti {

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

namespace {

// The name without CUPTI's version and per-thread-stream suffixes, as analyzer RoleOf strips them.
std::string_view BaseName(std::string_view name) {
  for (size_t us; (us = name.rfind('_')) != std::string_view::npos;) {
    const std::string_view tail = name.substr(us + 1);
    const bool version = tail.size() > 1 && tail[0] == 'v' &&
                         std::all_of(tail.begin() + 1, tail.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!version && tail != "ptsz" && tail != "ptds" && tail != "spt") break;
    name = name.substr(0, us);
  }
  return name;
}

bool Has(std::string_view name, std::string_view word) { return name.find(word) != std::string_view::npos; }

}  // namespace

bool AnalysisReadsApi(std::string_view name) {
  name = BaseName(name);
  for (std::string_view never : {"Get", "Set", "Attribute", "Node", "Peek"})
    if (Has(name, never)) return false;
  static constexpr std::string_view kWords[] = {
      "Launch",       "Memcpy",       "Memset",      "Synchronize",   "StreamWait",     "CtxWaitEvent",
      "EventRecord",  "EventQuery",   "StreamQuery", "Malloc",        "Free",           "MemAlloc",
      "MemCreate",    "MemRelease",   "ModuleLoad",  "LibraryLoad",   "BeginCapture",   "EndCapture",
      "Prefetch",     "SignalExternal", "WaitExternal"};
  return std::any_of(std::begin(kWords), std::end(kWords), [&](std::string_view w) { return Has(name, w); });
}

std::vector<RecordedApi> AnalysisApis(bool driver_api) {
  std::vector<RecordedApi> apis;
  for (bool driver : {false, true}) {
    if (driver && !driver_api) continue;
    const uint32_t size = driver ? uint32_t{CUPTI_DRIVER_TRACE_CBID_SIZE} : uint32_t{CUPTI_RUNTIME_TRACE_CBID_SIZE};
    for (uint32_t cbid = 1; cbid < size; ++cbid) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) !=
              CUPTI_SUCCESS || !name)
        continue;
      if (AnalysisReadsApi(name)) apis.push_back({driver, cbid, name});
    }
  }
  return apis;
}

ActivityPlan PlanActivity(const RecordingOptions& o, uint32_t version) {
  ActivityPlan p;
  const bool all = o.api == ApiRecording::kAll;
  p.per_cbid = !all && version >= kPerCbidApiVersion;
  p.quiet = !all && !p.per_cbid;
  for (const RecordedKind& k : kRecordedKinds) {
    const bool api = k.kind == CUPTI_ACTIVITY_KIND_RUNTIME || k.kind == CUPTI_ACTIVITY_KIND_DRIVER;
    if (k.kind == CUPTI_ACTIVITY_KIND_DRIVER && !o.driver_api) continue;
    if (api && p.per_cbid) continue;
    const bool costly = api || k.event.has_value();
    (costly && k.kind != CUPTI_ACTIVITY_KIND_MARKER ? p.windowed : p.always).push_back(k.kind);
  }
  if (o.graph_trace == GraphTrace::kGraph) p.windowed.push_back(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  if (p.per_cbid) p.apis = AnalysisApis(o.driver_api);
  p.tier = all       ? "all: every runtime" + std::string(o.driver_api ? " and driver" : "") + " API call"
           : p.quiet ? "default, CUPTI older than 12.5: every API call less the queries in cupti_api_not_recorded"
                     : "default: the " + std::to_string(p.apis.size()) +
                           " functions the analysis reads, listed in cupti_api_recorded";
  return p;
}

void AddGraphLaunch(const CUpti_ActivityGraphTrace2& r, int64_t pid, Trace& batch) {
  tg::Kernel k;
  if (!ToTimes(r.start, r.end, batch.quality, &k.start, &k.end)) return;
  k.name = batch.strings.Intern("CUDA graph " + std::to_string(r.graphId));
  k.device = static_cast<int32_t>(r.deviceId);
  k.stream = r.streamId;
  k.correlation = r.correlationId;
  k.pid = pid;
  k.graph_id = r.graphId;
  batch.kernels.Add(k);
}

void SetWindowed(const ActivityPlan& plan, bool on, std::vector<std::string>* refused) {
  for (CUpti_ActivityKind k : plan.windowed) {
    CUptiResult r = on ? cuptiActivityEnable(k) : cuptiActivityDisable(k);
    if (r != CUPTI_SUCCESS && refused) {
      const RecordedKind* known = FindRecordedKind(k);
      const char* text = nullptr;
      cuptiGetResultString(r, &text);
      refused->push_back(std::string(known ? known->name : "CUDA graph launches") + ": " +
                         (text ? text : "CUPTI error " + std::to_string(static_cast<int>(r))));
    }
  }
  for (const RecordedApi& a : plan.apis)
    (void)(a.driver ? cuptiActivityEnableDriverApi(a.cbid, on ? 1 : 0) : cuptiActivityEnableRuntimeApi(a.cbid, on ? 1 : 0));
}

}  // namespace tg::cupti
