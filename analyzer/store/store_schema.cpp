#include "analyzer/store/store_schema.h"

#include <algorithm>
#include <string_view>

#include "analyzer/store/store_columns.h"

namespace tg::internal {

// Column names, order and NOT NULL follow nsys export schema 3.x; nsys columns the model has no
// data for are left out unless nsys declares them NOT NULL (those get 0). tg* columns are ours.
namespace {
constexpr std::string_view kTablesSql = R"sql(
CREATE TABLE tracegate_schema (
  version INTEGER NOT NULL,   -- store schema version (kStoreSchemaVersion)
  producer TEXT NOT NULL      -- tool and version that wrote the file
);
CREATE TABLE tracegate_metadata (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tracegate_quality (
  key TEXT NOT NULL PRIMARY KEY,  -- stable data-quality counter key (quality.h)
  count INTEGER NOT NULL
);
CREATE TABLE tracegate_samples (
  time INTEGER NOT NULL,          -- ns
  deviceId INTEGER NOT NULL,
  temperatureC REAL, smClockMHz REAL, memClockMHz REAL, memoryUsedMB REAL, powerW REAL
);
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE TARGET_INFO_GPU (
  vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT,
  totalMemory INTEGER,            -- B
  memoryBandwidth INTEGER,        -- B/s
  smCount INTEGER, computeMajor INTEGER, computeMinor INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
  start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
  staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
  graphNodeId INTEGER, graphId INTEGER,
  tgPid INTEGER,
  -- collective metadata from Kineto args (NULL on other kernels): name, dtype (StringIds ids),
  -- message elements in / out, group size, process group name and ranks (ids), sequence number
  tgCollective INTEGER, tgCollDtype INTEGER, tgCollInNelems INTEGER, tgCollOutNelems INTEGER,
  tgCollGroupSize INTEGER, tgCollGroup INTEGER, tgCollGroupRanks INTEGER, tgCollSeq INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
  start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER,
  tgPid INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
  start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  value INTEGER NOT NULL, bytes INTEGER NOT NULL, memKind INTEGER,
  tgPid INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
  start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  syncType INTEGER NOT NULL, eventId INTEGER NOT NULL,
  tgPid INTEGER, tgWaitStream INTEGER, tgRecordCorrelation INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
  start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER NOT NULL,    -- 0 CUDA runtime, 1 CUDA driver
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
  tgPid INTEGER, tgTid INTEGER
);
CREATE TABLE NVTX_EVENTS (
  start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  text TEXT, globalTid INTEGER, textId INTEGER, domainId INTEGER,
  tgPid INTEGER, tgTid INTEGER,
  tgDepth INTEGER,                -- nesting level on its thread, 0 = outermost
  tgStream INTEGER                -- stream of a GPU-projected range
);
CREATE TABLE tracegate_gpu_ranges (
  start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  text TEXT, globalTid INTEGER, textId INTEGER, domainId INTEGER,
  tgPid INTEGER, tgTid INTEGER, tgDepth INTEGER, tgStream INTEGER
);
)sql";

// The column names of `table`'s CREATE TABLE in kTablesSql, one by one: `at` walks the column
// list; -- comments are skipped (they may hold commas).
class CreateColumns {
 public:
  constexpr CreateColumns(std::string_view sql, std::string_view table) {
    const std::string_view head = "CREATE TABLE ";
    for (size_t at = sql.find(head); at != std::string_view::npos; at = sql.find(head, at + 1)) {
      std::string_view rest = sql.substr(at + head.size());
      if (rest.substr(0, table.size()) == table && rest.substr(table.size(), 2) == " (") {
        rest_ = rest.substr(table.size() + 2);
        return;
      }
    }
    done_ = true;
  }
  // The next column's name; "" after the last.
  constexpr std::string_view Next() {
    if (done_) return {};
    SkipSpace();
    size_t n = 0;
    while (n < rest_.size() && rest_[n] != ' ' && rest_[n] != ',' && rest_[n] != ')' && rest_[n] != '\n') ++n;
    std::string_view name = rest_.substr(0, n);
    // To the comma or closing parenthesis that ends this column's definition.
    for (int depth = 0; !rest_.empty(); rest_.remove_prefix(1)) {
      if (rest_.substr(0, 2) == "--") {
        SkipComment();
        if (rest_.empty()) break;
      }
      if (rest_[0] == '(') ++depth;
      if (rest_[0] == ')' && depth-- == 0) {
        done_ = true;
        break;
      }
      if (rest_[0] == ',' && depth == 0) {
        rest_.remove_prefix(1);
        break;
      }
    }
    return name;
  }

 private:
  constexpr void SkipSpace() {
    while (!rest_.empty() && (rest_[0] == ' ' || rest_[0] == '\n' || rest_.substr(0, 2) == "--"))
      rest_[0] == '-' ? SkipComment() : rest_.remove_prefix(1);
  }
  constexpr void SkipComment() { rest_.remove_prefix(std::min(rest_.find('\n'), rest_.size())); }
  std::string_view rest_;
  bool done_ = false;
};

// True when the store table list names exactly the columns of the CREATE TABLE, in order.
template <class... C>
constexpr bool MatchesCreateTable(const StoreTable<C...>& t, std::string_view table) {
  CreateColumns sql(kTablesSql, table);
  bool same = true;
  std::apply([&](const auto&... c) { ((same = same && sql.Next() == c.name), ...); }, t.columns);
  return same && sql.Next().empty();
}

static_assert(MatchesCreateTable(kKernelStore, kKernelStore.name), "kKernelStore differs from its CREATE TABLE");
static_assert(MatchesCreateTable(kMemcpyStore, kMemcpyStore.name), "kMemcpyStore differs from its CREATE TABLE");
static_assert(MatchesCreateTable(kMemsetStore, kMemsetStore.name), "kMemsetStore differs from its CREATE TABLE");
static_assert(MatchesCreateTable(kSyncStore, kSyncStore.name), "kSyncStore differs from its CREATE TABLE");
static_assert(MatchesCreateTable(kApiStore, kApiStore.name), "kApiStore differs from its CREATE TABLE");
static_assert(MatchesCreateTable(kRangeStore, kRangeStore.name), "kRangeStore differs from NVTX_EVENTS");
static_assert(MatchesCreateTable(kRangeStore, kGpuRangeTable), "kRangeStore differs from tracegate_gpu_ranges");
static_assert(MatchesCreateTable(kSampleStore, kSampleStore.name), "kSampleStore differs from its CREATE TABLE");
// The parser itself: a table that is not there has no columns.
static_assert(CreateColumns(kTablesSql, "CUPTI_ACTIVITY_KIND").Next().empty());

}  // namespace

const char* const kCreateTables = kTablesSql.data();  // a literal: NUL-terminated


// Time-window queries are indexed on every table. Correlation joins are indexed on the API side
// only: SQLite scans the GPU table and looks each row's correlationId up in tg_runtime_corr, so
// indexes on the GPU tables' correlationId would only duplicate that (the kernel one alone cost
// ~70 ms of a ~610 ms write of 10^6 events). StoreIndex.* checks the join plan.
const char* const kCreateIndexes = R"sql(
CREATE INDEX tg_kernel_start ON CUPTI_ACTIVITY_KIND_KERNEL(start);
CREATE INDEX tg_memcpy_start ON CUPTI_ACTIVITY_KIND_MEMCPY(start);
CREATE INDEX tg_memset_start ON CUPTI_ACTIVITY_KIND_MEMSET(start);
CREATE INDEX tg_sync_start ON CUPTI_ACTIVITY_KIND_SYNCHRONIZATION(start);
CREATE INDEX tg_runtime_start ON CUPTI_ACTIVITY_KIND_RUNTIME(start);
CREATE INDEX tg_runtime_corr ON CUPTI_ACTIVITY_KIND_RUNTIME(correlationId);
CREATE INDEX tg_nvtx_start ON NVTX_EVENTS(start);
CREATE INDEX tg_gpu_ranges_start ON tracegate_gpu_ranges(start);
CREATE INDEX tg_samples_time ON tracegate_samples(time);
)sql";

}  // namespace tg::internal
