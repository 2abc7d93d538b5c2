// WriteChromeTrace: the trace as Chrome trace-event JSON with PyTorch Kineto's categories and args,
// so Perfetto UI, chrome://tracing and Kineto readers (ours included) open it.
//
// Processes (pids: reports/export/chrome_tracks.h): "tracegate findings" first, then the host
// processes (their own pids and names), then one per device ("GPU 0 NVIDIA H200", a pid of its
// own that no host process shares). Tracks: a host process has a thread per source thread (API
// calls, CPU ops, NVTX ranges); a device a thread per stream (kernels, copies, memsets, Kineto's
// GPU-projected annotations), and after it "stream N sync: host waits": the CUDA sync records,
// which time the host blocking and so overlap the stream's kernels (device-wide syncs on "device
// sync: host waits"). A sync's device is the one its stream ran on in its process (else that of
// its process's GPU work, else the recorded one): nsys exports record every sync on device 0.
// Slices of a track nest (a partial overlap moves to an overflow lane) and those starting together
// are written longest first. Every process and track is named once, with sort indices.
// Flows "ac2g" (id = the correlation, or the call's row when ids repeat across processes) go from
// the launching API call ('s') to each GPU operation or sync it started ('f', "bp":"e").
// NVML samples are counters on their device ("power W", "temperature C", "SM clock MHz", ...).
// Times: "ts"/"dur" are microseconds with three decimals RELATIVE to "baseTimeNanoseconds" (the
// earliest time written), so absolute ns = base + round(ts * 1000) and every ts is >= 0 (Perfetto
// has no negative timestamps).
#include "tracegate/reports/chrome_export.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <tuple>
#include <utility>

#include "analyzer/analysis/correlation.h"
#include "analyzer/util/fileio.h"
#include "analyzer/vocab/kineto_names.h"
#include "reports/export/chrome_tracks.h"
#include "reports/export/chrome_writer.h"

namespace tg {

using internal::ApiIndex;
using internal::CommitTempFile;
using internal::TempPathFor;

namespace {

using internal::ChromeSlice;
using internal::ChromeTracks;
using internal::EscapedNames;
using internal::JsonStream;
using internal::KinetoMemcpyName;
using internal::KinetoMemsetName;
using internal::KinetoSyncKindName;
using internal::TrackKind;
namespace kineto_cat = internal::kineto_cat;

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
                        &Sync::event_id, &Sync::wait_stream, &Sync::record_correlation)
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

// The tables slices come from, in the order slices with the same start and end are written (the
// first one is the parent): a range encloses the API call it times, an annotation its kernels.
enum Table : uint8_t { kRangeRows, kApiRows, kSyncRows, kKernelRows, kMemcpyRows, kMemsetRows, kFindingRows };

// The device each sync row belongs to: the one its stream ran on in its process, else the one its
// process ran GPU work on, else the recorded one (nsys exports record every sync on device 0).
std::vector<int32_t> SyncDevices(const Trace& t) {
  constexpr int32_t kSeveral = -3;
  std::map<std::pair<int64_t, int64_t>, int32_t> by_stream;  // (pid, stream) -> device
  std::map<int64_t, int32_t> by_pid;
  auto note = [](auto& m, const auto& key, int32_t dev) {
    auto [it, inserted] = m.try_emplace(key, dev);
    if (!inserted && it->second != dev) it->second = kSeveral;
  };
  auto add = [&](const CodedColumn<int64_t>& pid, const CodedColumn<int64_t>& stream, const CodedColumn<int32_t>& dev) {
    for (size_t i = 0; i < dev.size(); ++i) {
      if (dev[i] < 0) continue;
      note(by_stream, std::make_pair(pid[i], stream[i]), dev[i]);
      note(by_pid, pid[i], dev[i]);
    }
  };
  add(t.kernels.pid, t.kernels.stream, t.kernels.device);
  add(t.memcpys.pid, t.memcpys.stream, t.memcpys.device);
  add(t.memsets.pid, t.memsets.stream, t.memsets.device);
  const SyncTable& s = t.syncs;
  std::vector<int32_t> out(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    out[i] = s.device[i];
    auto st = s.stream[i] == kUnknownId ? by_stream.end() : by_stream.find({s.pid[i], s.stream[i]});
    if (st != by_stream.end() && st->second != kSeveral) {
      out[i] = st->second;
    } else if (auto p = by_pid.find(s.pid[i]); p != by_pid.end() && p->second != kSeveral) {
      out[i] = p->second;
    }
  }
  return out;
}

class Exporter {
 public:
  Exporter(const Trace& t, const ChromeExportOptions& options, JsonStream& out)
      : t_(t), out_(out), names_(t.strings) {
    if (options.findings) findings_ = options.findings;
    sync_device_ = SyncDevices(t);
  }

  void Write() {
    CollectSlices();
    tracks_.NestIntoLanes(slices_);
    for (const ChromeSlice& s : slices_) track_of_[s.table][s.row] = s.track;
    // Written in time order (a track's slices that start together: longest first, as nested).
    std::sort(slices_.begin(), slices_.end(), [](const ChromeSlice& a, const ChromeSlice& b) {
      return std::tie(a.start, b.end, a.table, a.row) < std::tie(b.start, a.end, b.table, b.row);
    });
    for (size_t i = 0; i < Findings().size(); ++i)  // every finding gets its mark
      tracks_.tracks()[tracks_.Get(TrackKind::kFindings, 0, static_cast<int64_t>(i))].used = true;
    for (int32_t dev : t_.samples.device) tracks_.NoteDevice(dev);
    tracks_.Assign(t_, finding_titles_);
    base_ = t_.Window().first;
    for (TimeNs time : t_.samples.time) base_ = std::min(base_, time);

    out_.Raw("{\n").Key("schemaVersion").Int(1).Raw(",\n");
    out_.Key("displayTimeUnit").Str("ns").Raw(",\n");
    out_.Key("baseTimeNanoseconds").Int(base_).Raw(",\n");
    out_.Key("tracegateVersion").Str(TRACEGATE_VERSION).Raw(",\n");
    WriteDeviceProperties();
    out_.Key("traceEvents").Raw("[\n");
    WriteMetadata();
    for (const ChromeSlice& s : slices_) WriteSlice(s);
    WriteFlows();
    WriteSamples();
    WriteFindingMarks();
    out_.Raw("\n]}\n");
  }

 private:
  const std::vector<Finding>& Findings() const {
    static const std::vector<Finding> kNone;
    return findings_ ? *findings_ : kNone;
  }

  // Every slice, with the track it belongs on (before overlaps move some to lanes).
  void CollectSlices() {
    auto add = [&](Table table, size_t rows, auto track, const std::vector<TimeNs>& start,
                   const std::vector<TimeNs>& end) {
      track_of_[table].assign(rows, 0);
      for (size_t i = 0; i < rows; ++i)
        slices_.push_back({start[i], std::max(start[i], end[i]), track(i), static_cast<uint32_t>(i), table,
                           table == kRangeRows});
    };
    const RangeTable& r = t_.ranges;
    add(kRangeRows, r.size(), [&](size_t i) {
      // A GPU-projected annotation sits on its stream's track, as Kineto places it (its pid is the device).
      return r.on_gpu[i] ? tracks_.Get(TrackKind::kStream, r.pid[i], r.stream[i])
                         : tracks_.Get(TrackKind::kHostThread, r.pid[i], r.tid[i]);
    }, r.start, r.end);
    const ApiTable& a = t_.api_calls;
    add(kApiRows, a.size(), [&](size_t i) { return tracks_.Get(TrackKind::kHostThread, a.pid[i], a.tid[i]); },
        a.start, a.end);
    const SyncTable& s = t_.syncs;
    add(kSyncRows, s.size(), [&](size_t i) {
      // CUPTI's "not applicable" stream (0xFFFFFFFF, as Kineto passes it on): a device-wide sync.
      int64_t stream = s.stream[i] < 0 || s.stream[i] >= 0xFFFFFFFF ? kUnknownId : s.stream[i];
      return tracks_.Get(TrackKind::kSync, sync_device_[i], stream);
    }, s.start, s.end);
    auto gpu = [&](Table table, const auto& tab) {
      add(table, tab.size(), [&](size_t i) { return tracks_.Get(TrackKind::kStream, tab.device[i], tab.stream[i]); },
          tab.start, tab.end);
    };
    gpu(kKernelRows, t_.kernels);
    gpu(kMemcpyRows, t_.memcpys);
    gpu(kMemsetRows, t_.memsets);
    // Findings: a slice per interval their claims locate.
    const std::vector<Finding>& f = Findings();
    std::vector<TimeNs> starts, ends;
    for (size_t i = 0; i < f.size(); ++i) {
      finding_titles_.push_back("#" + std::to_string(i + 1) + " " + PriorityName(f[i].priority) + ": " + f[i].title);
      for (size_t p = 0; p < f[i].claim.size(); ++p)
        for (const auto& [b, e] : f[i].claim[p].intervals) {
          finding_rows_.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(p)});
          starts.push_back(b);
          ends.push_back(e);
        }
    }
    add(kFindingRows, finding_rows_.size(), [&](size_t i) {
      return tracks_.Get(TrackKind::kFindings, 0, finding_rows_[i].first);
    }, starts, ends);
  }

  const internal::ChromeTrack& Track(uint32_t index) { return tracks_.tracks()[index]; }

  // Starts an event object: separator, "ph", "cat", "name", "pid", "tid", "ts".
  void Begin(const char* ph, const char* cat, const std::string& escaped_name, uint32_t track, TimeNs ts) {
    const internal::ChromeTrack& k = Track(track);
    out_.Raw(first_ ? "" : ",\n");
    first_ = false;
    out_.Raw("{\"ph\":\"").Raw(ph).Raw("\",\"cat\":\"").Raw(cat).Raw("\",\"name\":").Raw(escaped_name);
    out_.Raw(",\"pid\":").Int(k.pid).Raw(",\"tid\":").Int(k.tid).Raw(",\"ts\":").Micros(ts - base_);
  }
  void Dur(TimeNs start, TimeNs end) { out_.Raw(",\"dur\":").Micros(end > start ? end - start : 0); }
  void Meta(const char* what, int64_t pid, int64_t tid, const char* key, const std::string& value_json) {
    out_.Raw(first_ ? "" : ",\n");
    first_ = false;
    out_.Raw("{\"ph\":\"M\",\"name\":\"").Raw(what).Raw("\",\"pid\":").Int(pid).Raw(",\"tid\":").Int(tid);
    out_.Raw(",\"args\":{\"").Raw(key).Raw("\":").Raw(value_json).Raw("}}");
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
        out_.Raw(",").Key("computeMajor").Int(d.compute_major).Raw(",").Key("computeMinor").Int(d.compute_minor);
      if (d.sm_count > 0) out_.Raw(",").Key("numSms").Int(d.sm_count);
      out_.Raw("}");
    }
    out_.Raw("],\n");
  }

  // One name and sort index per process, one name and sort index per track that holds events.
  void WriteMetadata() {
    for (const internal::ChromeProcess& p : tracks_.processes()) {
      Meta("process_name", p.pid, 0, "name", internal::EscapeJsonString(p.name));
      Meta("process_sort_index", p.pid, 0, "sort_index", std::to_string(p.sort_index));
    }
    for (const internal::ChromeTrack& k : tracks_.tracks()) {
      if (!k.used) continue;
      Meta("thread_name", k.pid, k.tid, "name", internal::EscapeJsonString(k.name));
      Meta("thread_sort_index", k.pid, k.tid, "sort_index", std::to_string(k.sort_index));
    }
  }

  void WriteSlice(const ChromeSlice& s) {
    size_t i = s.row;
    switch (s.table) {
      case kRangeRows: return WriteRange(i, s.track);
      case kApiRows: {
        const ApiTable& a = t_.api_calls;
        Begin("X", a.kind[i] == ApiKind::kDriver ? kineto_cat::kDriver : kineto_cat::kRuntime, names_.Get(a.name[i]),
              s.track, a.start[i]);
        Dur(a.start[i], a.end[i]);
        out_.Raw(",\"args\":{\"correlation\":").Int(a.correlation[i]).Raw("}}");
        return;
      }
      case kSyncRows: return WriteSync(i, s.track);
      case kKernelRows: return WriteKernel(i, s.track);
      case kMemcpyRows: {
        const MemcpyTable& m = t_.memcpys;
        return WriteTransfer(kineto_cat::kMemcpy, CopyName(m.kind[i], m.src_kind[i], m.dst_kind[i]), m, i, s.track);
      }
      case kMemsetRows:
        return WriteTransfer(kineto_cat::kMemset, MemsetName(t_.memsets.mem_kind[i]), t_.memsets, i, s.track);
      case kFindingRows: return WriteFindingSlice(s);
    }
  }

  // Kineto's own host categories come back as ranges with that domain; keep their category so a
  // re-import sees the same thing. Other domains (NVTX) go into args.
  const char* RangeCategory(size_t i) const {
    const RangeTable& r = t_.ranges;
    if (r.on_gpu[i]) return kineto_cat::kGpuUserAnnotation;
    std::string_view domain = t_.Name(r.domain[i]);
    if (domain == kineto_cat::kCpuOp) return kineto_cat::kCpuOp;
    if (domain == kineto_cat::kPythonFunction) return kineto_cat::kPythonFunction;
    return kineto_cat::kUserAnnotation;
  }

  void WriteRange(size_t i, uint32_t track) {
    const RangeTable& r = t_.ranges;
    const char* cat = RangeCategory(i);
    Begin("X", cat, names_.Get(r.name[i]), track, r.start[i]);
    Dur(r.start[i], r.end[i]);
    out_.Raw(",\"args\":{");
    if (r.on_gpu[i]) out_.Raw("\"device\":").Int(r.pid[i]).Raw(",\"stream\":").Int(r.stream[i]);
    if (r.domain[i] != StringTable::kEmpty && std::string_view(cat) == kineto_cat::kUserAnnotation)
      out_.Raw("\"domain\":").Raw(names_.Get(r.domain[i]));
    out_.Raw("}}");
  }

  // A copy or a memset: both carry their bytes and the bandwidth they reached.
  template <class Table, class Name>
  void WriteTransfer(const char* category, const Name& name, const Table& m, size_t i, uint32_t track) {
    Begin("X", category, name, track, m.start[i]);
    Dur(m.start[i], m.end[i]);
    GpuArgs(m.device[i], m.stream[i], m.correlation[i]);
    out_.Raw(",\"bytes\":").Int(m.bytes[i]);
    Bandwidth(m.bytes[i], m.start[i], m.end[i]);
    out_.Raw("}}");
  }

  void GpuArgs(int32_t device, int64_t stream, int64_t correlation) {
    out_.Raw(",\"args\":{\"device\":").Int(device).Raw(",\"stream\":").Int(stream);
    out_.Raw(",\"correlation\":").Int(correlation);
  }

  void WriteKernel(size_t i, uint32_t track) {
    const KernelTable& k = t_.kernels;
    Begin("X", kineto_cat::kKernel, names_.Get(k.name[i]), track, k.start[i]);
    Dur(k.start[i], k.end[i]);
    GpuArgs(k.device[i], k.stream[i], k.correlation[i]);
    out_.Raw(",\"registers per thread\":").Int(k.registers[i]);
    out_.Raw(",\"shared memory\":").Int(int64_t{k.shared_static[i]} + k.shared_dynamic[i]);
    out_.Raw(",\"grid\":[").Int(k.grid_x[i]).Raw(",").Int(k.grid_y[i]).Raw(",").Int(k.grid_z[i]);
    out_.Raw("],\"block\":[").Int(k.block_x[i]).Raw(",").Int(k.block_y[i]).Raw(",").Int(k.block_z[i]).Raw("]");
    if (k.graph_id[i] != kUnknownId) out_.Raw(",\"graph id\":").Int(k.graph_id[i]);
    if (k.graph_node_id[i] != kUnknownId) out_.Raw(",\"graph node id\":").Int(k.graph_node_id[i]);
    if (k.collective[i] != StringTable::kEmpty) WriteCollective(k, i);
    out_.Raw("}}");
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

  void WriteSync(size_t i, uint32_t track) {
    const SyncTable& s = t_.syncs;
    const std::string& kind = SyncName(s.kind[i]);
    Begin("X", kineto_cat::kSync, kind, track, s.start[i]);
    Dur(s.start[i], s.end[i]);
    GpuArgs(sync_device_[i], s.stream[i], s.correlation[i]);
    if (sync_device_[i] != s.device[i]) out_.Raw(",\"recorded device\":").Int(s.device[i]);
    out_.Raw(",\"cuda_sync_kind\":").Raw(kind);
    if (s.event_id[i] != kUnknownId) out_.Raw(",\"wait_on_cuda_event_id\":").Int(s.event_id[i]);
    if (s.wait_stream[i] != kUnknownId) out_.Raw(",\"wait_on_stream\":").Int(s.wait_stream[i]);
    if (s.record_correlation[i] != kUnknownId)
      out_.Raw(",\"wait_on_cuda_event_record_corr_id\":").Int(s.record_correlation[i]);
    out_.Raw("}}");
  }

  // One 's' per launching API call, one 'f' per GPU operation or sync it started, each on the
  // track its slice ended up on. A flow that would go back in time is left out.
  void WriteFlows() {
    const ApiTable& a = t_.api_calls;
    if (a.size() == 0) return;
    ApiIndex index(a);
    std::vector<int64_t> ids;
    for (int64_t c : a.correlation)
      if (c != kUnknownId) ids.push_back(c);
    std::sort(ids.begin(), ids.end());
    const bool unique = std::adjacent_find(ids.begin(), ids.end()) == ids.end();
    auto flow_id = [&](size_t api) { return unique ? a.correlation[api] : static_cast<int64_t>(api) + 1; };
    std::vector<uint8_t> launched(a.size(), 0);
    const std::string flow_name = "\"ac2g\"";
    auto finish = [&](Table table, const NarrowColumn& corr, const CodedColumn<int64_t>& pid,
                      const std::vector<TimeNs>& start) {
      for (size_t i = 0; i < corr.size(); ++i) {
        int64_t api = index.Find(corr[i], pid[i]);
        if (api < 0 || start[i] < a.start[static_cast<size_t>(api)]) continue;
        launched[static_cast<size_t>(api)] = 1;
        Begin("f", kineto_cat::kLaunchFlow, flow_name, track_of_[table][i], start[i]);
        out_.Raw(",\"id\":").Int(flow_id(static_cast<size_t>(api))).Raw(",\"bp\":\"e\"}");
      }
    };
    finish(kKernelRows, t_.kernels.correlation, t_.kernels.pid, t_.kernels.start);
    finish(kMemcpyRows, t_.memcpys.correlation, t_.memcpys.pid, t_.memcpys.start);
    finish(kMemsetRows, t_.memsets.correlation, t_.memsets.pid, t_.memsets.start);
    finish(kSyncRows, t_.syncs.correlation, t_.syncs.pid, t_.syncs.start);
    for (size_t i = 0; i < a.size(); ++i) {
      if (!launched[i]) continue;
      Begin("s", kineto_cat::kLaunchFlow, flow_name, track_of_[kApiRows][i], a.start[i]);
      out_.Raw(",\"id\":").Int(flow_id(i)).Raw("}");
    }
  }

  // NVML telemetry: one counter per quantity on the device's process (Perfetto names the track
  // "<name> <key>": "power W"); unsampled values (< 0, NaN) are left out.
  void WriteSamples() {
    const SampleTable& s = t_.samples;
    struct Field {
      const std::vector<double>* values;
      const char* name;  // escaped
      const char* unit;
    };
    const Field fields[] = {{&s.power_w, "\"power\"", "W"},
                            {&s.temperature_c, "\"temperature\"", "C"},
                            {&s.sm_clock_mhz, "\"SM clock\"", "MHz"},
                            {&s.mem_clock_mhz, "\"memory clock\"", "MHz"},
                            {&s.memory_used_mb, "\"memory used\"", "MB"}};
    for (const Field& f : fields) {
      for (size_t i = 0; i < s.size(); ++i) {
        double v = (*f.values)[i];
        if (!(v >= 0)) continue;  // also skips NaN
        out_.Raw(first_ ? "" : ",\n");
        first_ = false;
        out_.Raw("{\"ph\":\"C\",\"cat\":\"gpu_telemetry\",\"name\":").Raw(f.name);
        out_.Raw(",\"pid\":").Int(tracks_.DevicePid(s.device[i])).Raw(",\"ts\":").Micros(s.time[i] - base_);
        out_.Raw(",\"args\":{\"").Raw(f.unit).Raw("\":").Double(v).Raw("}}");
      }
    }
  }

  void FindingArgs(const Finding& f, size_t index) {
    out_.Raw(",\"args\":{").Key("finding").Str("#" + std::to_string(index + 1));
    out_.Raw(",").Key("id").Str(f.id).Raw(",").Key("priority").Str(PriorityName(f.priority));
    if (f.amdahl.applicable) out_.Raw(",").Key("predicted gain (%)").Double(f.amdahl.gain_pct);
  }

  void WriteFindingSlice(const ChromeSlice& s) {
    const auto [index, part] = finding_rows_[s.row];
    const Finding& f = Findings()[index];
    const ClaimPart& p = f.claim[part];
    Begin("X", "finding", internal::EscapeJsonString(f.title), s.track, s.start);
    Dur(s.start, s.end);
    FindingArgs(f, index);
    out_.Raw(",").Key("claimed time").Str(kClaimSpaceNames[static_cast<size_t>(p.space)]);
    out_.Raw(",").Key("share of the iterations' time").Double(p.share).Raw("}}");
  }

  // An instant per finding with its summary and strategies, where its first claimed interval
  // starts (at the start of the trace for a finding about the run as a whole).
  void WriteFindingMarks() {
    const std::vector<Finding>& all = Findings();
    for (size_t i = 0; i < all.size(); ++i) {
      const Finding& f = all[i];
      TimeNs at = base_;
      bool located = false;
      for (const ClaimPart& p : f.claim)
        for (const auto& [b, e] : p.intervals)
          if (!located || b < at) {
            at = b;
            located = true;
          }
      Begin("i", "finding", internal::EscapeJsonString(finding_titles_[i]),
            tracks_.Get(TrackKind::kFindings, 0, static_cast<int64_t>(i)), at);
      out_.Raw(",\"s\":\"t\"");
      FindingArgs(f, i);
      out_.Raw(",").Key("summary").Str(f.summary);
      for (size_t k = 0; k < f.strategies.size(); ++k)
        out_.Raw(",").Key("strategy " + std::to_string(k + 1)).Str(f.strategies[k]);
      out_.Raw("}}");
    }
  }

  // Escaped display names built once per distinct kind (not per event).
  const std::string& CopyName(CopyKind kind, MemKind src, MemKind dst) {
    std::string& s = copy_names_[{kind, src, dst}];
    if (s.empty()) s = internal::EscapeJsonString(KinetoMemcpyName(kind, src, dst));
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
  const std::vector<Finding>* findings_ = nullptr;
  std::vector<int32_t> sync_device_;
  ChromeTracks tracks_;
  std::vector<ChromeSlice> slices_;
  std::vector<uint32_t> track_of_[kFindingRows + 1];  // per table: the final track of each row
  std::vector<std::pair<uint32_t, uint32_t>> finding_rows_;  // (finding, claim part) per interval
  std::vector<std::string> finding_titles_;
  std::map<std::tuple<CopyKind, MemKind, MemKind>, std::string> copy_names_;
  std::map<MemKind, std::string> memset_names_;
  std::map<SyncKind, std::string> sync_names_;
  EscapedNames names_;
  TimeNs base_ = 0;
  bool first_ = true;
};

}  // namespace

Status WriteChromeTrace(const Trace& trace, const std::string& path, const ChromeExportOptions& options) {
  std::string tmp = TempPathFor(path);
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return IoError(path + ": cannot create: " + std::strerror(errno));
  JsonStream out(f);
  Exporter(trace, options, out).Write();
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
