// Which CUDA API calls the collector records (RecordingOptions::api): the calls the analysis reads
// (the default tier, enabled one callback id at a time where CUPTI allows it), and the queries it
// turns off when it records every call. CUPTI's callback ids come from its headers; the names come
// from CUPTI (cuptiGetCallbackName, no driver needed).
#pragma once

#include <cupti_activity.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tracegate/analyzer/model.h"
#include "tracegate/collector/recorder.h"

namespace tg::cupti {

// API functions whose records the collector turns off, as PyTorch's profiler (Kineto) does for the
// first four: queries called around every launch by frameworks and by the CUDA runtime itself
// (error state, attributes, occupancy, capture state, kernel names, driver entry points), which
// enqueue no GPU work and which no analysis reads, while they made most of the records, and of the
// collector's cost, of a PyTorch iteration. Every launch, copy, memset, synchronisation, wait and
// event call stays recorded (tests/unit/cupti/startup_test.cpp checks the list against every
// callback name CUPTI knows). driver: driver API (else runtime); cbid: CUPTI callback id.
struct QuietApi {
  bool driver;
  uint32_t cbid;
  const char* name;
};
const std::vector<QuietApi>& QuietApis();
// Their names, comma-separated, driver ones only when driver API calls are recorded: the value of
// kQuietApisKey when CUPTI accepts every one.
std::string QuietApiNames(bool driver_api);

// True for a runtime or driver API function the analysis reads, by CUPTI's name for it (a version
// suffix such as _v3020, _ptsz or _ptds is ignored): launches (cuLaunchKernel(Ex) and cuGraphLaunch,
// how cuBLAS and Triton launch, included), copies, memsets, synchronisations, waits (stream and
// event waits, event and stream queries), event records, allocations and frees, module and library
// loads, stream capture begin and end, prefetches and external semaphore signals and waits. Never a
// query (Get, Set, Attribute) or a graph-building call (Node). analyzer/model/model.cpp RoleOf,
// analysis/idle_causes.cpp IsWaitApi and rules/timeline_rules.cpp IsSyncApi read a subset.
bool AnalysisReadsApi(std::string_view name);

struct RecordedApi {
  bool driver;
  uint32_t cbid;
  std::string name;  // CUPTI's, e.g. "cudaLaunchKernel_v7000"
};
// Every callback id CUPTI names in both domains whose function AnalysisReadsApi, driver ones only
// when `driver_api`. Runtime first, then driver, each by callback id.
std::vector<RecordedApi> AnalysisApis(bool driver_api);
// CUPTI's API version from which cuptiActivityEnableRuntimeApi / cuptiActivityEnableDriverApi
// enable single functions without their activity kind (CUDA 12.5, cupti_version.h).
inline constexpr uint32_t kPerCbidApiVersion = 23;

// What the collector turns on in CUPTI, decided at start from the options and CUPTI's version.
// `always` stays on for the whole recording (devices, contexts, allocations, CUPTI's overhead,
// NVTX markers); `windowed` and `apis` are on for the whole recording too, or, with a capture range,
// only inside its windows (capture.h): they are what costs per launch.
struct ActivityPlan {
  std::vector<CUpti_ActivityKind> always, windowed;
  bool per_cbid = false;          // the API tier is enabled one callback id at a time (`apis`)
  std::vector<RecordedApi> apis;  // per_cbid: the functions recorded
  bool quiet = false;             // RUNTIME/DRIVER kinds on, then QuietApis off (CUPTI < 12.5)
  std::string tier;               // metadata kApiTierKey: how API calls are recorded
};
ActivityPlan PlanActivity(const RecordingOptions& options, uint32_t cupti_api_version);

// A CUPTI_ACTIVITY_KIND_GRAPH_TRACE record (`--cuda-graph-trace graph`) as one kernel row named
// "CUDA graph <id>" spanning the whole launch, with its graph id, stream and launch correlation.
void AddGraphLaunch(const CUpti_ActivityGraphTrace2& r, int64_t pid, Trace& batch);

// Turns the plan's windowed part on (or off): activity kinds, then the per-cbid functions (CUPTI:
// a kind enabled after the per-cbid calls would override them). What CUPTI refuses is appended to
// *refused ("NAME: error"), once per kind; nullptr ignores it.
void SetWindowed(const ActivityPlan& plan, bool on, std::vector<std::string>* refused);

}  // namespace tg::cupti
