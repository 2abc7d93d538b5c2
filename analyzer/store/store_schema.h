// The store's SQLite schema (version kStoreSchemaVersion) and the encodings it shares with
// Nsight Systems exports. The writer creates these tables; the reader reads them and nsys exports
// with the same code, so every convention below is nsys's unless its name starts with "tg" /
// "tracegate_".
//
// Conventions (all taken from nsys exports, export schema 3.x):
// - Names are ids into StringIds(id, value).
// - deviceId, streamId and eventId are unsigned 32-bit in nsys; "none" is 4294967295 there, and
//   the model's kUnknownId (-1) is written the same way.
// - Nullable ids (correlationId, graphId, graphNodeId, ...) are NULL where the model has -1.
// - globalPid / globalTid are serialized GlobalIds: bits 48-63 the VM/hardware id (1 << 48 for a
//   local capture), bits 24-47 the pid, bits 0-23 the tid; 0xFFFFFF in a field means unknown.
//   Ids that do not fit 24 bits go to tgPid / tgTid instead (globalPid / globalTid are NULL).
// - Driver API calls are CUPTI_ACTIVITY_KIND_RUNTIME rows with eventClass 1, as nsys exports them
//   (ENUM_NSYS_EVENT_CLASS: 0 = CUDA runtime, 1 = CUDA driver); nsys has no driver table.
// - NVTX: eventType 59 = push/pop range, 60 = start/end range, 34 = mark (end NULL), 75 = domain
//   creation (domainId, text = domain name, globalTid of a thread of the process that owns it).
//   Our domainId is the domain name's StringIds id, so it is unique in the whole file.
// - CPU ranges are NVTX_EVENTS rows; GPU-projected ranges (Kineto gpu_user_annotation) live in
//   tracegate_gpu_ranges, which has NVTX_EVENTS's columns, so nsys queries never count them twice.
#pragma once

#include <cstdint>

namespace tg::internal {

inline constexpr int64_t kGlobalIdVm = int64_t{1} << 48;
inline constexpr int64_t kIdField = 0xFFFFFF;        // 24-bit pid / tid field; all ones = unknown
inline constexpr int64_t kNoneU32 = 0xFFFFFFFFLL;    // nsys "none" for deviceId/streamId/eventId

inline constexpr int kEventClassRuntime = 0;
inline constexpr int kEventClassDriver = 1;

inline constexpr int kNvtxMark = 34;
inline constexpr int kNvtxPushPop = 59;
inline constexpr int kNvtxStartEnd = 60;
inline constexpr int kNvtxtMark = 65;
inline constexpr int kNvtxtPushPop = 70;
inline constexpr int kNvtxtStartEnd = 71;
inline constexpr int kNvtxDomainCreate = 75;

inline constexpr const char* kGpuRangeTable = "tracegate_gpu_ranges";

// Every table, created before the first row is written.
extern const char* const kCreateTables;
// Indexes the analyzer needs, created after the bulk insert (faster than maintaining them).
extern const char* const kCreateIndexes;

// -1 <-> kNoneU32 for deviceId / streamId / eventId.
constexpr int64_t U32ToDb(int64_t v) { return v == -1 ? kNoneU32 : v; }
constexpr int64_t U32FromDb(int64_t v) { return v == kNoneU32 ? -1 : v; }

struct GlobalId {
  bool fits = true;   // false: pid or tid does not fit 24 bits; use tgPid / tgTid
  bool null = false;  // both unknown: the column is NULL
  int64_t value = 0;
};

constexpr GlobalId EncodeGlobalId(int64_t pid, int64_t tid) {
  auto fits = [](int64_t v) { return v == -1 || (v >= 0 && v < kIdField); };
  if (!fits(pid) || !fits(tid)) return {false, true, 0};
  if (pid == -1 && tid == -1) return {true, true, 0};
  int64_t p = pid == -1 ? kIdField : pid;
  int64_t t = tid == -1 ? kIdField : tid;
  return {true, false, kGlobalIdVm | (p << 24) | t};
}

// globalPid columns: the tid field is 0, as nsys writes them (so they join PROCESSES.globalPid).
constexpr GlobalId EncodeGlobalPid(int64_t pid) {
  return pid == -1 ? GlobalId{true, true, 0} : EncodeGlobalId(pid, 0);
}

constexpr int64_t PidOf(int64_t global_id) {
  int64_t p = (global_id >> 24) & kIdField;
  return p == kIdField ? -1 : p;
}
constexpr int64_t TidOf(int64_t global_id) {
  int64_t t = global_id & kIdField;
  return t == kIdField ? -1 : t;
}

}  // namespace tg::internal
