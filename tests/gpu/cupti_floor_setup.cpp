// cupti_floor's CUPTI side (plain C++20, beside the CUDA loops of cupti_floor.cu): sets up one
// configuration of CUPTI in this process before CUDA starts, hands CUPTI cheap recycled buffers,
// and at the end flushes and counts the records. See cupti_floor.cu for the configurations.
#include <cupti.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "api_tiers.h"
#include "cupti_floor.h"

namespace {

constexpr size_t kBufferBytes = 8 << 20;
std::mutex g_mu;
std::vector<uint8_t*> g_free;  // under g_mu
std::atomic<uint64_t> g_records{0}, g_buffers{0};
CUpti_SubscriberHandle g_subscriber = nullptr;

void CUPTIAPI Requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  uint8_t* b = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_free.empty()) {
      b = g_free.back();
      g_free.pop_back();
    }
  }
  if (!b) b = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  g_buffers++;
  *buffer = b;
  *size = b ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI Completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* r = nullptr;
  uint64_t n = 0;
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) ++n;
  g_records += n;
  std::lock_guard<std::mutex> lock(g_mu);
  g_free.push_back(buffer);
}

void CUPTIAPI Nothing(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

uint64_t CUPTIAPI RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

bool Check(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return true;
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  std::fprintf(stderr, "cupti_floor: %s: %s\n", what, text ? text : "?");
  return false;
}

bool Enable(CUpti_ActivityKind k, const char* what) { return Check(cuptiActivityEnable(k), what); }

}  // namespace

const char* const kFloorConfigs[] = {
    "none",            // no CUPTI at all
    "subscribe",       // cuptiSubscribe with no callback domain enabled
    "runtime_all",     // the RUNTIME activity kind: a record for every runtime call
    "allowlist",       // no API kind; the analysis tier's functions one cbid at a time (CUDA 12.5+)
    "kernel",          // CONCURRENT_KERNEL only
    "allowlist_kernel",  // allowlist + CONCURRENT_KERNEL: tracegate's default tier without tracegate
    "runtime_kernel",  // RUNTIME + CONCURRENT_KERNEL, CUPTI's default thread ids
    "runtime_kernel_os_tid",   // the same with cuptiSetThreadIdType(SYSTEM), as tracegate does
    "runtime_kernel_ts_callback",  // the same with a timestamp callback (CLOCK_REALTIME) instead of CUPTI's
    nullptr};

bool SetUpFloorConfig(const std::string& config, std::string* note) {
  if (config == "none") return true;
  if (config == "subscribe") return Check(cuptiSubscribe(&g_subscriber, Nothing, nullptr), "cuptiSubscribe");
  if (config == "runtime_kernel_ts_callback" &&
      !Check(cuptiActivityRegisterTimestampCallback(RealtimeNs), "cuptiActivityRegisterTimestampCallback"))
    return false;
  if (config == "runtime_kernel_os_tid" &&
      !Check(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "cuptiSetThreadIdType"))
    return false;
  if (!Check(cuptiActivityRegisterCallbacks(Requested, Completed), "cuptiActivityRegisterCallbacks")) return false;
  if (config == "runtime_all") return Enable(CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME");
  if (config == "kernel") return Enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL");
  if (config == "allowlist_kernel" && !Enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL")) return false;
  if (config.rfind("allowlist", 0) == 0) {
    uint32_t version = 0;
    cuptiGetVersion(&version);
    if (version < tg::cupti::kPerCbidApiVersion) {
      std::fprintf(stderr, "cupti_floor: CUPTI API version %u has no per-cbid enabling\n", version);
      return false;
    }
    size_t n = 0;
    for (const tg::cupti::RecordedApi& a : tg::cupti::AnalysisApis(true)) {
      CUptiResult r = a.driver ? cuptiActivityEnableDriverApi(a.cbid, 1) : cuptiActivityEnableRuntimeApi(a.cbid, 1);
      n += r == CUPTI_SUCCESS;
    }
    *note = std::to_string(n) + " functions";
    return n > 0;
  }
  if (config.rfind("runtime_kernel", 0) == 0)
    return Enable(CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME") && Enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL");
  std::fprintf(stderr, "cupti_floor: unknown configuration %s\n", config.c_str());
  return false;
}

void FinishFloorConfig(uint64_t* records, uint64_t* buffers) {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  *records = g_records.load();
  *buffers = g_buffers.load();
}
