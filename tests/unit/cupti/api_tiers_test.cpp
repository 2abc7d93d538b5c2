// The API tiers: the default records, one callback id at a time, exactly the functions the
// analysis reads, checked against every callback name CUPTI knows (no driver needed); `--api all`
// records every call; an older CUPTI falls back to every call less the quiet queries.
#include "api_tiers.h"

#include <cupti.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "tracegate/analyzer/model.h"

namespace tg::cupti {
namespace {

std::set<std::string> Names(const std::vector<RecordedApi>& apis) {
  std::set<std::string> names;
  for (const RecordedApi& a : apis) {
    std::string n = a.name;
    // CUPTI's names carry version suffixes (cudaLaunchKernel_v7000); compare without them.
    for (size_t us; (us = n.rfind("_v")) != std::string::npos && us + 2 < n.size() &&
                    std::all_of(n.begin() + static_cast<long>(us) + 2, n.end(), ::isdigit);)
      n.resize(us);
    names.insert(n);
  }
  return names;
}

TEST(ApiTiers, NamesTheAnalysisReads) {
  for (const char* yes : {"cudaLaunchKernel", "cudaLaunchKernel_v7000", "cudaLaunchKernel_ptsz_v7000", "cuLaunchKernel",
                          "cuLaunchKernelEx", "cuGraphLaunch", "cudaGraphLaunch", "cudaMemcpyAsync", "cuMemcpyDtoHAsync_v2",
                          "cudaMemsetAsync", "cudaDeviceSynchronize", "cudaStreamSynchronize", "cuCtxSynchronize",
                          "cudaEventSynchronize", "cudaStreamWaitEvent", "cuStreamWaitValue32", "cudaEventRecord",
                          "cudaEventQuery", "cudaStreamQuery", "cudaMalloc", "cudaFree", "cudaMallocAsync",
                          "cuMemAlloc_v2", "cuMemCreate", "cuModuleLoadData", "cuLibraryLoadData",
                          "cudaStreamBeginCapture", "cudaStreamEndCapture", "cudaMemPrefetchAsync",
                          "cudaLaunchHostFunc"})
    EXPECT_TRUE(AnalysisReadsApi(yes)) << yes;
  for (const char* no : {"cudaGetLastError", "cudaPeekAtLastError", "cudaGetDevice", "cudaFuncGetAttributes",
                         "cuKernelGetName", "cuGetProcAddress_v2", "cudaStreamIsCapturing", "cudaGraphAddKernelNode",
                         "cudaGraphAddMemcpyNode", "cudaDeviceSetLimit", "cuLaunchKernelGetAttribute",
                         "cudaStreamGetCaptureInfo", "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
                         "cudaGraphInstantiate", "cudaSetDevice", "cuCtxGetCurrent"})
    EXPECT_FALSE(AnalysisReadsApi(no)) << no;
}

TEST(ApiTiers, TheDefaultListHasEveryLaunchSyncAndCaptureCallOfTheAnalysisAndNoQuery) {
  const std::vector<RecordedApi> all = AnalysisApis(true), runtime = AnalysisApis(false);
  const std::set<std::string> names = Names(all);
  // analyzer/model/model.cpp RoleOf: launches, device syncs, capture begin and end; IsSyncApi.
  for (const char* n : {"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel", "cudaGraphLaunch",
                        "cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchCooperativeKernel", "cuLaunchGrid",
                        "cuLaunchGridAsync", "cuGraphLaunch", "cudaDeviceSynchronize", "cuCtxSynchronize",
                        "cudaStreamBeginCapture", "cudaStreamEndCapture", "cuStreamBeginCapture", "cuStreamEndCapture",
                        "cudaStreamSynchronize", "cudaEventSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
                        "cudaStreamWaitEvent", "cuStreamWaitEvent", "cudaEventQuery", "cudaEventRecord",
                        "cuEventRecord", "cudaMemcpy", "cudaMemcpyAsync", "cudaMemset", "cudaMemsetAsync",
                        "cudaMalloc", "cudaFree", "cuModuleLoadData", "cuLibraryLoadData"})
    EXPECT_EQ(names.count(n), 1u) << n;
  for (const QuietApi& q : QuietApis()) EXPECT_EQ(names.count(q.name), 0u) << q.name;
  std::set<std::pair<bool, uint32_t>> ids;
  for (const RecordedApi& a : all) EXPECT_TRUE(ids.insert({a.driver, a.cbid}).second) << a.name;
  EXPECT_GT(all.size(), 150u);
  EXPECT_LT(all.size(), 600u);  // a tier, not everything CUPTI knows (over 1000)
  EXPECT_TRUE(std::none_of(runtime.begin(), runtime.end(), [](const RecordedApi& a) { return a.driver; }));
  EXPECT_EQ(runtime.size(), static_cast<size_t>(std::count_if(all.begin(), all.end(), [](const RecordedApi& a) {
              return !a.driver;
            })));
}

bool Has(const std::vector<CUpti_ActivityKind>& kinds, CUpti_ActivityKind k) {
  return std::find(kinds.begin(), kinds.end(), k) != kinds.end();
}

TEST(ApiTiers, PlanByVersionAndOptions) {
  RecordingOptions o;
  ActivityPlan p = PlanActivity(o, 130001);  // CUDA 13.0
  EXPECT_TRUE(p.per_cbid);
  EXPECT_FALSE(p.quiet);
  EXPECT_FALSE(Has(p.windowed, CUPTI_ACTIVITY_KIND_RUNTIME) || Has(p.always, CUPTI_ACTIVITY_KIND_RUNTIME));
  EXPECT_FALSE(Has(p.windowed, CUPTI_ACTIVITY_KIND_DRIVER) || Has(p.always, CUPTI_ACTIVITY_KIND_DRIVER));
  EXPECT_TRUE(Has(p.windowed, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  EXPECT_TRUE(Has(p.windowed, CUPTI_ACTIVITY_KIND_MEMCPY));
  EXPECT_TRUE(Has(p.windowed, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
  EXPECT_TRUE(Has(p.always, CUPTI_ACTIVITY_KIND_MARKER));
  EXPECT_TRUE(Has(p.always, CUPTI_ACTIVITY_KIND_MEMORY2));
  EXPECT_TRUE(Has(p.always, CUPTI_ACTIVITY_KIND_DEVICE));
  EXPECT_TRUE(Has(p.always, CUPTI_ACTIVITY_KIND_CUDA_EVENT));  // a windowed sync finds an earlier record
  EXPECT_FALSE(Has(p.windowed, CUPTI_ACTIVITY_KIND_GRAPH_TRACE));
  EXPECT_EQ(p.apis.size(), AnalysisApis(true).size());
  EXPECT_EQ(p.tier, "default: the " + std::to_string(p.apis.size()) +
                        " functions the analysis reads, listed in cupti_api_recorded");

  p = PlanActivity(o, 22);  // CUDA 12.4: no per-cbid enabling without the kind
  EXPECT_FALSE(p.per_cbid);
  EXPECT_TRUE(p.quiet);
  EXPECT_TRUE(p.apis.empty());
  EXPECT_TRUE(Has(p.windowed, CUPTI_ACTIVITY_KIND_RUNTIME) && Has(p.windowed, CUPTI_ACTIVITY_KIND_DRIVER));

  o.api = ApiRecording::kAll;
  o.graph_trace = GraphTrace::kGraph;
  p = PlanActivity(o, 130001);
  EXPECT_FALSE(p.per_cbid || p.quiet);
  EXPECT_TRUE(Has(p.windowed, CUPTI_ACTIVITY_KIND_RUNTIME) && Has(p.windowed, CUPTI_ACTIVITY_KIND_DRIVER));
  EXPECT_TRUE(Has(p.windowed, CUPTI_ACTIVITY_KIND_GRAPH_TRACE));
  EXPECT_EQ(p.tier, "all: every runtime and driver API call");

  o.api = ApiRecording::kAnalysis;
  o.driver_api = false;
  p = PlanActivity(o, 130001);
  EXPECT_TRUE(std::none_of(p.apis.begin(), p.apis.end(), [](const RecordedApi& a) { return a.driver; }));
  EXPECT_FALSE(Has(p.windowed, CUPTI_ACTIVITY_KIND_DRIVER));
}

TEST(ApiTiers, AGraphLaunchRecordIsOneRowForTheWholeLaunch) {
  CUpti_ActivityGraphTrace2 r{};
  r.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
  r.correlationId = 77;
  r.start = 1000;
  r.end = 5000;
  r.deviceId = 0;
  r.graphId = 9;
  r.streamId = 13;
  Trace batch;
  AddGraphLaunch(r, 1234, batch);
  ASSERT_EQ(batch.kernels.size(), 1u);
  Kernel k = batch.kernels.Row(0);
  EXPECT_EQ(batch.Name(k.name), "CUDA graph 9");
  EXPECT_EQ(k.start, 1000);
  EXPECT_EQ(k.end, 5000);
  EXPECT_EQ(k.correlation, 77);
  EXPECT_EQ(k.stream, 13);
  EXPECT_EQ(k.graph_id, 9);
  EXPECT_EQ(k.pid, 1234);
  r.start = r.end = 0;  // CUPTI could not time it: dropped and counted, as for kernels
  AddGraphLaunch(r, 1234, batch);
  EXPECT_EQ(batch.kernels.size(), 1u);
}

}  // namespace
}  // namespace tg::cupti
