// The trace model: one CUDA-free, columnar representation that every importer fills and every
// analysis reads. Times are int64 nanoseconds on one clock per trace. Names are interned
// (StringTable). Each table keeps one std::vector per column; `Add(row)` appends and `Row(i)`
// reads one back. Enum values follow CUPTI / Nsight Systems numbering so the store can use the
// same integers as nsys exports.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tracegate/analyzer/quality.h"
#include "tracegate/analyzer/strings.h"

namespace tg {

using TimeNs = int64_t;

// Nanoseconds as milliseconds, for reports and messages.
constexpr double NsToMs(TimeNs ns) { return static_cast<double>(ns) / 1e6; }

// Our own vocabulary of event kinds (one name table; mapping from CUPTI lives in collector/cupti).
enum class EventKind : uint8_t { kKernel, kMemcpy, kMemset, kSync, kRuntime, kDriver, kRange, kSample };
inline constexpr std::string_view kEventKindNames[] = {"kernel", "memcpy",  "memset", "sync",
                                                       "runtime", "driver", "range",  "sample"};
constexpr std::string_view EventKindName(EventKind k) { return kEventKindNames[static_cast<int>(k)]; }

// Values as ENUM_CUDA_MEMCPY_OPER in nsys exports (= CUpti_ActivityMemcpyKind).
enum class CopyKind : uint8_t {
  kUnknown = 0, kHtoD = 1, kDtoH = 2, kHtoA = 3, kAtoH = 4, kAtoA = 5, kAtoD = 6, kDtoA = 7,
  kDtoD = 8, kHtoH = 9, kPtoP = 10,
};
std::string_view CopyKindName(CopyKind k);  // "HtoD", "DtoH", ...

// Values as ENUM_CUDA_MEM_KIND in nsys exports (= CUpti_ActivityMemoryKind minus one).
enum class MemKind : uint8_t {
  kPageable = 0, kPinned = 1, kDevice = 2, kArray = 3, kManaged = 4, kDeviceStatic = 5,
  kManagedStatic = 6, kUnknown = 7,
};
std::string_view MemKindName(MemKind k);

// Values as ENUM_CUPTI_SYNC_TYPE in nsys exports.
enum class SyncKind : uint8_t {
  kUnknown = 0, kEventSync = 1, kStreamWaitEvent = 2, kStreamSync = 3, kContextSync = 4,
};
std::string_view SyncKindName(SyncKind k);

enum class ApiKind : uint8_t { kRuntime = 0, kDriver = 1 };

// Id meaning "not known" for correlation ids, streams, devices, pids and tids.
inline constexpr int64_t kUnknownId = -1;

struct Kernel {
  TimeNs start = 0, end = 0;
  StringId name = 0;  // as the source gives it (demangled when the source demangles)
  int32_t device = -1;
  int64_t stream = kUnknownId;
  int64_t correlation = kUnknownId;
  int32_t grid_x = 0, grid_y = 0, grid_z = 0;
  int32_t block_x = 0, block_y = 0, block_z = 0;
  int32_t registers = 0;           // per thread
  int32_t shared_static = 0;       // bytes
  int32_t shared_dynamic = 0;      // bytes
  int64_t pid = kUnknownId;
  int64_t graph_id = kUnknownId;   // CUDA graph launches keep their graph and node ids
  int64_t graph_node_id = kUnknownId;
};

struct Memcpy {
  TimeNs start = 0, end = 0;
  int32_t device = -1;
  int64_t stream = kUnknownId;
  int64_t correlation = kUnknownId;
  int64_t bytes = 0;
  CopyKind kind = CopyKind::kUnknown;
  MemKind src_kind = MemKind::kUnknown;
  MemKind dst_kind = MemKind::kUnknown;
  int64_t pid = kUnknownId;
};

struct Memset {
  TimeNs start = 0, end = 0;
  int32_t device = -1;
  int64_t stream = kUnknownId;
  int64_t correlation = kUnknownId;
  int64_t bytes = 0;
  int32_t value = 0;
  MemKind mem_kind = MemKind::kUnknown;
  int64_t pid = kUnknownId;
};

struct Sync {
  TimeNs start = 0, end = 0;
  int32_t device = -1;
  int64_t stream = kUnknownId;  // -1 for context / event syncs without a stream
  int64_t correlation = kUnknownId;
  SyncKind kind = SyncKind::kUnknown;
  int64_t event_id = kUnknownId;
  int64_t pid = kUnknownId;
};

struct ApiCall {
  TimeNs start = 0, end = 0;
  StringId name = 0;
  ApiKind kind = ApiKind::kRuntime;
  int64_t pid = kUnknownId;
  int64_t tid = kUnknownId;
  int64_t correlation = kUnknownId;
  int32_t return_value = 0;
};

// NVTX ranges (push/pop and start/end), NVTX marks (start == end) and profiler user annotations.
struct Range {
  TimeNs start = 0, end = 0;
  StringId name = 0;
  StringId domain = 0;  // empty for the default domain
  int64_t pid = kUnknownId;
  int64_t tid = kUnknownId;
  int32_t depth = 0;     // nesting level on its thread, 0 = outermost
  bool on_gpu = false;   // Kineto gpu_user_annotation: a range projected onto a stream
  int64_t stream = kUnknownId;
};

// Telemetry (NVML): one row per device per sampling tick. NaN / -1 where not sampled.
struct Sample {
  TimeNs time = 0;
  int32_t device = -1;
  double temperature_c = -1;
  double sm_clock_mhz = -1;
  double mem_clock_mhz = -1;
  double memory_used_mb = -1;
  double power_w = -1;
};

struct Device {
  int32_t id = -1;
  std::string name;
  int32_t sm_count = 0;
  int64_t memory_bytes = 0;
  double peak_bandwidth_gbs = 0;  // 0 = unknown
  int32_t compute_major = 0, compute_minor = 0;
};

struct Process {
  int64_t pid = kUnknownId;
  std::string name;
};

// A column that nearly always holds one value (`fill`): the CUDA graph ids, kUnknownId outside
// graph launches. Only the rows that differ are stored, as (row, value) pairs in row order, until
// they would take more memory than a plain vector (half the rows for 8-byte values, a third for
// 4-byte ones); then the column turns into one. Reads are O(1) without exceptions or once dense,
// O(log exceptions) in between.
template <class T>
class SparseColumn {
 public:
  explicit SparseColumn(T fill = T{}) : fill_(fill) {}
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void reserve(size_t n) {
    if (dense_) values_.reserve(n);
  }
  void push_back(T v) {
    const size_t row = size_++;
    if (dense_) {
      values_.push_back(v);
    } else if (v != fill_) {
      rows_.push_back(row);
      values_.push_back(v);
      DensifyIfLarger();
    }
  }
  T operator[](size_t i) const {
    if (dense_) return values_[i];
    if (rows_.empty()) return fill_;
    auto it = std::lower_bound(rows_.begin(), rows_.end(), i);
    return it != rows_.end() && *it == i ? values_[static_cast<size_t>(it - rows_.begin())] : fill_;
  }
  // Appends every row of `from` (same fill), then empties it and frees its memory.
  void Append(SparseColumn& from) {
    const size_t base = size_;
    if (from.dense_) {
      for (const T& v : from.values_) push_back(v);
    } else if (dense_) {
      values_.resize(base + from.size_, fill_);
      for (size_t k = 0; k < from.rows_.size(); ++k) values_[base + from.rows_[k]] = from.values_[k];
      size_ = base + from.size_;
    } else {
      for (size_t k = 0; k < from.rows_.size(); ++k) {
        rows_.push_back(base + from.rows_[k]);
        values_.push_back(from.values_[k]);
      }
      size_ = base + from.size_;
      DensifyIfLarger();
    }
    from = SparseColumn(from.fill_);
  }
  // Replaces each value v of rows >= `first` by f(v); f must map `fill` to itself (rows holding
  // `fill` are not visited while sparse). Used to re-map string ids after a merge.
  template <class F>
  void MapFrom(size_t first, F f) {
    if (dense_) {
      for (size_t i = first; i < values_.size(); ++i) values_[i] = f(values_[i]);
      return;
    }
    auto it = std::lower_bound(rows_.begin(), rows_.end(), first);
    for (size_t k = static_cast<size_t>(it - rows_.begin()); k < values_.size(); ++k) values_[k] = f(values_[k]);
  }
  // Rows that are not `fill` (all rows once dense): what the column costs.
  size_t stored() const { return values_.size(); }
  friend bool operator==(const SparseColumn& a, const SparseColumn& b) {
    if (a.size_ != b.size_) return false;
    for (size_t i = 0; i < a.size_; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }

 private:
  void DensifyIfLarger() {
    if (values_.size() > 64 && values_.size() * (sizeof(size_t) + sizeof(T)) > size_ * sizeof(T)) Densify();
  }
  void Densify() {
    std::vector<T> dense(size_, fill_);
    for (size_t k = 0; k < rows_.size(); ++k) dense[rows_[k]] = values_[k];
    values_ = std::move(dense);
    std::vector<size_t>().swap(rows_);
    dense_ = true;
  }
  T fill_;
  size_t size_ = 0;
  bool dense_ = false;
  std::vector<size_t> rows_;  // sparse: the rows that differ from fill_, ascending
  std::vector<T> values_;     // sparse: their values; dense: every row
};

// Columnar tables. Each column is a vector; all columns of a table have the same length.
struct KernelTable {
  std::vector<TimeNs> start, end;
  std::vector<StringId> name;
  std::vector<int32_t> device;
  std::vector<int64_t> stream, correlation;
  // 1-D launches (most of them) have y = z = 1; dynamic shared memory is mostly 0.
  std::vector<int32_t> grid_x, block_x;
  SparseColumn<int32_t> grid_y{1}, grid_z{1}, block_y{1}, block_z{1};
  std::vector<int32_t> registers, shared_static;
  SparseColumn<int32_t> shared_dynamic{0};
  std::vector<int64_t> pid;
  SparseColumn<int64_t> graph_id{kUnknownId}, graph_node_id{kUnknownId};
  size_t size() const { return start.size(); }
  void Add(const Kernel& k);
  Kernel Row(size_t i) const;
  void Reserve(size_t n);
};

struct MemcpyTable {
  std::vector<TimeNs> start, end;
  std::vector<int32_t> device;
  std::vector<int64_t> stream, correlation, bytes;
  std::vector<CopyKind> kind;
  std::vector<MemKind> src_kind, dst_kind;
  std::vector<int64_t> pid;
  size_t size() const { return start.size(); }
  void Add(const Memcpy& m);
  Memcpy Row(size_t i) const;
};

struct MemsetTable {
  std::vector<TimeNs> start, end;
  std::vector<int32_t> device;
  std::vector<int64_t> stream, correlation, bytes;
  std::vector<int32_t> value;
  std::vector<MemKind> mem_kind;
  std::vector<int64_t> pid;
  size_t size() const { return start.size(); }
  void Add(const Memset& m);
  Memset Row(size_t i) const;
};

struct SyncTable {
  std::vector<TimeNs> start, end;
  std::vector<int32_t> device;
  std::vector<int64_t> stream, correlation;
  std::vector<SyncKind> kind;
  std::vector<int64_t> event_id, pid;
  size_t size() const { return start.size(); }
  void Add(const Sync& s);
  Sync Row(size_t i) const;
};

struct ApiTable {
  std::vector<TimeNs> start, end;
  std::vector<StringId> name;
  std::vector<ApiKind> kind;
  std::vector<int64_t> pid, tid, correlation;
  SparseColumn<int32_t> return_value{0};  // cudaSuccess nearly always
  size_t size() const { return start.size(); }
  void Add(const ApiCall& a);
  ApiCall Row(size_t i) const;
  void Reserve(size_t n);
};

struct RangeTable {
  std::vector<TimeNs> start, end;
  std::vector<StringId> name;
  SparseColumn<StringId> domain{0};  // empty (the default domain) for most NVTX ranges
  std::vector<int64_t> pid, tid;
  std::vector<int32_t> depth;
  std::vector<uint8_t> on_gpu;
  SparseColumn<int64_t> stream{kUnknownId};  // set for GPU-projected ranges only
  size_t size() const { return start.size(); }
  void Add(const Range& r);
  Range Row(size_t i) const;
};

struct SampleTable {
  std::vector<TimeNs> time;
  std::vector<int32_t> device;
  std::vector<double> temperature_c, sm_clock_mhz, mem_clock_mhz, memory_used_mb, power_w;
  size_t size() const { return time.size(); }
  void Add(const Sample& s);
  Sample Row(size_t i) const;
};

// Well-known metadata keys (free-form keys are allowed too).
namespace meta {
inline constexpr std::string_view kSourceFormat = "source_format";    // kineto_json, nsys_sqlite, tracegate
inline constexpr std::string_view kSourceVersion = "source_version";  // format/schema version
inline constexpr std::string_view kSourcePath = "source_path";
inline constexpr std::string_view kProducer = "producer";             // tool + version that wrote it
inline constexpr std::string_view kCudaVersion = "cuda_version";
inline constexpr std::string_view kDriverVersion = "driver_version";
inline constexpr std::string_view kCuptiVersion = "cupti_version";
inline constexpr std::string_view kHost = "host";
}  // namespace meta

struct Trace {
  StringTable strings;
  KernelTable kernels;
  MemcpyTable memcpys;
  MemsetTable memsets;
  SyncTable syncs;
  ApiTable api_calls;
  RangeTable ranges;
  SampleTable samples;
  std::vector<Device> devices;
  std::vector<Process> processes;
  std::map<std::string, std::string, std::less<>> metadata;
  QualityCounters quality;

  std::string_view Name(StringId id) const { return strings.View(id); }
  // Earliest start / latest end over every event; {0, 0} for an empty trace.
  std::pair<TimeNs, TimeNs> Window() const;
  size_t GpuEventCount() const { return kernels.size() + memcpys.size() + memsets.size(); }
  const Device* FindDevice(int32_t id) const;
};

// After import: counts GPU activities whose correlation id has no API call (kUnmatchedCorrelation)
// and computes range nesting depth per thread. Importers call it once at the end.
void FinalizeTrace(Trace& trace);

}  // namespace tg
