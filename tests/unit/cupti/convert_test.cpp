// The conversion layer fed with hand-filled CUPTI activity records (the real CUDA 13 structs of
// cupti_activity.h): every field of the model rows is checked.
#include "convert.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <limits>
#include <string>

#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/store.h"

namespace tg::cupti {
namespace {

template <typename Record>
void Feed(ActivityConverter& c, const Record& r, Trace& batch) {
  c.Convert(reinterpret_cast<const CUpti_Activity&>(r), batch);
}

constexpr int64_t kPid = 4242;

// A record as CUPTI would hand it over: every field 0 but its kind.
template <typename Record>
Record Zeroed(CUpti_ActivityKind kind) {
  Record r;
  std::memset(&r, 0, sizeof r);
  r.kind = kind;
  return r;
}

void ExpectCopy(const Memcpy& got, const Memcpy& want) {
  EXPECT_EQ(got.start, want.start);
  EXPECT_EQ(got.end, want.end);
  EXPECT_EQ(got.device, want.device);
  EXPECT_EQ(got.stream, want.stream);
  EXPECT_EQ(got.correlation, want.correlation);
  EXPECT_EQ(got.bytes, want.bytes);
  EXPECT_EQ(got.kind, want.kind);
  EXPECT_EQ(got.src_kind, want.src_kind);
  EXPECT_EQ(got.dst_kind, want.dst_kind);
  EXPECT_EQ(got.pid, want.pid);
}

ActivityConverter MakeConverter(int* lookups = nullptr) {
  return ActivityConverter(kPid, [lookups](ApiKind kind, uint32_t cbid) -> std::string {
    if (lookups) ++*lookups;
    if (kind == ApiKind::kRuntime && cbid == 211) return "cudaLaunchKernel_v7000";
    if (kind == ApiKind::kDriver && cbid == 307) return "cuLaunchKernel";
    return "";
  });
}

CUpti_ActivityKernel10 MakeKernel(const char* name, uint64_t start, uint64_t end) {
  auto r = Zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  r.name = name;
  r.start = start;
  r.end = end;
  return r;
}

TEST(CuptiConvert, KernelKeepsEveryField) {
  ActivityConverter c = MakeConverter();
  CUpti_ActivityKernel10 r = MakeKernel("_Z5scalePfif", 1'000, 3'500);
  r.deviceId = 1;
  r.streamId = 13;
  r.correlationId = 77;
  r.gridX = 120;
  r.gridY = 2;
  r.gridZ = 3;
  r.blockX = 256;
  r.blockY = 4;
  r.blockZ = 1;
  r.registersPerThread = 40;
  r.staticSharedMemory = 1024;
  r.dynamicSharedMemory = 4096;
  r.graphId = 9;
  r.graphNodeId = 123456789012ULL;
  Trace batch;
  Feed(c, r, batch);

  ASSERT_EQ(batch.kernels.size(), 1u);
  Kernel k = batch.kernels.Row(0);
  EXPECT_EQ(k.start, 1'000);
  EXPECT_EQ(k.end, 3'500);
  EXPECT_EQ(batch.Name(k.name), "scale(float*, int, float)");  // demangled, as nsys' demangledName
  EXPECT_EQ(k.device, 1);
  EXPECT_EQ(k.stream, 13);
  EXPECT_EQ(k.correlation, 77);
  EXPECT_EQ(k.grid_x, 120);
  EXPECT_EQ(k.grid_y, 2);
  EXPECT_EQ(k.grid_z, 3);
  EXPECT_EQ(k.block_x, 256);
  EXPECT_EQ(k.block_y, 4);
  EXPECT_EQ(k.block_z, 1);
  EXPECT_EQ(k.registers, 40);
  EXPECT_EQ(k.shared_static, 1024);
  EXPECT_EQ(k.shared_dynamic, 4096);
  EXPECT_EQ(k.pid, kPid);
  EXPECT_EQ(k.graph_id, 9);
  EXPECT_EQ(k.graph_node_id, 123456789012LL);
  EXPECT_EQ(batch.quality.Total(), 0u);
}

TEST(CuptiConvert, KernelOutsideAGraphHasNoGraphIds) {
  ActivityConverter c = MakeConverter();
  Trace batch;
  Feed(c, MakeKernel("plain_kernel", 10, 20), batch);
  Kernel k = batch.kernels.Row(0);
  EXPECT_EQ(k.graph_id, kUnknownId);
  EXPECT_EQ(k.graph_node_id, kUnknownId);
  EXPECT_EQ(batch.Name(k.name), "plain_kernel");  // not mangled: kept as is
}

TEST(CuptiConvert, SameKernelNameInternedOnceAcrossRecords) {
  ActivityConverter c = MakeConverter();
  Trace batch;
  Feed(c, MakeKernel("_Z3addPfS_", 10, 20), batch);
  Feed(c, MakeKernel("_Z3addPfS_", 30, 40), batch);
  ASSERT_EQ(batch.kernels.size(), 2u);
  EXPECT_EQ(batch.kernels.name[0], batch.kernels.name[1]);
  EXPECT_EQ(batch.Name(batch.kernels.name[0]), "add(float*, float*)");
}

TEST(CuptiConvert, MemcpyKeepsEveryField) {
  ActivityConverter c = MakeConverter();
  auto r = Zeroed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  r.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  r.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  r.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  r.bytes = 64ULL << 20;
  r.start = 5'000;
  r.end = 9'000;
  r.deviceId = 2;
  r.streamId = 7;
  r.correlationId = 31;
  Trace batch;
  Feed(c, r, batch);

  ASSERT_EQ(batch.memcpys.size(), 1u);
  // Memory kinds: CUPTI 2 (pinned) -> nsys / model 1, CUPTI 3 (device) -> 2.
  ExpectCopy(batch.memcpys.Row(0), Memcpy{5'000, 9'000, 2, 7, 31, 64LL << 20, CopyKind::kHtoD, MemKind::kPinned,
                                          MemKind::kDevice, kPid});
  EXPECT_EQ(batch.quality.Total(), 0u);
}

TEST(CuptiConvert, EveryCopyAndMemoryKindMapsByNumber) {
  // CopyKind shares CUPTI's numbers 1..10; MemKind is CUPTI's minus one (1..7 -> 0..6).
  ActivityConverter c = MakeConverter();
  Trace batch;
  for (uint8_t kind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD; kind <= CUPTI_ACTIVITY_MEMCPY_KIND_PTOP; ++kind) {
    auto r = Zeroed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
    r.copyKind = kind;
    r.srcKind = static_cast<uint8_t>(kind <= 7 ? kind : 0);
    r.dstKind = static_cast<uint8_t>(kind <= 7 ? kind : 0);
    r.start = 1;
    r.end = 2;
    Feed(c, r, batch);
  }
  ASSERT_EQ(batch.memcpys.size(), 10u);
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(static_cast<int>(batch.memcpys.kind[i]), static_cast<int>(i + 1));
    MemKind expected = i + 1 <= 7 ? static_cast<MemKind>(i) : MemKind::kUnknown;
    EXPECT_EQ(batch.memcpys.src_kind[i], expected) << i;
    EXPECT_EQ(batch.memcpys.dst_kind[i], expected) << i;
  }
}

TEST(CuptiConvert, UnknownCopyKindIsKeptAndCounted) {
  ActivityConverter c = MakeConverter();
  auto r = Zeroed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  r.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN;
  r.start = 1;
  r.end = 2;
  Trace batch;
  Feed(c, r, batch);
  ASSERT_EQ(batch.memcpys.size(), 1u);
  EXPECT_EQ(batch.memcpys.kind[0], CopyKind::kUnknown);
  EXPECT_EQ(batch.memcpys.src_kind[0], MemKind::kUnknown);
  EXPECT_EQ(batch.quality.Get(Quality::kUnknownCopyKind), 1u);
}

TEST(CuptiConvert, PeerCopyKeepsEveryField) {
  ActivityConverter c = MakeConverter();
  auto r = Zeroed<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
  r.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  r.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  r.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  r.bytes = 1 << 20;
  r.start = 100;
  r.end = 600;
  r.deviceId = 0;
  r.srcDeviceId = 0;
  r.dstDeviceId = 1;
  r.streamId = 21;
  r.correlationId = 8;
  Trace batch;
  Feed(c, r, batch);
  ASSERT_EQ(batch.memcpys.size(), 1u);
  ExpectCopy(batch.memcpys.Row(0), Memcpy{100, 600, 0, 21, 8, 1 << 20, CopyKind::kPtoP, MemKind::kDevice,
                                          MemKind::kDevice, kPid});
}

TEST(CuptiConvert, MemsetKeepsEveryField) {
  ActivityConverter c = MakeConverter();
  auto r = Zeroed<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  r.value = 0xAB;
  r.bytes = 4096;
  r.start = 700;
  r.end = 750;
  r.deviceId = 3;
  r.streamId = 9;
  r.correlationId = 55;
  r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  Trace batch;
  Feed(c, r, batch);
  ASSERT_EQ(batch.memsets.size(), 1u);
  Memset m = batch.memsets.Row(0);
  EXPECT_EQ(m.start, 700);
  EXPECT_EQ(m.end, 750);
  EXPECT_EQ(m.device, 3);
  EXPECT_EQ(m.stream, 9);
  EXPECT_EQ(m.correlation, 55);
  EXPECT_EQ(m.bytes, 4096);
  EXPECT_EQ(m.value, 0xAB);
  EXPECT_EQ(m.mem_kind, MemKind::kManaged);  // CUPTI 5 -> 4
  EXPECT_EQ(m.pid, kPid);
}

CUpti_ActivitySynchronization2 MakeSync(CUpti_ActivitySynchronizationType type, uint32_t context) {
  auto r = Zeroed<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  r.type = type;
  r.contextId = context;
  r.start = 2'000;
  r.end = 2'900;
  r.correlationId = 66;
  r.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  r.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  return r;
}

TEST(CuptiConvert, SyncTakesItsDeviceFromTheContextRecord) {
  ActivityConverter c = MakeConverter();
  auto ctx = Zeroed<CUpti_ActivityContext3>(CUPTI_ACTIVITY_KIND_CONTEXT);
  ctx.contextId = 3;
  ctx.deviceId = 1;
  Trace batch;
  Feed(c, ctx, batch);
  CUpti_ActivitySynchronization2 stream_sync = MakeSync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 3);
  stream_sync.streamId = 14;
  Feed(c, stream_sync, batch);
  CUpti_ActivitySynchronization2 event_sync = MakeSync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, 8);
  event_sync.cudaEventId = 5;
  Feed(c, event_sync, batch);

  ASSERT_EQ(batch.syncs.size(), 1u);  // the context record makes no row; context 8 is awaited
  Trace last;
  c.Close(last);
  ASSERT_EQ(last.syncs.size(), 1u);
  Sync a = batch.syncs.Row(0);
  EXPECT_EQ(a.start, 2'000);
  EXPECT_EQ(a.end, 2'900);
  EXPECT_EQ(a.device, 1);
  EXPECT_EQ(a.stream, 14);
  EXPECT_EQ(a.correlation, 66);
  EXPECT_EQ(a.kind, SyncKind::kStreamSync);
  EXPECT_EQ(a.event_id, kUnknownId);
  EXPECT_EQ(a.pid, kPid);
  Sync b = last.syncs.Row(0);
  EXPECT_EQ(b.device, -1);  // context 8 never announced
  EXPECT_EQ(b.stream, kUnknownId);
  EXPECT_EQ(b.kind, SyncKind::kEventSync);
  EXPECT_EQ(b.event_id, 5);
}

TEST(CuptiConvert, EverySyncTypeMapsByNumber) {
  ActivityConverter c = MakeConverter();
  Trace batch;
  auto ctx = Zeroed<CUpti_ActivityContext3>(CUPTI_ACTIVITY_KIND_CONTEXT);
  ctx.contextId = 1;
  Feed(c, ctx, batch);
  for (int t = 0; t <= 4; ++t) Feed(c, MakeSync(static_cast<CUpti_ActivitySynchronizationType>(t), 1), batch);
  ASSERT_EQ(batch.syncs.size(), 5u);
  EXPECT_EQ(batch.syncs.kind[0], SyncKind::kUnknown);
  EXPECT_EQ(batch.syncs.kind[1], SyncKind::kEventSync);
  EXPECT_EQ(batch.syncs.kind[2], SyncKind::kStreamWaitEvent);
  EXPECT_EQ(batch.syncs.kind[3], SyncKind::kStreamSync);
  EXPECT_EQ(batch.syncs.kind[4], SyncKind::kContextSync);
}

CUpti_ActivityAPI MakeApi(CUpti_ActivityKind kind, uint32_t cbid, uint64_t start, uint64_t end) {
  auto r = Zeroed<CUpti_ActivityAPI>(kind);
  r.cbid = cbid;
  r.start = start;
  r.end = end;
  r.processId = 4242;
  r.threadId = 4250;
  r.correlationId = 77;
  return r;
}

TEST(CuptiConvert, ApiCallsKeepThreadPidCorrelationAndReturnValue) {
  int lookups = 0;
  ActivityConverter c = MakeConverter(&lookups);
  Trace batch;
  CUpti_ActivityAPI runtime = MakeApi(CUPTI_ACTIVITY_KIND_RUNTIME, 211, 900, 1'100);
  runtime.returnValue = 0;
  Feed(c, runtime, batch);
  CUpti_ActivityAPI driver = MakeApi(CUPTI_ACTIVITY_KIND_DRIVER, 307, 950, 1'050);
  driver.correlationId = 78;
  driver.returnValue = 700;  // CUDA_ERROR_LAUNCH_FAILED
  Feed(c, driver, batch);
  Feed(c, MakeApi(CUPTI_ACTIVITY_KIND_RUNTIME, 211, 2'000, 2'100), batch);

  ASSERT_EQ(batch.api_calls.size(), 3u);
  ApiCall a = batch.api_calls.Row(0);
  EXPECT_EQ(a.start, 900);
  EXPECT_EQ(a.end, 1'100);
  EXPECT_EQ(batch.Name(a.name), "cudaLaunchKernel_v7000");  // CUPTI's name, as nsys exports it
  EXPECT_EQ(a.kind, ApiKind::kRuntime);
  EXPECT_EQ(a.pid, 4242);
  EXPECT_EQ(a.tid, 4250);
  EXPECT_EQ(a.correlation, 77);
  EXPECT_EQ(a.return_value, 0);
  ApiCall d = batch.api_calls.Row(1);
  EXPECT_EQ(batch.Name(d.name), "cuLaunchKernel");
  EXPECT_EQ(d.kind, ApiKind::kDriver);
  EXPECT_EQ(d.correlation, 78);
  EXPECT_EQ(d.return_value, 700);
  EXPECT_EQ(lookups, 2);  // one lookup per (kind, callback id)
}

TEST(CuptiConvert, ApiWithoutANameSaysWhichCallbackItWas) {
  ActivityConverter c = MakeConverter();
  Trace batch;
  Feed(c, MakeApi(CUPTI_ACTIVITY_KIND_DRIVER, 999, 1, 2), batch);
  EXPECT_EQ(batch.Name(batch.api_calls.name[0]), "driver API 999");
}

CUpti_ActivityMarker2 MakeMarker(CUpti_ActivityFlag flags, uint32_t id, uint64_t ts, const char* name,
                                 const char* domain) {
  auto r = Zeroed<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  r.flags = flags;
  r.id = id;
  r.timestamp = ts;
  r.name = name;
  r.domain = domain;
  r.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  r.objectId.pt.processId = 4242;
  r.objectId.pt.threadId = 4251;
  return r;
}

TEST(CuptiConvert, RangeStartAndEndInDifferentBuffersMakeOneRange) {
  ActivityConverter c = MakeConverter();
  Trace first, second;
  Feed(c, MakeMarker(CUPTI_ACTIVITY_FLAG_MARKER_START, 4, 10'000, "step", "train"), first);
  EXPECT_EQ(first.ranges.size(), 0u);  // waits for its end
  Feed(c, MakeMarker(CUPTI_ACTIVITY_FLAG_MARKER_END, 4, 25'000, nullptr, nullptr), second);

  ASSERT_EQ(second.ranges.size(), 1u);
  Range r = second.ranges.Row(0);
  EXPECT_EQ(r.start, 10'000);
  EXPECT_EQ(r.end, 25'000);
  EXPECT_EQ(second.Name(r.name), "step");
  EXPECT_EQ(second.Name(r.domain), "train");
  EXPECT_EQ(r.pid, 4242);
  EXPECT_EQ(r.tid, 4251);
  EXPECT_EQ(r.depth, 0);  // nesting is computed by FinalizeTrace after the merge
  EXPECT_FALSE(r.on_gpu);
  EXPECT_EQ(r.stream, kUnknownId);
  Trace last;
  c.Close(last);
  EXPECT_EQ(last.quality.Get(Quality::kUnmatchedRangeEnd), 0u);
}

TEST(CuptiConvert, MarkIsARangeOfZeroLengthInTheDefaultDomain) {
  ActivityConverter c = MakeConverter();
  Trace batch;
  Feed(c, MakeMarker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 9, 42'000, "checkpoint", nullptr), batch);
  ASSERT_EQ(batch.ranges.size(), 1u);
  EXPECT_EQ(batch.ranges.start[0], 42'000);
  EXPECT_EQ(batch.ranges.end[0], 42'000);
  EXPECT_EQ(batch.Name(batch.ranges.name[0]), "checkpoint");
  EXPECT_EQ(batch.ranges.domain[0], StringTable::kEmpty);
}

TEST(CuptiConvert, UnpairedRangeMarkersAreCounted) {
  ActivityConverter c = MakeConverter();
  Trace batch;
  Feed(c, MakeMarker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 5'000, nullptr, nullptr), batch);  // no start
  Feed(c, MakeMarker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 6'000, "open", nullptr), batch);
  Feed(c, MakeMarker(CUPTI_ACTIVITY_FLAG_MARKER_START, 3, 7'000, "open too", nullptr), batch);
  EXPECT_EQ(batch.quality.Get(Quality::kUnmatchedRangeEnd), 0u);  // its start may still come
  Trace last;
  c.Close(last);  // two ranges never closed, one end never opened
  EXPECT_EQ(last.quality.Get(Quality::kUnmatchedRangeEnd), 3u);
  EXPECT_EQ(batch.ranges.size() + last.ranges.size(), 0u);
}

TEST(CuptiConvert, SyncObjectMarkersAreSkippedAndCounted) {
  ActivityConverter c = MakeConverter();
  Trace batch;
  Feed(c, MakeMarker(CUPTI_ACTIVITY_FLAG_MARKER_SYNC_ACQUIRE, 1, 5'000, "lock", nullptr), batch);
  EXPECT_EQ(batch.ranges.size(), 0u);
  EXPECT_EQ(batch.quality.Get(Quality::kUnknownCategorySkipped), 1u);
}

TEST(CuptiConvert, UntimedOrImpossibleTimesAreDroppedAndCounted) {
  ActivityConverter c = MakeConverter();
  Trace batch;
  Feed(c, MakeKernel("k", 0, 0), batch);     // CUPTI could not time it
  Feed(c, MakeKernel("k", 500, 400), batch); // ends before it starts
  Feed(c, MakeKernel("k", uint64_t{1} << 63, (uint64_t{1} << 63) + 5), batch);  // beyond int64 ns
  Feed(c, MakeApi(CUPTI_ACTIVITY_KIND_RUNTIME, 211, 0, 0), batch);
  Feed(c, MakeMarker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 1, 0, "m", nullptr), batch);
  EXPECT_EQ(batch.kernels.size() + batch.api_calls.size() + batch.ranges.size(), 0u);
  EXPECT_EQ(batch.quality.Get(Quality::kMissingTimestamp), 3u);
  EXPECT_EQ(batch.quality.Get(Quality::kNegativeDuration), 1u);
  EXPECT_EQ(batch.quality.Get(Quality::kTimestampOverflow), 1u);
}

TEST(CuptiConvert, TimesUpToInt64MaxAreKept) {
  QualityCounters q;
  TimeNs s = 0, e = 0;
  const uint64_t max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(ToTimes(max - 1, max, q, &s, &e));
  EXPECT_EQ(e, std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(ToTimes(0, 5, q, &s, &e));  // a zero start alone is a time, not "untimed"
  EXPECT_EQ(q.Total(), 0u);
}

TEST(CuptiConvert, DeviceRecordBecomesADevice) {
  ActivityConverter c = MakeConverter();
  auto r = Zeroed<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE);
  r.id = 1;
  r.name = "NVIDIA H200";
  r.numMultiprocessors = 132;
  r.globalMemorySize = 150'000'000'000ULL;
  r.globalMemoryBandwidth = 4'800'000'000ULL;  // kB/s -> 4'800'000'000 / 1e6 = 4800 GB/s
  r.computeCapabilityMajor = 9;
  r.computeCapabilityMinor = 0;
  Trace batch;
  Feed(c, r, batch);
  r.numMultiprocessors = 114;  // the same device again: replaces, no second row
  Feed(c, r, batch);
  ASSERT_EQ(batch.devices.size(), 1u);
  const Device& d = batch.devices[0];
  EXPECT_EQ(d.id, 1);
  EXPECT_EQ(d.name, "NVIDIA H200");
  EXPECT_EQ(d.sm_count, 114);
  EXPECT_EQ(d.memory_bytes, 150'000'000'000LL);
  EXPECT_DOUBLE_EQ(d.peak_bandwidth_gbs, 4800.0);
  EXPECT_EQ(d.compute_major, 9);
  EXPECT_EQ(d.compute_minor, 0);
}

CUpti_ActivityMemory4 MakeAllocation(CUpti_ActivityMemoryOperationType op, uint32_t device, uint64_t address,
                                     uint64_t bytes, CUpti_ActivityMemoryKind kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) {
  auto r = Zeroed<CUpti_ActivityMemory4>(CUPTI_ACTIVITY_KIND_MEMORY2);
  r.memoryOperationType = op;
  r.memoryKind = kind;
  r.deviceId = device;
  r.address = address;
  r.bytes = bytes;
  r.timestamp = 1;
  return r;
}

TEST(CuptiConvert, MemoryPeakIsTheLargestLiveTotalOnOneDevice) {
  constexpr uint64_t MiB = 1 << 20;
  const auto alloc = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  const auto release = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  ActivityConverter c = MakeConverter();
  Trace batch;
  Feed(c, MakeAllocation(alloc, 0, 0xA000, 100 * MiB), batch);  // dev0: 100
  Feed(c, MakeAllocation(alloc, 0, 0xB000, 50 * MiB), batch);   // dev0: 150
  Feed(c, MakeAllocation(release, 0, 0xA000, 100 * MiB), batch);  // dev0: 50
  Feed(c, MakeAllocation(alloc, 0, 0xC000, 200 * MiB), batch);  // dev0: 250 = peak so far
  Feed(c, MakeAllocation(alloc, 1, 0xA000, 240 * MiB), batch);  // dev1: 240, below 250
  Feed(c, MakeAllocation(release, 1, 0xF000, 999 * MiB), batch);  // allocated before recording: ignored
  Feed(c, MakeAllocation(alloc, 1, 0xD000, 900 * MiB, CUPTI_ACTIVITY_MEMORY_KIND_PINNED), batch);  // host memory
  EXPECT_EQ(c.allocations().PeakBytes(), 250 * MiB);
  EXPECT_EQ(c.allocations().LiveBytes(0), 250 * MiB);  // 50 + 200
  EXPECT_EQ(c.allocations().LiveBytes(1), 240 * MiB);
  EXPECT_EQ(batch.GpuEventCount() + batch.quality.Total(), 0u);  // state only, no rows
}

TEST(CuptiConvert, OverheadIsSummedByKind) {
  ActivityConverter c = MakeConverter();
  Trace batch;
  auto overhead = [&](CUpti_ActivityOverheadKind kind, uint64_t start, uint64_t end) {
    auto r = Zeroed<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
    r.overheadKind = kind;
    r.start = start;
    r.end = end;
    Feed(c, r, batch);
  };
  overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, 100, 250);    // 150
  overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, 1000, 1100);  // +100 = 250
  overhead(CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER, 0, 0);           // untimed: nothing
  overhead(CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING, 10, 17);   // 7
  std::map<std::string, int64_t> expected{{"cupti_buffer_flush", 250}, {"lazy_function_loading", 7}};
  EXPECT_EQ(c.overhead_ns(), expected);
  EXPECT_EQ(batch.quality.Total(), 0u);
}

TEST(CuptiConvert, UnmodelledKindIsSkippedAndCounted) {
  ActivityConverter c = MakeConverter();
  auto r = Zeroed<CUpti_ActivityName>(CUPTI_ACTIVITY_KIND_NAME);
  Trace batch;
  Feed(c, r, batch);
  EXPECT_EQ(c.skipped_records(), 1u);
  EXPECT_EQ(batch.quality.Get(Quality::kUnknownCategorySkipped), 1u);
}

TEST(CuptiConvert, RecordedKindsTableMapsToOurVocabulary) {
  EXPECT_EQ(FindRecordedKind(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)->event, EventKind::kKernel);
  EXPECT_EQ(FindRecordedKind(CUPTI_ACTIVITY_KIND_MEMCPY2)->event, EventKind::kMemcpy);
  EXPECT_EQ(FindRecordedKind(CUPTI_ACTIVITY_KIND_MEMSET)->event, EventKind::kMemset);
  EXPECT_EQ(FindRecordedKind(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)->event, EventKind::kSync);
  EXPECT_EQ(FindRecordedKind(CUPTI_ACTIVITY_KIND_RUNTIME)->event, EventKind::kRuntime);
  EXPECT_EQ(FindRecordedKind(CUPTI_ACTIVITY_KIND_DRIVER)->event, EventKind::kDriver);
  EXPECT_EQ(FindRecordedKind(CUPTI_ACTIVITY_KIND_MARKER)->event, EventKind::kRange);
  EXPECT_FALSE(FindRecordedKind(CUPTI_ACTIVITY_KIND_MEMORY2)->event.has_value());
  EXPECT_FALSE(FindRecordedKind(CUPTI_ACTIVITY_KIND_CUDA_EVENT)->event.has_value());
  EXPECT_EQ(FindRecordedKind(CUPTI_ACTIVITY_KIND_PC_SAMPLING), nullptr);
  // Every kind once.
  for (size_t i = 0; i < std::size(kRecordedKinds); ++i)
    for (size_t j = i + 1; j < std::size(kRecordedKinds); ++j) EXPECT_NE(kRecordedKinds[i].kind, kRecordedKinds[j].kind);
}

// CUPTI delivers buffers per thread and per context in no set order: a record may come before
// the one it refers to. Neither is lost: the sync waits for its context, the end for its start.
TEST(CuptiConvert, SyncBeforeItsContextGetsTheDeviceWhenTheContextComes) {
  ActivityConverter c = MakeConverter();
  Trace first, second;
  Feed(c, MakeSync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, 5), first);
  EXPECT_EQ(first.syncs.size(), 0u);
  auto ctx = Zeroed<CUpti_ActivityContext3>(CUPTI_ACTIVITY_KIND_CONTEXT);
  ctx.contextId = 5;
  ctx.deviceId = 2;
  Feed(c, ctx, second);
  ASSERT_EQ(second.syncs.size(), 1u);
  EXPECT_EQ(second.syncs.device[0], 2);
  EXPECT_EQ(second.syncs.kind[0], SyncKind::kContextSync);
  Trace last;
  c.Close(last);
  EXPECT_EQ(last.syncs.size(), 0u);
}

TEST(CuptiConvert, RangeEndBeforeItsStartStillMakesTheRange) {
  ActivityConverter c = MakeConverter();
  Trace first, second;
  Feed(c, MakeMarker(CUPTI_ACTIVITY_FLAG_MARKER_END, 7, 30'000, nullptr, nullptr), first);
  EXPECT_EQ(first.ranges.size(), 0u);
  Feed(c, MakeMarker(CUPTI_ACTIVITY_FLAG_MARKER_START, 7, 12'000, "late start", "d"), second);
  ASSERT_EQ(second.ranges.size(), 1u);
  EXPECT_EQ(second.ranges.start[0], 12'000);
  EXPECT_EQ(second.ranges.end[0], 30'000);
  EXPECT_EQ(second.Name(second.ranges.name[0]), "late start");
  Trace last;
  c.Close(last);
  EXPECT_EQ(last.quality.Get(Quality::kUnmatchedRangeEnd), 0u);
}

// CUDA event records (cudaEventRecord) and the event syncs that name them by cudaEventSyncId.
CUpti_ActivityCudaEvent2 MakeEventRecord(uint32_t event, uint32_t stream, uint32_t correlation, uint64_t sync_id,
                                         uint32_t context = 1) {
  auto r = Zeroed<CUpti_ActivityCudaEvent2>(CUPTI_ACTIVITY_KIND_CUDA_EVENT);
  r.contextId = context;
  r.eventId = event;
  r.streamId = stream;
  r.correlationId = correlation;
  r.deviceId = 0;
  r.cudaEventSyncId = sync_id;
  return r;
}

CUpti_ActivitySynchronization2 MakeEventWait(CUpti_ActivitySynchronizationType type, uint32_t event, uint64_t sync_id,
                                             uint32_t correlation, uint32_t context = 1) {
  CUpti_ActivitySynchronization2 r = MakeSync(type, context);
  r.cudaEventId = event;
  r.cudaEventSyncId = sync_id;
  r.correlationId = correlation;
  if (type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT) r.streamId = 14;  // the waiting stream
  return r;
}

void FeedContext(ActivityConverter& c, uint32_t context, uint32_t device, Trace& batch) {
  auto ctx = Zeroed<CUpti_ActivityContext3>(CUPTI_ACTIVITY_KIND_CONTEXT);
  ctx.contextId = context;
  ctx.deviceId = device;
  Feed(c, ctx, batch);
}

constexpr auto kWaitEvent = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
constexpr auto kEventSync = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;

TEST(CuptiConvert, EventSyncsTakeTheStreamAndCorrelationOfTheirEventRecord) {
  ActivityConverter c = MakeConverter();
  Trace batch;
  FeedContext(c, 1, 0, batch);
  Feed(c, MakeEventRecord(5, 13, 40, 100), batch);
  Feed(c, MakeEventWait(kWaitEvent, 5, 100, 41), batch);
  Feed(c, MakeEventWait(kEventSync, 5, 100, 42), batch);
  CUpti_ActivitySynchronization2 stream_sync = MakeSync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 1);
  stream_sync.streamId = 13;
  stream_sync.cudaEventSyncId = 100;  // not an event sync: no record is looked for
  Feed(c, stream_sync, batch);

  EXPECT_EQ(c.skipped_records(), 0u);  // the event record makes no row and is no unknown kind
  EXPECT_EQ(batch.quality.Get(Quality::kUnknownCategorySkipped), 0u);
  ASSERT_EQ(batch.syncs.size(), 3u);
  Sync waited = batch.syncs.Row(0);
  EXPECT_EQ(waited.kind, SyncKind::kStreamWaitEvent);
  EXPECT_EQ(waited.stream, 14);
  EXPECT_EQ(waited.event_id, 5);
  EXPECT_EQ(waited.correlation, 41);
  EXPECT_EQ(waited.device, 0);
  EXPECT_EQ(waited.wait_stream, 13);
  EXPECT_EQ(waited.record_correlation, 40);
  Sync synced = batch.syncs.Row(1);
  EXPECT_EQ(synced.kind, SyncKind::kEventSync);
  EXPECT_EQ(synced.stream, kUnknownId);
  EXPECT_EQ(synced.correlation, 42);
  EXPECT_EQ(synced.wait_stream, 13);
  EXPECT_EQ(synced.record_correlation, 40);
  Sync other = batch.syncs.Row(2);
  EXPECT_EQ(other.kind, SyncKind::kStreamSync);
  EXPECT_EQ(other.wait_stream, kUnknownId);
  EXPECT_EQ(other.record_correlation, kUnknownId);
  Trace last;
  c.Close(last);
  EXPECT_EQ(last.syncs.size(), 0u);
}

// One event recorded twice: each sync gets the record it waited on (CUPTI's cudaEventSyncId: the
// event's latest record before the call), even a sync of the first recording that comes late.
TEST(CuptiConvert, ReusedEventSyncTakesTheRecordItWaitedOn) {
  ActivityConverter c = MakeConverter();
  Trace batch;
  FeedContext(c, 1, 0, batch);
  Feed(c, MakeEventRecord(5, 13, 40, 100), batch);
  Feed(c, MakeEventWait(kWaitEvent, 5, 100, 41), batch);
  Feed(c, MakeEventRecord(5, 15, 50, 101), batch);
  Feed(c, MakeEventWait(kEventSync, 5, 101, 51), batch);
  Trace later;  // another thread's buffer: a wait on the first recording
  Feed(c, MakeEventWait(kWaitEvent, 5, 100, 45), later);

  ASSERT_EQ(batch.syncs.size(), 2u);
  EXPECT_EQ(batch.syncs.wait_stream[0], 13);
  EXPECT_EQ(batch.syncs.record_correlation[0], 40);
  EXPECT_EQ(batch.syncs.wait_stream[1], 15);
  EXPECT_EQ(batch.syncs.record_correlation[1], 50);
  ASSERT_EQ(later.syncs.size(), 1u);
  EXPECT_EQ(later.syncs.correlation[0], 45);
  EXPECT_EQ(later.syncs.wait_stream[0], 13);
  EXPECT_EQ(later.syncs.record_correlation[0], 40);
}

// Buffers come in no set order: a sync whose record is in a later buffer waits for it, and one
// whose context is later still waits for that too.
TEST(CuptiConvert, EventSyncBeforeItsRecordIsMatchedWhenTheRecordComes) {
  ActivityConverter c = MakeConverter();
  Trace first, second, third;
  FeedContext(c, 1, 2, first);
  Feed(c, MakeEventWait(kWaitEvent, 5, 100, 41), first);
  Feed(c, MakeEventWait(kEventSync, 6, 200, 61, /*context=*/7), first);  // context 7 not known yet
  EXPECT_EQ(first.syncs.size(), 0u);
  Feed(c, MakeEventRecord(5, 13, 40, 100), second);
  Feed(c, MakeEventRecord(6, 16, 60, 200, /*context=*/7), second);
  ASSERT_EQ(second.syncs.size(), 1u);
  EXPECT_EQ(second.syncs.correlation[0], 41);
  EXPECT_EQ(second.syncs.device[0], 2);
  EXPECT_EQ(second.syncs.wait_stream[0], 13);
  EXPECT_EQ(second.syncs.record_correlation[0], 40);
  FeedContext(c, 7, 3, third);
  ASSERT_EQ(third.syncs.size(), 1u);
  EXPECT_EQ(third.syncs.correlation[0], 61);
  EXPECT_EQ(third.syncs.device[0], 3);
  EXPECT_EQ(third.syncs.wait_stream[0], 16);
  EXPECT_EQ(third.syncs.record_correlation[0], 60);
  Trace last;
  c.Close(last);
  EXPECT_EQ(last.syncs.size(), 0u);
}

TEST(CuptiConvert, EventSyncWithoutItsRecordKeepsUnknownColumns) {
  ActivityConverter c = MakeConverter();
  Trace batch;
  FeedContext(c, 1, 0, batch);
  Feed(c, MakeEventRecord(5, 13, 40, 100), batch);
  // No sync id (CUPTI's invalid value, or 0: not filled): out at once, unmatched.
  Feed(c, MakeEventWait(kWaitEvent, 5, CUPTI_SYNCHRONIZATION_INVALID_VALUE, 41), batch);
  Feed(c, MakeEventWait(kEventSync, 5, 0, 42), batch);
  ASSERT_EQ(batch.syncs.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(batch.syncs.wait_stream[i], kUnknownId);
    EXPECT_EQ(batch.syncs.record_correlation[i], kUnknownId);
  }
  // A sync id whose record never comes (recorded before the recording began): held, then out at Close.
  Feed(c, MakeEventWait(kWaitEvent, 8, 99, 43), batch);
  EXPECT_EQ(batch.syncs.size(), 2u);
  Trace last;
  c.Close(last);
  ASSERT_EQ(last.syncs.size(), 1u);
  EXPECT_EQ(last.syncs.correlation[0], 43);
  EXPECT_EQ(last.syncs.device[0], 0);
  EXPECT_EQ(last.syncs.event_id[0], 8);
  EXPECT_EQ(last.syncs.wait_stream[0], kUnknownId);
  EXPECT_EQ(last.syncs.record_correlation[0], kUnknownId);
}

TEST(CuptiConvert, EventSyncIsNotHeldWhenCuptiRefusedEventRecords) {
  ActivityConverter c = MakeConverter();
  c.ExpectEventRecords(false);
  Trace batch;
  FeedContext(c, 1, 0, batch);
  Feed(c, MakeEventWait(kWaitEvent, 5, 100, 41), batch);
  ASSERT_EQ(batch.syncs.size(), 1u);
  EXPECT_EQ(batch.syncs.wait_stream[0], kUnknownId);
  EXPECT_EQ(batch.syncs.record_correlation[0], kUnknownId);
}

// Memory stays bounded: an event keeps its latest kRecordsPerEvent records, the converter its
// kMaxEvents most recently recorded events and at most kMaxHeldSyncs syncs waiting for a record.
TEST(CuptiConvert, EventRecordsAndHeldSyncsAreBounded) {
  ActivityConverter c = MakeConverter();
  Trace batch;
  FeedContext(c, 1, 0, batch);
  const uint64_t n = ActivityConverter::kRecordsPerEvent + 1;
  for (uint64_t i = 1; i <= n; ++i) Feed(c, MakeEventRecord(5, static_cast<uint32_t>(i), 0, i), batch);
  Feed(c, MakeEventWait(kEventSync, 5, 2, 41), batch);  // the oldest record kept
  ASSERT_EQ(batch.syncs.size(), 1u);
  EXPECT_EQ(batch.syncs.wait_stream[0], 2);
  Feed(c, MakeEventWait(kEventSync, 5, 1, 42), batch);  // forgotten: held like one not come yet
  EXPECT_EQ(batch.syncs.size(), 1u);

  // Many events: the least recently recorded are forgotten, the latest kept.
  for (uint32_t e = 0; e <= ActivityConverter::kMaxEvents; ++e)
    Feed(c, MakeEventRecord(1000 + e, 7, e, 1000 + e), batch);
  Feed(c, MakeEventRecord(5, 3, 0, 50), batch);  // event 5 recorded again: kept
  Feed(c, MakeEventWait(kEventSync, 5, 50, 43), batch);
  Feed(c, MakeEventWait(kEventSync, 1000 + ActivityConverter::kMaxEvents, 1000 + ActivityConverter::kMaxEvents, 44),
       batch);
  ASSERT_EQ(batch.syncs.size(), 3u);
  EXPECT_EQ(batch.syncs.wait_stream[1], 3);
  EXPECT_EQ(batch.syncs.record_correlation[2], static_cast<int64_t>(ActivityConverter::kMaxEvents));
  Feed(c, MakeEventWait(kEventSync, 1000, 1000, 45), batch);  // the first of them: forgotten, held
  EXPECT_EQ(batch.syncs.size(), 3u);

  // Syncs held for records that do not come: beyond the bound, the lowest sync ids go out unmatched.
  const uint64_t base = 1'000'000;
  for (uint64_t i = 0; i < ActivityConverter::kMaxHeldSyncs; ++i)
    Feed(c, MakeEventWait(kEventSync, 9, base + i, static_cast<uint32_t>(i)), batch);
  // Held now: sync ids 1 and 1000 and the loop's; over the bound by 2, the two lowest went out.
  ASSERT_EQ(batch.syncs.size(), 5u);
  EXPECT_EQ(batch.syncs.correlation[3], 42);
  EXPECT_EQ(batch.syncs.correlation[4], 45);
  EXPECT_EQ(batch.syncs.wait_stream[3], kUnknownId);
  Feed(c, MakeEventRecord(9, 21, 70, base + 5), batch);  // a late record still finds its held sync
  ASSERT_EQ(batch.syncs.size(), 6u);
  EXPECT_EQ(batch.syncs.correlation[5], 5);
  EXPECT_EQ(batch.syncs.wait_stream[5], 21);
  Trace last;
  c.Close(last);
  EXPECT_EQ(last.syncs.size(), ActivityConverter::kMaxHeldSyncs - 1);
}

// What the converter fills reaches the store (tgWaitStream, tgRecordCorrelation) and comes back.
TEST(CuptiConvert, MatchedEventSyncSurvivesTheStore) {
  ActivityConverter c = MakeConverter();
  Trace batch;
  FeedContext(c, 1, 0, batch);
  Feed(c, MakeEventRecord(5, 13, 40, 100), batch);
  Feed(c, MakeEventWait(kWaitEvent, 5, 100, 41), batch);
  Feed(c, MakeEventWait(kEventSync, 5, 7, 42), batch);  // its record never comes
  c.Close(batch);
  ASSERT_EQ(batch.syncs.size(), 2u);
  const std::string path =
      (std::filesystem::temp_directory_path() / ("tg_cupti_event_" + std::to_string(::getpid()) + ".tgdb")).string();
  Status w = WriteStore(batch, path);
  ASSERT_TRUE(w.ok()) << w.message();
  Trace back;
  Status r = ImportSqlite(path, &back);
  std::filesystem::remove(path);
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(back.syncs.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const size_t j = back.syncs.correlation[i] == 41 ? 0 : 1;
    EXPECT_EQ(back.syncs.correlation[i], batch.syncs.correlation[j]);
    EXPECT_EQ(back.syncs.wait_stream[i], batch.syncs.wait_stream[j]);
    EXPECT_EQ(back.syncs.record_correlation[i], batch.syncs.record_correlation[j]);
  }
  EXPECT_EQ(back.syncs.wait_stream[back.syncs.correlation[0] == 41 ? 0 : 1], 13);
  EXPECT_EQ(back.syncs.record_correlation[back.syncs.correlation[0] == 41 ? 0 : 1], 40);
}

}  // namespace
}  // namespace tg::cupti
