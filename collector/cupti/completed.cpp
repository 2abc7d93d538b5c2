// The buffer-completed path; see completed.h.
#include "completed.h"

#include <cupti.h>

#include <cstdlib>

#include "devices.h"

namespace tg::cupti {

void WalkBuffer(uint8_t* buffer, size_t valid_bytes, std::vector<const CUpti_Activity*>& records) {
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
                   std::vector<DeviceUuid>& uuids, size_t* freed) {
  if (converter) {
    converter->BeginBatch(batch);
    for (const CUpti_Activity* r : records) converter->Convert(*r, batch);
    // The CUDA device UUIDs of DEVICE records (devices.h).
    for (const CUpti_Activity* r : records)
      if (r->kind == CUPTI_ACTIVITY_KIND_DEVICE) {
        const auto& d = reinterpret_cast<const CUpti_ActivityDevice5&>(*r);
        uuids.push_back({d.id, GpuUuidString(reinterpret_cast<const unsigned char*>(d.uuid.bytes))});
      }
  }
  for (const CUpti_Activity* r : records) {
    FreeClientOwned(*r);
    ++*freed;
  }
}

}  // namespace tg::cupti
