// The `tracegate analyze` outputs: the report JSON document and the human summary.
//
// Report document, schema "tracegate.report/v1". Keys are stable snake_case; units are in the key
// (_ns, _ms, _bytes, _gbs, _ratio; ratios are 0..1). Numbers are never NaN/inf: an undefined
// ratio or rate is null and a sibling "<key>_reason" says why. Unknown ids (-1) are null.
//   schema, tool{name, version}
//   source{format, version, path, producer}       from trace.metadata, null when absent
//   environment{host, cuda_version, driver_version, cupti_version}
//   counts{kernels, memcpys, memsets, syncs, runtime_calls, driver_calls, ranges, samples}
//   window{start_ns, end_ns, duration_ns, duration_ms}           Trace::Window()
//   devices[]{device, name, sm_count, memory_bytes, peak_bandwidth_gbs, kernels, memcpys, memsets,
//             first_start_ns, last_end_ns, active_ns, busy_ns, busy_ms, idle_ns, idle_ratio,
//             gaps{count, total_ns,
//                  histogram[]{bucket, label, min_ns, max_ns (exclusive; null = open), count, total_ns},
//                  largest[]{start_ns, duration_ns, before, after}}}
//     Gaps live inside their device. busy = union of the device's kernels+memcpys+memsets;
//     idle_ratio = 1 - busy/active. Buckets: lt_10us, 10us_to_100us, 100us_to_1ms, 1ms_to_10ms,
//     ge_10ms. before/after: demangled kernel name, "Memcpy HtoD" style, or "Memset".
//   kernels{count, total_ns, total_ms, distinct_names, percentile_method: "nearest_rank"}
//   top_kernels[]{rank, name (demangled), count, total_ns, total_ms, mean_ns, min_ns, max_ns,
//                 p50_ns, p95_ns, share_ratio, op, class}   sorted by total desc; share of total kernel time
//   kernel_table[]{name (demangled), count, total_ms, per_iteration_ms, mean_us, devices[], streams[], op,
//                 class}   every distinct kernel of the kept iterations (total / kept iterations), the devices
//                 and streams it ran on (ascending); by total_ms desc, then name
//     op: the host op (innermost cpu_op, else NVTX range) enclosing the launch call of most of the
//     kernel's launches in the trace (tracegate/analyzer/op_links.h; ties: the first op by name),
//     null + op_reason when none has one; class: the class most of its launches have (by op, then
//     by name; tracegate/analyzer/kernel_class.h)
//   collectives[]{collective, dtype, message_bytes, group_size, count, total_ms, mean_ms, algbw_gbs,
//                 busbw_gbs}   one row per (collective, dtype, message bytes, group size) over every
//                 collective kernel; bytes = max(In, Out msg nelems) x dtype size, algbw =
//                 bytes x count / total time (GB/s), busbw = algbw x NCCL's factor; null + _reason
//                 where unknown (collectives known by name only have no size). docs/RULES.md
//   ranks[]{rank, file, avg_latency_ms, comm_ms, compute_ms, overlap_ratio, wait_ms, idle_ratio,
//           collective_calls[]{name, group, seq, start_ns, end_ns, bytes}}   one object per rank (one
//           for a single trace; wait_ms is null there: waits need the other ranks). docs/RULES.md
//   copies{htod, dtoh, dtod, ptop, other: {count, bytes, time_ns, time_ms, achieved_gbs
//          (bytes/time, 1 GB = 1e9 B), pageable_count, pageable_ratio, small_count},
//          memset{count, bytes, time_ns, time_ms}}
//   streams[]{device, stream, kernels, memcpys, memsets, first_start_ns, last_end_ns, busy_ns,
//             busy_ms, device_busy_ratio}
//   data_quality{has_errors, counters[]{key, severity, count, description}}   every counter
//   model, precision, batch                       tags from the command line (null + _reason when not given)
//   commit, memory_peak_mb, temperature_c_range ("54-58"), profiling_date (ISO-8601 UTC)   provenance
//     (report_provenance.h): --commit or the git HEAD; max/min-max of the NVML samples; the trace
//     start when its clock is Unix-epoch ns. Each is null + _reason when unknown.
//   iterations, avg_latency_ms, std_latency_ms, p50/p95/p99_latency_ms, latency_cv, throughput_fps,
//   pre/h2d/infer/d2h/post_ms_ratio, idle_ratio, latency_samples_ms     headline (docs/RULES.md);
//     ratios are sums over kept iterations / summed latency (iterations.h defines the phases)
//   iteration_source{from_markers, description, regex, pid, found, skipped, step_form}
//     step_form: "vllm", "sglang" or "vllm+sglang" when the iterations are LLM serving step
//     annotations (no range matched the default expression; docs/SERVING.md), else null
//   phases{pre, h2d, infer, d2h, post, idle: {mean_ms, ratio}}
//   iteration_table[]{index, name, start_ns, end_ns, latency_ms, phases_ms{...}, gpu_busy_ms, kernels,
//                     memcpys, memsets, syncs, sync_ms, pre_range_ms, infer_range_ms, post_range_ms,
//                     and only on serving steps: step_kind (prefill/decode/mixed, null unknown), tokens,
//                     prefill_requests, decode_requests, prefill_query_tokens, prefill_context_tokens,
//                     decode_query_tokens, decode_context_tokens (null where the annotation does not say)}
//   serving{steps, step_form, groups[]{kind, token_bucket_min, token_bucket_max, count, latency_total_ms,
//           mean_latency_ms, p50/p95/p99_latency_ms, tokens, ms_per_token, tokens_per_s},
//           graph_replay{launches, kernels, kernel_ns, total_kernel_ns, kernel_time_ratio},
//           capture_steps, capture_names[]}
//     The kept serving steps by kind x power-of-two token bucket [min, max) (nearest-rank
//     percentiles of the steps' latencies; ms_per_token = summed latency / summed tokens,
//     tokens_per_s its inverse in seconds; null + _reason when a step's tokens are unknown);
//     graph_replay: kernels whose launch call (same correlation id) is a graph launch, their summed
//     durations over every kernel's (kernels.total_ns), over the whole trace. null + serving_reason
//     without steps, graph launches and capture annotations. docs/SERVING.md
//   timeline{iteration (index as in iteration_table; null + _reason without iterations), selection,
//            name, start_ns, end_ns, duration_ns, latency_ms, marker_start/end_offset_ns (null without
//            markers), phases_ms{...}, item_cap, items_total, items_dropped,
//            columns ["start_offset_ns", "duration_ns", "kind", "name"],
//            lanes[]{device, stream, busy_ns, idle_ns, items_total, items_dropped, items[][columns]}}
//     The GPU work of the kept iteration with the median latency (nearest rank: its latency is
//     p50_latency_ms), one lane per (device, stream) in that order. Rows follow `columns`: offset
//     from the iteration's start (negative for work that began before it), kind kernel/collective
//     (a kernel of the communication class)/memcpy/memset, short name (ShortKernelName, "Memcpy HtoD", "Memset"); by
//     start. At most item_cap rows over all lanes, the longest kept; busy/idle_ns count every item, listed or not.
//     gaps[]{device, start_offset_ns, duration_ns}: the device-idle intervals of the span (each
//       device's work in it, listed or not, subtracted from it), the longest kTimelineGapCap, by
//       device then start; gaps_total counts them all.
//     host[]{pid, tid, items_total, items_dropped, items[][start_offset_ns, duration_ns, kind
//       (launch/sync/copy/api by the call's name, range), name, depth]}: the API calls the
//       iteration analysis gave the iteration and the CPU ranges overlapping its span, one lane
//       per thread (the kTimelineHostLanes with the most items), the longest kTimelineHostCap items.
//     overview{start_ns, duration_ns, bin_ns, devices[]{device, busy_ns[]}, iterations[][offset,
//       duration]}: the whole trace (GPU work and iterations) in equal bins, each device's busy
//       time (union of its work) per bin; present without iterations too.
//   peak{device_name, bandwidth_gbs, tflops, source}                      roofline peaks (null = unknown)
//   roofline[]{label, source, launches, time_ms, bytes, flops, achieved_gbs, achieved_tflops,
//              intensity_flop_per_byte, bandwidth_ratio, flops_ratio, memory_bound}
//   findings[]{id, title, priority, summary, heuristic, evidence[]{metric, value, threshold, comparison,
//              unit}, involved[]{kind, name, count, time_ms, detail, start_ns and device for gaps},
//              strategies[],
//              amdahl{share, speedup (null = unbounded), basis, assumption, overall_speedup, gain_pct,
//                     upper_bound (null = unbounded)}, evidence_strength (measured/assumed/heuristic),
//              claim[]{space (gpu/idle/post/run), share, located}, overlaps[] (refs: the id, or
//              "id#k" for the k-th finding of an id several share)}    by priority, then overall speedup
//   combined_estimate{parts[]{finding (ref), share, speedup}, left_out[] (refs claiming the run as a
//              whole), overall_speedup, gain_pct, upper_bound}     the findings' gains over disjoint parts
//   rules{<id>: {enabled, <param>: value}}                                the effective thresholds
//   options{top_k, largest_gaps, small_copy_bytes, iteration_regex, skip, pre_regex, infer_regex,
//           post_regex}
#pragma once

#include <nlohmann/json.hpp>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/model.h"

namespace tg {

inline constexpr const char* kReportSchema = "tracegate.report/v1";

// The analysis as the report JSON document (schema "tracegate.report/v1"; stable snake_case keys,
// units in key names). See the key list above.
// With IterationRows::kLeftOut, "iteration_table" is an empty array: WriteAnalysisJson fills it
// in as it writes (a trace of thousands of iterations would otherwise hold a large JSON tree).
enum class IterationRows : uint8_t { kInTree, kLeftOut };
nlohmann::json AnalysisToJson(const Trace& trace, const Analysis& analysis, const AnalysisConfig& config,
                              IterationRows rows = IterationRows::kInTree);

// The report's "iteration_table" rows of `iterations` (what kInTree puts in the document).
nlohmann::json IterationTableJson(const IterationAnalysis& iterations);

// Writes the report `doc` (from AnalysisToJson with IterationRows::kLeftOut) to `path`
// atomically, rendering the rows of `iterations` into its "iteration_table" one at a time. The
// file is byte for byte what WriteJsonFile would write for the kInTree document.
[[nodiscard]] Status WriteAnalysisJson(const nlohmann::json& doc, const IterationAnalysis& iterations,
                                       const std::string& path);

// The human summary printed by `tracegate analyze` (fits one screen for a typical trace), from the
// report document as the Markdown and HTML reports are. `no_activity_reason`: why a recording
// holds no GPU work (its record.no_cuda_activity metadata, which the report does not carry).
void PrintAnalysis(std::ostream& out, const nlohmann::json& report, std::string_view no_activity_reason = {});

}  // namespace tg
