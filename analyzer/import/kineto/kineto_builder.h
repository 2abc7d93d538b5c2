// Maps Kineto / Chrome-trace events (RawEvent) onto the Trace tables, counting what it cannot
// use in the data-quality counters. Both Kineto generations:
//   new: kernel, gpu_memcpy, gpu_memset, cuda_runtime, cuda_driver, cuda_sync, user_annotation,
//        gpu_user_annotation, cpu_op, python_function; flows "ac2g"
//   old: Kernel, Memcpy, Memset, Runtime, Operator; flows "async_gpu" / "async"
//   legacy autograd profiler (PyTorch without Kineto): no "cat", pid "CPU functions"; CPU ops
// Internal to the Kineto importer.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/import/kineto/kineto_event.h"
#include "analyzer/import/kineto/split_cost.h"
#include "tracegate/analyzer/model.h"

namespace tg::internal {

class KinetoBuilder {
 public:
  explicit KinetoBuilder(Trace& trace);

  void Add(const RawEvent& ev);

  // Gives GPU activities and API calls without a correlation id the id of the flow event bound
  // to them (same pid, tid, ts), then adds `base_ns` to every time; a time that overflows drops
  // its event (kTimestampOverflow).
  void Finish(int64_t base_ns);

  // Rows added to any table (kernels, copies, memsets, syncs, API calls, ranges).
  uint64_t kept() const { return kept_; }

  // The pid every event of the legacy autograd profiler's Chrome trace has (no "cat" either);
  // such events are CPU-op ranges. A trace made of them only is named as such (producer).
  static constexpr std::string_view kLegacyCpuPid = "CPU functions";

  // Reserves room in every table for `scale` times the rows it has now (plus a little), once
  // the importer has seen a sample of the file: the tables then grow without copies or slack.
  void ReserveFor(double scale);
  // Reserves room for at least rows[i] rows in table i (TableRows' order), before any is added:
  // from an estimate for the whole part the builder reads.
  void ReserveRows(const TableRows& rows);

  // Parallel import: appends what `next` built from the events that follow this builder's, so
  // that the result is what one builder fed both parts would hold. False (and nothing changed)
  // when either part has an event without a correlation id: then flows must be bound across the
  // parts and the caller reads the second part again sequentially. Before Finish only.
  bool Append(KinetoBuilder& next);

 private:
  enum class Table : uint8_t { kKernel, kMemcpy, kMemset, kSync, kApi };
  struct FlowPoint {
    int64_t pid, tid, ts, id;
    char phase;  // 's' (start, on the API call) or 'f' (end, on the GPU activity)
  };
  struct Pending {
    int64_t pid, tid, ts;
    uint64_t row;
    Table table;
  };

  void AddComplete(const RawEvent& ev);
  void AddFlow(const RawEvent& ev, char phase);
  void AddMetadata(const RawEvent& ev);
  void BindFlows();
  void ApplyBase(int64_t base_ns);

  Trace& trace_;
  QualityCounters& quality_;
  StringId cpu_op_domain_, python_domain_;
  uint64_t kept_ = 0;
  uint64_t legacy_ = 0;  // of them, legacy autograd profiler events (kLegacyCpuPid)
  // Flow points are needed only for events without args.correlation (Kineto always writes it).
  // Until the first such event they live in a ring of the most recent kFlowRing (Kineto writes a
  // flow right after its event); from then on every flow is kept.
  static constexpr size_t kFlowRing = 16384;
  std::vector<FlowPoint> flows_;
  size_t ring_next_ = 0;
  uint64_t flows_seen_ = 0;  // launch flows added, ring or not
  std::vector<Pending> pending_;
  // Complete events skipped for their category, by category: the no-device-activity line names
  // them (an accelerator tracegate does not model writes its kernels under its own categories).
  std::map<std::string, uint64_t, std::less<>> unmodelled_;
  std::unordered_map<int64_t, size_t> process_index_;
};

}  // namespace tg::internal
