// The buffer-completed path, less the locks and the part writer: what the collector does with each
// activity buffer CUPTI hands back (collector.cpp's BufferCompleted calls these two in turn, and
// tests/bench/bench_convert.cpp runs the same two on synthetic buffers).
//
// WalkBuffer calls CUPTI (cuptiActivityGetNextRecord), so the collector runs it without its lock;
// ConvertBuffer (graph-trace records, `--cuda-graph-trace graph`, become one launch row of process
// `pid` each: api_tiers.h) calls no CUPTI function and runs under the lock that guards the converter.
#pragma once

#include <cupti_activity.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "convert.h"

namespace tg::cupti {

// The CUDA device UUID of a DEVICE record (GpuUuidString, devices.h).
struct DeviceUuid {
  uint32_t device;
  std::string uuid;
};

// Appends the records of buffer[0, valid_bytes) to `records`, in order.
void WalkBuffer(uint8_t* buffer, size_t valid_bytes, std::vector<const CUpti_Activity*>& records);

// In one pass over `records`: converts each with `converter` into `batch` (nullptr: the session is
// gone, nothing is converted), notes the UUID of a DEVICE record in `uuids`, and frees the memory
// CUPTI hands to the client (device names, overhead details). `*freed` counts the records freed so far, in order: if
// a conversion throws, the caller frees records[*freed, end) with FreeClientOwned.
void ConvertBuffer(ActivityConverter* converter, std::span<const CUpti_Activity* const> records, Trace& batch,
                   std::vector<DeviceUuid>& uuids, size_t* freed, int64_t pid = -1);

// Frees what cupti_activity.h makes the client responsible for: a DEVICE record's name and an
// OVERHEAD record's overheadData.
void FreeClientOwned(const CUpti_Activity& record);

}  // namespace tg::cupti
