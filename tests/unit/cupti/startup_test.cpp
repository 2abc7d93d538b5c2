// The collector's start-up pieces that need no GPU: the re-entrant one-time start of the injection
// entry points, the device table from the driver when CUPTI sends none, and the API functions the
// collector stops recording, and the scan for other CUPTI clients on real imports of libcupti.
#include <cupti.h>
#include <cuda.h>
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "collector.h"
#include "collector/src/cupti_clients.h"
#include "devices.h"
#include "options.h"

namespace tg::cupti {

using internal::kCuptiClientImports;
using internal::ObjectsImporting;
namespace {

// Starting CUPTI may run cuInit, whose driver calls InitializeInjection again on the same thread:
// the inner call must return at once (std::call_once would wait for itself forever).
TEST(StartOnce, ReentrantCallReturnsAtOnce) {
  StartOnce once;
  int outer = 0, inner = 0;
  bool inner_ran = true;
  EXPECT_TRUE(once.Run([&] {
    ++outer;
    inner_ran = once.Run([&] { ++inner; });
  }));
  EXPECT_EQ(outer, 1);
  EXPECT_EQ(inner, 0);
  EXPECT_FALSE(inner_ran);
  EXPECT_TRUE(once.started());
  EXPECT_FALSE(once.Run([&] { ++outer; }));
  EXPECT_EQ(outer, 1);
}

TEST(StartOnce, ConcurrentCallDoesNotWaitForTheFirst) {
  StartOnce once;
  std::atomic<bool> release{false}, inside{false};
  std::thread first([&] {
    once.Run([&] {
      inside.store(true);
      while (!release.load()) std::this_thread::yield();
    });
  });
  while (!inside.load()) std::this_thread::yield();
  // Another thread arriving while the first start runs returns at once, not having run.
  EXPECT_FALSE(once.Run([] {}));
  EXPECT_FALSE(once.started());
  release.store(true);
  first.join();
  EXPECT_TRUE(once.started());
}

TEST(StartOnce, AThrowingStartIsNotRunAgain) {
  StartOnce once;
  EXPECT_THROW(once.Run([] { throw std::runtime_error("x"); }), std::runtime_error);
  EXPECT_FALSE(once.Run([] { FAIL() << "ran twice"; }));
}

TEST(DriverDevices, UuidPrintsAsNvmlDoes) {
  const unsigned char b[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                               0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe};
  EXPECT_EQ(GpuUuidString(b), "GPU-01234567-89ab-cdef-1032-547698badcfe");
}

TEST(DriverDevices, NoDriverNoDevices) {
  EXPECT_TRUE(DevicesFromDriver([](const char*) -> void* { return nullptr; }).empty());
}

// A stand-in driver with two devices (the real one is not loaded here).
namespace fake {
CUresult Count(int* n) { *n = 2; return CUDA_SUCCESS; }
CUresult Get(CUdevice* d, int i) { *d = 10 + i; return CUDA_SUCCESS; }
CUresult Name(char* s, int len, CUdevice d) {
  std::strncpy(s, d == 10 ? "NVIDIA H100 80GB HBM3" : "NVIDIA H200", size_t(len));
  return CUDA_SUCCESS;
}
CUresult Mem(size_t* bytes, CUdevice) { *bytes = size_t{80} << 30; return CUDA_SUCCESS; }
CUresult Attr(int* v, CUdevice_attribute a, CUdevice) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 2'619'000; return CUDA_SUCCESS;  // kHz
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 5120; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult Uuid(CUuuid* u, CUdevice d) {
  std::memset(u->bytes, d == 10 ? 0xaa : 0xbb, sizeof u->bytes);
  return CUDA_SUCCESS;
}
}  // namespace fake

TEST(DriverDevices, DescribesEveryDeviceAsCuptiWould) {
  auto symbol = [](const char* name) -> void* {
    const std::string n = name;
    if (n == "cuDeviceGetCount") return reinterpret_cast<void*>(&fake::Count);
    if (n == "cuDeviceGet") return reinterpret_cast<void*>(&fake::Get);
    if (n == "cuDeviceGetName") return reinterpret_cast<void*>(&fake::Name);
    if (n == "cuDeviceTotalMem_v2") return reinterpret_cast<void*>(&fake::Mem);
    if (n == "cuDeviceGetAttribute") return reinterpret_cast<void*>(&fake::Attr);
    if (n == "cuDeviceGetUuid_v2") return reinterpret_cast<void*>(&fake::Uuid);
    return nullptr;
  };
  std::vector<DriverDevice> d = DevicesFromDriver(symbol);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].device.id, 0);
  EXPECT_EQ(d[0].device.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d[0].device.sm_count, 132);
  EXPECT_EQ(d[0].device.memory_bytes, int64_t{80} << 30);
  EXPECT_EQ(d[0].device.compute_major, 9);
  EXPECT_EQ(d[0].device.compute_minor, 0);
  EXPECT_NEAR(d[0].device.peak_bandwidth_gbs, 3352.3, 0.1);  // 2 x 2.619 GHz x 640 bytes
  EXPECT_EQ(d[0].uuid, "GPU-aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa");
  EXPECT_EQ(d[1].device.id, 1);
  EXPECT_EQ(d[1].device.name, "NVIDIA H200");
  EXPECT_EQ(d[1].uuid, "GPU-bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb");
}

// The callback ids are the functions Kineto leaves out (CUPTI names them without a driver).
TEST(QuietApis, IdsNameTheIntendedFunctions) {
  ASSERT_FALSE(QuietApis().empty());
  for (const QuietApi& q : QuietApis()) {
    const char* name = nullptr;
    ASSERT_EQ(cuptiGetCallbackName(q.driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, q.cbid, &name),
              CUPTI_SUCCESS);
    EXPECT_EQ(std::string(name).rfind(q.name, 0), 0u) << name << " vs " << q.name;
  }
}

// Every name of a quieted API is a query; no API the analysis reads (launches, copies, memsets,
// synchronisations, waits, events, graphs, allocations: analyzer/model/model.cpp RoleOf,
// analysis/idle_causes.cpp IsWaitApi, rules/timeline_rules.cpp IsSyncApi) is quieted, checked
// against every callback name CUPTI knows in both domains.
TEST(QuietApis, OnlyQueriesAndNeverALaunchCopySyncOrWait) {
  auto any_of = [](const std::string& name, std::initializer_list<const char*> words) {
    for (const char* w : words)
      if (name.find(w) != std::string::npos) return true;
    return false;
  };
  std::set<std::pair<bool, uint32_t>> quiet;
  for (const QuietApi& q : QuietApis()) {
    EXPECT_TRUE(quiet.insert({q.driver, q.cbid}).second) << q.name << " is listed twice";
    EXPECT_TRUE(any_of(q.name, {"Get", "Peek", "IsCapturing", "Occupancy"})) << q.name << " is not a query";
  }
  size_t named = 0, kept = 0;
  for (bool driver : {false, true}) {
    const uint32_t size = driver ? uint32_t{CUPTI_DRIVER_TRACE_CBID_SIZE} : uint32_t{CUPTI_RUNTIME_TRACE_CBID_SIZE};
    for (uint32_t cbid = 1; cbid < size; ++cbid) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) !=
              CUPTI_SUCCESS || !name)
        continue;
      ++named;
      const std::string n = name;
      if (!any_of(n, {"Launch", "Memcpy", "Memset", "Synchronize", "Wait", "Event", "Graph", "Malloc", "Free",
                      "Alloc", "Query", "Signal", "Copy", "Prefetch"}))
        continue;
      ++kept;
      EXPECT_EQ(quiet.count({driver, cbid}), 0u) << n << " does GPU work or is read by the analysis";
    }
  }
  EXPECT_GT(named, 500u);  // CUPTI named the callbacks (no driver needed)
  EXPECT_GT(kept, 100u);
}

// What the part's metadata lists (when CUPTI accepts every one): the driver functions only when
// driver API calls are recorded.
TEST(QuietApis, NamesInTheMetadata) {
  const std::string all = QuietApiNames(true), runtime = QuietApiNames(false);
  EXPECT_EQ(all.rfind("cudaGetDevice,cuCtxGetCurrent,cuDevicePrimaryCtxGetState,cuKernelGetAttribute,cudaGetLastError,", 0),
            0u) << all;
  for (const char* n : {"cudaPeekAtLastError", "cudaGetErrorString", "cudaFuncGetAttributes", "cuKernelGetName",
                        "cuGetProcAddress_v2", "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags"})
    EXPECT_NE(("," + all + ",").find(std::string(",") + n + ","), std::string::npos) << n;
  EXPECT_EQ(runtime,
            "cudaGetDevice,cudaGetLastError,cudaPeekAtLastError,cudaGetErrorString,cudaFuncGetAttributes,"
            "cudaDeviceGetAttribute,cudaStreamIsCapturing,cudaStreamIsCapturing_ptsz");
}

// The scan for other CUPTI clients (collector/src/cupti_clients.h) on real imports of libcupti:
// this test program links the collector, so it imports cuptiSubscribe_v2; the collector's own
// object is left out, as at stop.
TEST(CuptiClients, TheCollectorFindsRealImportsButNotItself) {
  const std::vector<std::string_view> imports(std::begin(kCuptiClientImports), std::end(kCuptiClientImports));
  std::vector<std::string> all = ObjectsImporting(imports, nullptr);
  EXPECT_NE(std::find(all.begin(), all.end(), "tracegate_cupti_tests"), all.end()) << ::testing::PrintToString(all);
  const auto self = reinterpret_cast<const void*>(&StopCollector);
  std::vector<std::string> others = ObjectsImporting(imports, self);
  EXPECT_EQ(std::find(others.begin(), others.end(), "tracegate_cupti_tests"), others.end());
  // The injection library, loaded as the driver loads it, is one too (its own scan leaves it out).
  ASSERT_NE(::dlopen(TRACEGATE_INJECT_LIB, RTLD_NOW | RTLD_LOCAL), nullptr) << ::dlerror();
  others = ObjectsImporting(imports, self);
  EXPECT_NE(std::find(others.begin(), others.end(), "libtracegate_inject.so"), others.end())
      << ::testing::PrintToString(others);
}

}  // namespace
}  // namespace tg::cupti
