// WriteChromeTrace: the trace as Chrome trace-event JSON in the shape PyTorch's Kineto writes, so
// Perfetto UI, chrome://tracing and Kineto readers (ours included) open it.
//
// Tracks: GPU work on one process per device (pid = device id, as Kineto does; an unknown device
// gets pid kUnknownDevicePid) with one thread per stream (tid = stream id); API calls and host
// ranges on their own pid/tid. Flows "ac2g" (id = correlation) go from the launching API call
// ('s') to each GPU operation with that correlation ('f', "bp":"e").
// Times: "ts"/"dur" are microseconds with three decimals RELATIVE to the top-level integer
// "baseTimeNanoseconds" (the trace window start), so absolute ns = base + round(ts * 1000).
#include "tracegate/reports/chrome_export.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "reports/export/chrome_writer.h"
#include "analyzer/util/fileio.h"
#include "analyzer/import/kineto/kineto_names.h"

namespace tg {

namespace {

using internal::EscapedNames;
using internal::JsonStream;

constexpr int64_t kUnknownDevicePid = -2;  // -1 is Kineto's "overhead" pid

int64_t GpuPid(int64_t device) { return device >= 0 ? device : kUnknownDevicePid; }

// The columns the Exporter writes (and, second, those it leaves out: GPU events sit on their
// device's track, not their process's): a new model column must be added to one of them.
static_assert(ColumnCheck<Kernel>()
                  .With(&Kernel::start, &Kernel::end, &Kernel::name, &Kernel::device, &Kernel::stream,
                        &Kernel::correlation, &Kernel::grid_x, &Kernel::grid_y, &Kernel::grid_z, &Kernel::block_x,
                        &Kernel::block_y, &Kernel::block_z, &Kernel::registers, &Kernel::shared_static,
                        &Kernel::shared_dynamic, &Kernel::graph_id, &Kernel::graph_node_id, &Kernel::collective,
                        &Kernel::coll_dtype, &Kernel::coll_in_nelems, &Kernel::coll_out_nelems,
                        &Kernel::coll_group_size, &Kernel::coll_group, &Kernel::coll_group_ranks, &Kernel::coll_seq)
                  .With(&Kernel::pid)
                  .All());
static_assert(ColumnCheck<Memcpy>()
                  .With(&Memcpy::start, &Memcpy::end, &Memcpy::device, &Memcpy::stream, &Memcpy::correlation,
                        &Memcpy::bytes, &Memcpy::kind, &Memcpy::src_kind, &Memcpy::dst_kind)
                  .With(&Memcpy::pid)
                  .All());
static_assert(ColumnCheck<Memset>()
                  .With(&Memset::start, &Memset::end, &Memset::device, &Memset::stream, &Memset::correlation,
                        &Memset::bytes, &Memset::mem_kind)
                  .With(&Memset::pid, &Memset::value)  // Kineto has no memset value
                  .All());
static_assert(ColumnCheck<Sync>()
                  .With(&Sync::start, &Sync::end, &Sync::device, &Sync::stream, &Sync::correlation, &Sync::kind,
                        &Sync::event_id)
                  .With(&Sync::pid)
                  .All());
static_assert(ColumnCheck<ApiCall>()
                  .With(&ApiCall::start, &ApiCall::end, &ApiCall::name, &ApiCall::kind, &ApiCall::pid,
                        &ApiCall::tid, &ApiCall::correlation)
                  .With(&ApiCall::return_value)  // Kineto has no return value
                  .All());
static_assert(ColumnCheck<Range>()
                  .With(&Range::start, &Range::end, &Range::name, &Range::domain, &Range::pid, &Range::tid,
                        &Range::on_gpu, &Range::stream)
                  .With(&Range::depth)  // a reader recomputes it from the intervals
                  .All());
static_assert(ColumnCheck<Sample>()
                  .With(&Sample::time, &Sample::device, &Sample::temperature_c, &Sample::sm_clock_mhz,
                        &Sample::mem_clock_mhz, &Sample::memory_used_mb, &Sample::power_w)
                  .All());

class Exporter {
 public:
  Exporter(const Trace& t, JsonStream& out) : t_(t), out_(out), names_(t.strings) {
    base_ = t.Window().first;
  }

  void Write() {
    out_.Raw("{\n").Key("schemaVersion").Int(1).Raw(",\n");
    out_.Key("displayTimeUnit").Str("ns").Raw(",\n");
    out_.Key("baseTimeNanoseconds").Int(base_).Raw(",\n");
    out_.Key("tracegateVersion").Str(TRACEGATE_VERSION).Raw(",\n");
    WriteDeviceProperties();
    out_.Key("traceEvents").Raw("[\n");
    WriteMetadata();
    WriteApiCalls();
    WriteRanges();
    WriteKernels();
    WriteCopies();
    WriteMemsets();
    WriteSyncs();
    WriteFlows();
    WriteSamples();
    out_.Raw("\n]}\n");
  }

 private:
  // Starts an event object: separator, "ph", "cat", "name", "pid", "tid", "ts".
  void Begin(const char* ph, const char* cat, const std::string& escaped_name, int64_t pid, int64_t tid,
             TimeNs ts) {
    out_.Raw(first_ ? "" : ",\n");
    first_ = false;
    out_.Raw("{\"ph\":\"").Raw(ph).Raw("\",\"cat\":\"").Raw(cat).Raw("\",\"name\":").Raw(escaped_name);
    out_.Raw(",\"pid\":").Int(pid).Raw(",\"tid\":").Int(tid).Raw(",\"ts\":").Micros(ts - base_);
  }
  void Dur(TimeNs start, TimeNs end) { out_.Raw(",\"dur\":").Micros(end > start ? end - start : 0); }
  void Meta(const char* what, int64_t pid, int64_t tid, const std::string& value_escaped) {
    out_.Raw(first_ ? "" : ",\n");
    first_ = false;
    out_.Raw("{\"ph\":\"M\",\"name\":\"").Raw(what).Raw("\",\"pid\":").Int(pid).Raw(",\"tid\":").Int(tid);
    out_.Raw(",\"args\":{\"name\":").Raw(value_escaped).Raw("}}");
  }
  void Bandwidth(int64_t bytes, TimeNs start, TimeNs end) {
    if (end > start)
      out_.Raw(",\"memory bandwidth (GB/s)\":")
          .Double(static_cast<double>(bytes) / static_cast<double>(end - start));
  }

  void WriteDeviceProperties() {
    out_.Key("deviceProperties").Raw("[");
    for (size_t i = 0; i < t_.devices.size(); ++i) {
      const Device& d = t_.devices[i];
      out_.Raw(i ? ",\n" : "\n").Raw("{").Key("id").Int(d.id).Raw(",").Key("name").Str(d.name);
      if (d.memory_bytes > 0) out_.Raw(",").Key("totalGlobalMem").Int(d.memory_bytes);
      if (d.compute_major > 0)
        out_.Raw(",")
            .Key("computeMajor")
            .Int(d.compute_major)
            .Raw(",")
            .Key("computeMinor")
            .Int(d.compute_minor);
      if (d.sm_count > 0) out_.Raw(",").Key("numSms").Int(d.sm_count);
      out_.Raw("}");
    }
    out_.Raw("],\n");
  }

  // Names the tracks that have events: one process per device with GPU work, one thread per stream.
  void WriteMetadata() {
    std::set<int64_t> devices;
    std::set<std::pair<int64_t, int64_t>> streams;  // (pid, tid) of GPU tracks
    auto add = [&](const std::vector<int32_t>& dev, const std::vector<int64_t>& stream) {
      for (size_t i = 0; i < dev.size(); ++i) {
        devices.insert(dev[i]);
        streams.emplace(GpuPid(dev[i]), stream[i]);
      }
    };
    add(t_.kernels.device, t_.kernels.stream);
    add(t_.memcpys.device, t_.memcpys.stream);
    add(t_.memsets.device, t_.memsets.stream);
    add(t_.syncs.device, t_.syncs.stream);
    for (size_t i = 0; i < t_.ranges.size(); ++i)
      if (t_.ranges.on_gpu[i]) streams.emplace(GpuPid(t_.ranges.pid[i]), t_.ranges.stream[i]);
    for (int64_t dev : devices) {
      std::string label = dev >= 0 ? "GPU " + std::to_string(dev) : std::string("GPU ?");
      if (const Device* d = t_.FindDevice(static_cast<int32_t>(dev)); d && !d->name.empty())
        label += " " + d->name;
      Meta("process_name", GpuPid(dev), 0, internal::EscapeJsonString(label));
    }
    for (const auto& [pid, tid] : streams) {
      Meta("thread_name", pid, tid,
           internal::EscapeJsonString(tid >= 0 ? "stream " + std::to_string(tid) : "stream ?"));
    }
    for (const Process& p : t_.processes)
      if (!p.name.empty()) Meta("process_name", p.pid, 0, internal::EscapeJsonString(p.name));
  }

  void WriteApiCalls() {
    const ApiTable& a = t_.api_calls;
    for (size_t i = 0; i < a.size(); ++i) {
      Begin("X", a.kind[i] == ApiKind::kDriver ? "cuda_driver" : "cuda_runtime", names_.Get(a.name[i]),
            a.pid[i], a.tid[i], a.start[i]);
      Dur(a.start[i], a.end[i]);
      out_.Raw(",\"args\":{\"correlation\":").Int(a.correlation[i]).Raw("}}");
    }
  }

  // Kineto's own host categories come back as ranges with that domain; keep their category so a
  // re-import sees the same thing. Other domains (NVTX) go into args.
  const char* RangeCategory(size_t i) const {
    const RangeTable& r = t_.ranges;
    if (r.on_gpu[i]) return "gpu_user_annotation";
    std::string_view domain = t_.Name(r.domain[i]);
    if (domain == "cpu_op") return "cpu_op";
    if (domain == "python_function") return "python_function";
    return "user_annotation";
  }

  void WriteRanges() {
    const RangeTable& r = t_.ranges;
    for (size_t i = 0; i < r.size(); ++i) {
      // A GPU-projected annotation sits on its stream's track, as Kineto places it.
      bool gpu = r.on_gpu[i] != 0;
      const char* cat = RangeCategory(i);
      Begin("X", cat, names_.Get(r.name[i]), gpu ? GpuPid(r.pid[i]) : r.pid[i], gpu ? r.stream[i] : r.tid[i],
            r.start[i]);
      Dur(r.start[i], r.end[i]);
      out_.Raw(",\"args\":{");
      if (gpu) out_.Raw("\"stream\":").Int(r.stream[i]);
      if (r.domain[i] != StringTable::kEmpty && std::string_view(cat) == "user_annotation")
        out_.Raw("\"domain\":").Raw(names_.Get(r.domain[i]));
      out_.Raw("}}");
    }
  }

  void GpuArgs(int32_t device, int64_t stream, int64_t correlation) {
    out_.Raw(",\"args\":{\"device\":").Int(device).Raw(",\"stream\":").Int(stream);
    out_.Raw(",\"correlation\":").Int(correlation);
  }

  void WriteKernels() {
    const KernelTable& k = t_.kernels;
    for (size_t i = 0; i < k.size(); ++i) {
      Begin("X", "kernel", names_.Get(k.name[i]), GpuPid(k.device[i]), k.stream[i], k.start[i]);
      Dur(k.start[i], k.end[i]);
      GpuArgs(k.device[i], k.stream[i], k.correlation[i]);
      out_.Raw(",\"registers per thread\":").Int(k.registers[i]);
      out_.Raw(",\"shared memory\":").Int(int64_t{k.shared_static[i]} + k.shared_dynamic[i]);
      out_.Raw(",\"grid\":[").Int(k.grid_x[i]).Raw(",").Int(k.grid_y[i]).Raw(",").Int(k.grid_z[i]);
      out_.Raw("],\"block\":[")
          .Int(k.block_x[i])
          .Raw(",")
          .Int(k.block_y[i])
          .Raw(",")
          .Int(k.block_z[i])
          .Raw("]");
      if (k.graph_id[i] != kUnknownId) out_.Raw(",\"graph id\":").Int(k.graph_id[i]);
      if (k.graph_node_id[i] != kUnknownId) out_.Raw(",\"graph node id\":").Int(k.graph_node_id[i]);
      if (k.collective[i] != StringTable::kEmpty) WriteCollective(k, i);
      out_.Raw("}}");
    }
  }

  // A collective's metadata under the keys PyTorch gives it, so the export reads back the same.
  void WriteCollective(const KernelTable& k, size_t i) {
    auto name = [&](const char* key, StringId id) {
      if (id != StringTable::kEmpty) out_.Raw(key).Raw(names_.Get(id));
    };
    auto count = [&](const char* key, int64_t v) {
      if (v != kUnknownId) out_.Raw(key).Int(v);
    };
    name(",\"Collective name\":", k.collective[i]);
    name(",\"dtype\":", k.coll_dtype[i]);
    count(",\"In msg nelems\":", k.coll_in_nelems[i]);
    count(",\"Out msg nelems\":", k.coll_out_nelems[i]);
    if (k.coll_group_size[i] > 0) out_.Raw(",\"Group size\":").Int(k.coll_group_size[i]);
    name(",\"Process Group Name\":", k.coll_group[i]);
    name(",\"Process Group Ranks\":", k.coll_group_ranks[i]);
    count(",\"Seq\":", k.coll_seq[i]);
  }

  void WriteCopies() {
    const MemcpyTable& m = t_.memcpys;
    for (size_t i = 0; i < m.size(); ++i) {
      Begin("X", "gpu_memcpy", CopyName(m.kind[i], m.src_kind[i], m.dst_kind[i]), GpuPid(m.device[i]),
            m.stream[i], m.start[i]);
      Dur(m.start[i], m.end[i]);
      GpuArgs(m.device[i], m.stream[i], m.correlation[i]);
      out_.Raw(",\"bytes\":").Int(m.bytes[i]);
      Bandwidth(m.bytes[i], m.start[i], m.end[i]);
      out_.Raw("}}");
    }
  }

  void WriteMemsets() {
    const MemsetTable& m = t_.memsets;
    for (size_t i = 0; i < m.size(); ++i) {
      Begin("X", "gpu_memset", MemsetName(m.mem_kind[i]), GpuPid(m.device[i]), m.stream[i], m.start[i]);
      Dur(m.start[i], m.end[i]);
      GpuArgs(m.device[i], m.stream[i], m.correlation[i]);
      out_.Raw(",\"bytes\":").Int(m.bytes[i]);
      Bandwidth(m.bytes[i], m.start[i], m.end[i]);
      out_.Raw("}}");
    }
  }

  void WriteSyncs() {
    const SyncTable& s = t_.syncs;
    for (size_t i = 0; i < s.size(); ++i) {
      const std::string& kind = SyncName(s.kind[i]);
      Begin("X", "cuda_sync", kind, GpuPid(s.device[i]), s.stream[i], s.start[i]);
      Dur(s.start[i], s.end[i]);
      GpuArgs(s.device[i], s.stream[i], s.correlation[i]);
      out_.Raw(",\"cuda_sync_kind\":").Raw(kind);
      if (s.event_id[i] != kUnknownId) out_.Raw(",\"wait_on_cuda_event_id\":").Int(s.event_id[i]);
      out_.Raw("}}");
    }
  }

  // One 's' per launching API call that has GPU work, one 'f' per GPU operation it launched.
  void WriteFlows() {
    const ApiTable& a = t_.api_calls;
    std::vector<std::pair<int64_t, uint32_t>> by_corr;  // (correlation, api row), sorted
    by_corr.reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i)
      if (a.correlation[i] != kUnknownId) by_corr.emplace_back(a.correlation[i], static_cast<uint32_t>(i));
    std::sort(by_corr.begin(), by_corr.end());
    if (by_corr.empty()) return;
    std::vector<uint8_t> launched(a.size(), 0);
    const std::string flow_name = "\"ac2g\"";
    auto finish = [&](const std::vector<int64_t>& corr, const std::vector<int32_t>& device,
                      const std::vector<int64_t>& stream, const std::vector<TimeNs>& start) {
      for (size_t i = 0; i < corr.size(); ++i) {
        if (corr[i] == kUnknownId) continue;
        auto it = std::lower_bound(by_corr.begin(), by_corr.end(), std::make_pair(corr[i], uint32_t{0}));
        if (it == by_corr.end() || it->first != corr[i]) continue;
        launched[it->second] = 1;
        Begin("f", "ac2g", flow_name, GpuPid(device[i]), stream[i], start[i]);
        out_.Raw(",\"id\":").Int(corr[i]).Raw(",\"bp\":\"e\"}");
      }
    };
    finish(t_.kernels.correlation, t_.kernels.device, t_.kernels.stream, t_.kernels.start);
    finish(t_.memcpys.correlation, t_.memcpys.device, t_.memcpys.stream, t_.memcpys.start);
    finish(t_.memsets.correlation, t_.memsets.device, t_.memsets.stream, t_.memsets.start);
    for (size_t i = 0; i < a.size(); ++i) {
      if (!launched[i]) continue;
      Begin("s", "ac2g", flow_name, a.pid[i], a.tid[i], a.start[i]);
      out_.Raw(",\"id\":").Int(a.correlation[i]).Raw("}");
    }
  }

  // NVML telemetry as counter tracks on the device's process; unsampled values (< 0) are left out.
  void WriteSamples() {
    const SampleTable& s = t_.samples;
    const std::string name = "\"telemetry\"";
    for (size_t i = 0; i < s.size(); ++i) {
      Begin("C", "gpu_telemetry", name, GpuPid(s.device[i]), 0, s.time[i]);
      out_.Raw(",\"args\":{");
      bool any = false;
      auto field = [&](const char* key, double v) {
        if (!(v >= 0)) return;  // also skips NaN
        out_.Raw(any ? ",\"" : "\"").Raw(key).Raw("\":").Double(v);
        any = true;
      };
      field("temperature_c", s.temperature_c[i]);
      field("sm_clock_mhz", s.sm_clock_mhz[i]);
      field("mem_clock_mhz", s.mem_clock_mhz[i]);
      field("memory_used_mb", s.memory_used_mb[i]);
      field("power_w", s.power_w[i]);
      out_.Raw("}}");
    }
  }

  // Escaped display names built once per distinct kind (not per event).
  const std::string& CopyName(CopyKind kind, MemKind src, MemKind dst) {
    std::string& s = copy_names_[{kind, src, dst}];
    if (s.empty())
      s = internal::EscapeJsonString(KinetoMemcpyName(kind, src, dst));
    return s;
  }
  const std::string& MemsetName(MemKind kind) {
    std::string& s = memset_names_[kind];
    if (s.empty()) s = internal::EscapeJsonString(KinetoMemsetName(kind));
    return s;
  }
  const std::string& SyncName(SyncKind kind) {
    std::string& s = sync_names_[kind];
    if (s.empty()) s = internal::EscapeJsonString(std::string(KinetoSyncKindName(kind)));
    return s;
  }

  const Trace& t_;
  JsonStream& out_;
  std::map<std::tuple<CopyKind, MemKind, MemKind>, std::string> copy_names_;
  std::map<MemKind, std::string> memset_names_;
  std::map<SyncKind, std::string> sync_names_;
  EscapedNames names_;
  TimeNs base_ = 0;
  bool first_ = true;
};

}  // namespace

Status WriteChromeTrace(const Trace& trace, const std::string& path) {
  std::string tmp = TempPathFor(path);
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return IoError(path + ": cannot create: " + std::strerror(errno));
  JsonStream out(f);
  Exporter(trace, out).Write();
  bool ok = out.Flush() && std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  int err = errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    return IoError(path + ": write failed: " + std::strerror(err));
  }
  return CommitTempFile(tmp, path);
}

}  // namespace tg
