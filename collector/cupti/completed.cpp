// The buffer-completed path; see completed.h.
#include "completed.h"

#include <cupti.h>

#include <cstdlib>

#include "api_tiers.h"
#include "devices.h"

namespace tg::cupti {

void WalkBuffer(uint8_t* buffer, size_t valid_bytes, std::vector<const CUpti_Activity*>& records) {
  // One allocation for the whole buffer instead of a dozen doublings: room for as many records as
  // if all were API records, the smallest of those the collector sees in bulk (untouched room
  // costs no memory).
  records.reserve(records.size() + valid_bytes / sizeof(CUpti_ActivityAPI));
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) records.push_back(record);
}

void FreeClientOwned(const CUpti_Activity& r) {
  if (r.kind == CUPTI_ACTIVITY_KIND_DEVICE)
    std::free(const_cast<char*>(reinterpret_cast<const CUpti_ActivityDevice5&>(r).name));
  else if (r.kind == CUPTI_ACTIVITY_KIND_OVERHEAD)
    std::free(reinterpret_cast<const CUpti_ActivityOverhead3&>(r).overheadData);
}

void ConvertBuffer(ActivityConverter* converter, std::span<const CUpti_Activity* const> records, Trace& batch,
                   std::vector<DeviceUuid>& uuids, size_t* freed, int64_t pid) {
  if (converter) converter->BeginBatch(batch);
  // One pass: each record is converted, its UUID noted and its client memory freed while it is in
  // the cache.
  for (const CUpti_Activity* r : records) {
    if (converter && r->kind == CUPTI_ACTIVITY_KIND_GRAPH_TRACE) {
      AddGraphLaunch(reinterpret_cast<const CUpti_ActivityGraphTrace2&>(*r), pid, batch);
    } else if (converter) {
      converter->Convert(*r, batch);
      if (r->kind == CUPTI_ACTIVITY_KIND_DEVICE) {  // the CUDA device UUID (devices.h)
        const auto& d = reinterpret_cast<const CUpti_ActivityDevice5&>(*r);
        uuids.push_back({d.id, GpuUuidString(reinterpret_cast<const unsigned char*>(d.uuid.bytes))});
      }
    }
    FreeClientOwned(*r);
    ++*freed;
  }
}

}  // namespace tg::cupti
