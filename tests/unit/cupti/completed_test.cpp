// The buffer-completed path (completed.h) on buffers packed as CUPTI packs them: CUPTI's own walk
// (cuptiActivityGetNextRecord needs no driver), then the conversion of each buffer into its batch.
#include "completed.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace tg::cupti {
namespace {

struct Packed {
  alignas(8) uint8_t bytes[4096] = {};
  size_t used = 0;
  template <typename Record>
  Record& Add(CUpti_ActivityKind kind) {
    auto* r = reinterpret_cast<Record*>(bytes + used);
    std::memset(r, 0, sizeof *r);
    r->kind = kind;
    used += sizeof *r;
    return *r;
  }
};

ActivityConverter MakeConverter() {
  return ActivityConverter(4242, [](ApiKind, uint32_t cbid) { return cbid == 211 ? "cudaLaunchKernel_v7000" : ""; });
}

// Fills `buffer` with a DEVICE record (its name allocated as CUPTI allocates it for the client),
// an API call, a kernel and an OVERHEAD record with client-owned data.
void Fill(Packed& buffer, const char* kernel) {
  auto& d = buffer.Add<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE);
  d.id = 3;
  d.name = strdup("NVIDIA H200");
  for (int i = 0; i < 16; ++i) d.uuid.bytes[i] = static_cast<char>(i);
  auto& a = buffer.Add<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  a.cbid = 211;
  a.start = 100;
  a.end = 200;
  auto& k = buffer.Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.name = kernel;
  k.start = 150;
  k.end = 400;
  k.deviceId = 3;
  auto& o = buffer.Add<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.start = 10;
  o.end = 15;
  o.overheadData = std::malloc(64);
}

TEST(CuptiCompletedBuffer, EveryRecordConvertedAndFreedInOnePass) {
  ActivityConverter c = MakeConverter();
  const std::string kernel = "_Z3addPfS_";
  for (int round = 0; round < 2; ++round) {  // two buffers, each batch on the stack in turn
    Packed buffer;
    Fill(buffer, kernel.c_str());
    std::vector<const CUpti_Activity*> records;
    WalkBuffer(buffer.bytes, buffer.used, records);
    ASSERT_EQ(records.size(), 4u);
    Trace batch;
    std::vector<DeviceUuid> uuids;
    size_t freed = 0;
    ConvertBuffer(&c, records, batch, uuids, &freed);
    EXPECT_EQ(freed, 4u);
    ASSERT_EQ(batch.devices.size(), 1u);
    EXPECT_EQ(batch.devices[0].name, "NVIDIA H200");
    ASSERT_EQ(uuids.size(), 1u);
    EXPECT_EQ(uuids[0].device, 3u);
    EXPECT_EQ(uuids[0].uuid, "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f");
    ASSERT_EQ(batch.kernels.size(), 1u);
    EXPECT_EQ(batch.Name(batch.kernels.name[0]), "add(float*, float*)");
    ASSERT_EQ(batch.api_calls.size(), 1u);
    EXPECT_EQ(batch.Name(batch.api_calls.name[0]), "cudaLaunchKernel_v7000");
  }
  EXPECT_EQ(c.overhead_ns().at("cupti_buffer_flush"), 10);
}

TEST(CuptiCompletedBuffer, WithoutASessionOnlyFrees) {
  Packed buffer;
  Fill(buffer, "_Z3addPfS_");
  std::vector<const CUpti_Activity*> records;
  WalkBuffer(buffer.bytes, buffer.used, records);
  Trace batch;
  std::vector<DeviceUuid> uuids;
  size_t freed = 0;
  ConvertBuffer(nullptr, records, batch, uuids, &freed);
  EXPECT_EQ(freed, 4u);
  EXPECT_EQ(batch.kernels.size(), 0u);
  EXPECT_TRUE(uuids.empty());
}

}  // namespace
}  // namespace tg::cupti
