// The report's keys, declared once (schema tracegate.report/v1): the headline figures at the top of
// the document and the columns of its iteration_table. The writer (reports/report/analysis_json.cpp)
// writes these names; the text, Markdown and HTML renderers list the headline from kHeadline and
// kCards; Python's iteration DataFrame takes its column order from kIterationColumns (through the
// module); tests/unit/reports/report_keys_test.cpp checks each key against the JSON Schema.
//
// Adding a headline figure: one Key here (and its place in kHeadline / kCards), its value in the
// writer, its property in the schema, a test. The renderers show it with no change.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace tg::internal::keys {

// The JSON type of a key's value (null aside: `nullable` says whether it may be null).
enum class KeyType : uint8_t { kInteger, kNumber, kString, kNumberArray, kObject };

// How a renderer formats a number.
enum class Unit : uint8_t { kMs, kPercent, kCount, kFps, kMb, kPlain };

// When the HTML page leaves a headline card out although the value is there.
enum class CardRule : uint8_t {
  kAlways,          // shown whenever the report has a value
  kManyIterations,  // needs at least kCardMinIterations kept iterations (a p99 of fewer is a max)
  kPositive,        // needs a value > 0
};
inline constexpr double kCardMinIterations = 20;

// Where a headline key is shown besides the JSON.
enum ShownIn : uint8_t {
  kInJson = 0,
  kInTable = 1 << 0,        // the Markdown headline tables (and the text summary's extra line, below)
  kKeyFigure = 1 << 1,      // the Markdown's one-row key figures (the rest go to "Other headline metrics")
  kIfPresent = 1 << 2,      // listed only when the report has the key (figures newer reports carry)
  kTextLine = 1 << 3,       // the text summary prints it on its "also:" line; the latency family and the
                            // phase shares have lines of their own there
  kCardIfSeveral = 1 << 4,  // an HTML card only when the report has more than one iteration
};

struct Key {
  std::string_view name;  // the JSON key (a literal: name.data() is a C string)
  KeyType type = KeyType::kNumber;
  bool nullable = false;  // null with a sibling "<name>_reason"
  Unit unit = Unit::kPlain;
  std::string_view label = {};    // how the renderers name it ("Latency mean"); empty: not shown
  std::string_view meaning = {};  // one line: what it is, and what its null reason says
  uint8_t shown = kInJson;
  std::string_view card_label = {};  // the HTML card's name when it differs from `label`
  CardRule card_rule = CardRule::kAlways;
  std::string_view card_hidden = {};  // why the page leaves the card out under card_rule
};

// ---- the headline (flat keys at the top of the document; docs/RULES.md "Iterations and phases")
inline constexpr Key kIterations{"iterations",         KeyType::kInteger, false,
                                 Unit::kCount,         "Iterations",      "kept iterations (warm-up dropped)",
                                 kInTable | kKeyFigure};
inline constexpr Key kAvgLatencyMs{"avg_latency_ms",
                                   KeyType::kNumber,
                                   true,
                                   Unit::kMs,
                                   "Latency mean",
                                   "mean iteration latency; null: no iterations, or zero-length ones",
                                   kInTable | kKeyFigure};
inline constexpr Key kP50LatencyMs{"p50_latency_ms",
                                   KeyType::kNumber,
                                   true,
                                   Unit::kMs,
                                   "Latency p50",
                                   "nearest-rank median latency; null as avg_latency_ms",
                                   kInTable | kKeyFigure | kCardIfSeveral};
inline constexpr Key kP95LatencyMs{"p95_latency_ms",
                                   KeyType::kNumber,
                                   true,
                                   Unit::kMs,
                                   "Latency p95",
                                   "nearest-rank p95 latency; null as avg_latency_ms",
                                   kInTable | kKeyFigure | kCardIfSeveral};
inline constexpr Key kP99LatencyMs{"p99_latency_ms",
                                   KeyType::kNumber,
                                   true,
                                   Unit::kMs,
                                   "Latency p99",
                                   "nearest-rank p99 latency; null as avg_latency_ms",
                                   kInTable | kCardIfSeveral,
                                   {},
                                   CardRule::kManyIterations,
                                   "fewer than 20 iterations"};
inline constexpr Key kStdLatencyMs{"std_latency_ms",
                                   KeyType::kNumber,
                                   true,
                                   Unit::kMs,
                                   "Latency std",
                                   "sample standard deviation of the latencies; null as avg_latency_ms",
                                   kInTable | kCardIfSeveral};
inline constexpr Key kLatencyCv{"latency_cv",
                                KeyType::kNumber,
                                true,
                                Unit::kPercent,
                                "Latency CV",
                                "std / mean; null: fewer than 2 iterations",
                                kInTable | kCardIfSeveral};
inline constexpr Key kThroughputFps{"throughput_fps",
                                    KeyType::kNumber,
                                    true,
                                    Unit::kFps,
                                    "Throughput",
                                    "batch x iterations / summed latency (s); null: a zero-length run",
                                    kInTable | kKeyFigure,
                                    {},
                                    CardRule::kPositive,
                                    "no time between iterations"};
inline constexpr std::string_view kNoSuchPhase = "0: no such phase in the iterations";
inline constexpr Key kPreRatio{"pre_ms_ratio",
                               KeyType::kNumber,
                               true,
                               Unit::kPercent,
                               "Pre share",
                               "share of the iterations' time in the pre phase",
                               kInTable,
                               {},
                               CardRule::kPositive,
                               kNoSuchPhase};
inline constexpr Key kH2dRatio{"h2d_ms_ratio",
                               KeyType::kNumber,
                               true,
                               Unit::kPercent,
                               "H2D share",
                               "share in host-to-device copies",
                               kInTable,
                               {},
                               CardRule::kPositive,
                               kNoSuchPhase};
inline constexpr Key kInferRatio{"infer_ms_ratio",       KeyType::kNumber, true, Unit::kPercent,      "Infer share",
                                 "share in GPU compute", kInTable,         {},   CardRule::kPositive, kNoSuchPhase};
inline constexpr Key kD2hRatio{"d2h_ms_ratio",
                               KeyType::kNumber,
                               true,
                               Unit::kPercent,
                               "D2H share",
                               "share in device-to-host copies",
                               kInTable,
                               {},
                               CardRule::kPositive,
                               kNoSuchPhase};
inline constexpr Key kPostRatio{"post_ms_ratio",           KeyType::kNumber, true, Unit::kPercent,      "Post share",
                                "share in the post phase", kInTable,         {},   CardRule::kPositive, kNoSuchPhase};
inline constexpr Key kIdleRatio{"idle_ratio",
                                KeyType::kNumber,
                                true,
                                Unit::kPercent,
                                "Idle share",
                                "share with the GPU idle; null without device activity (no_device_activity says why)",
                                kInTable | kKeyFigure,
                                "GPU idle"};
inline constexpr Key kMemoryPeakMb{"memory_peak_mb",
                                   KeyType::kNumber,
                                   true,
                                   Unit::kMb,
                                   "Memory peak",
                                   "peak device memory (NVML samples or trace metadata); null: neither",
                                   kInTable | kKeyFigure | kIfPresent};
inline constexpr Key kTemperatureRange{
    "temperature_c_range", KeyType::kString,  true,
    Unit::kPlain,          "Temperature (C)", "min-max of the NVML temperature samples; null: none",
    kInTable | kIfPresent};
inline constexpr Key kLatencySamplesMs{
    "latency_samples_ms", KeyType::kNumberArray, false, Unit::kMs, {}, "every kept iteration's latency, in order"};

// The phases' share keys, in kPhaseNames order (pre, h2d, infer, d2h, post, idle).
inline constexpr std::array<const Key*, 6> kPhaseRatioKeys{&kPreRatio, &kH2dRatio,  &kInferRatio,
                                                           &kD2hRatio, &kPostRatio, &kIdleRatio};

// Every headline key, in the order the text and Markdown renderers list them.
inline constexpr std::array<const Key*, 17> kHeadline{
    &kIterations, &kAvgLatencyMs,  &kP50LatencyMs, &kP95LatencyMs,     &kP99LatencyMs,    &kStdLatencyMs,
    &kLatencyCv,  &kThroughputFps, &kPreRatio,     &kH2dRatio,         &kInferRatio,      &kD2hRatio,
    &kPostRatio,  &kIdleRatio,     &kMemoryPeakMb, &kTemperatureRange, &kLatencySamplesMs};
// The HTML page's headline cards, in their order (the median leads). A report of one iteration
// shows one latency card, "Latency" (its mean).
inline constexpr std::array<const Key*, 16> kCards{&kIterations,   &kP50LatencyMs, &kAvgLatencyMs, &kP95LatencyMs,
                                                   &kP99LatencyMs, &kStdLatencyMs, &kLatencyCv,    &kThroughputFps,
                                                   &kIdleRatio,    &kPreRatio,     &kH2dRatio,     &kInferRatio,
                                                   &kD2hRatio,     &kPostRatio,    &kMemoryPeakMb, &kTemperatureRange};

// ---- iteration_table[] (one row per kept iteration; the writer streams them in key order)
inline constexpr Key kRowIndex{"index", KeyType::kInteger, false, Unit::kCount, "Index", "the iteration's index"};
inline constexpr Key kRowName{"name", KeyType::kString, false, Unit::kPlain, "Name", "the marker's name"};
inline constexpr Key kRowStartNs{"start_ns", KeyType::kInteger, false, Unit::kCount, "Start", "trace clock, ns"};
inline constexpr Key kRowEndNs{"end_ns", KeyType::kInteger, false, Unit::kCount, "End", "trace clock, ns"};
inline constexpr Key kRowLatencyMs{"latency_ms", KeyType::kNumber, false, Unit::kMs, "Latency", "end - start"};
inline constexpr Key kRowHostStepMs{"host_step_ms", KeyType::kNumber,
                                    false,          Unit::kMs,
                                    "Host step",    "the host's step: marker start to the last GPU work's end"};
inline constexpr Key kRowGpuBusyMs{"gpu_busy_ms", KeyType::kNumber, false,
                                   Unit::kMs,     "GPU busy",       "union of the iteration's GPU work"};
inline constexpr Key kRowPhasesMs{"phases_ms", KeyType::kObject, false,
                                  Unit::kMs,   "Phases",         "ms per phase (kPhaseNames), summing to latency_ms"};
inline constexpr Key kRowIdleCausesNs{
    "idle_causes_ns", KeyType::kObject, false,
    Unit::kCount,     "Idle causes",    "ns of GPU-idle time per cause (iteration_idle.h)"};
inline constexpr Key kRowKernels{"kernels", KeyType::kInteger, false, Unit::kCount, "Kernels", "kernels started"};
inline constexpr Key kRowMemcpys{"memcpys", KeyType::kInteger, false, Unit::kCount, "Copies", "copies started"};
inline constexpr Key kRowMemsets{"memsets", KeyType::kInteger, false, Unit::kCount, "Memsets", "memsets started"};
inline constexpr Key kRowSyncs{"syncs", KeyType::kInteger, false, Unit::kCount, "Syncs", "synchronising calls"};
inline constexpr Key kRowSyncMs{"sync_ms", KeyType::kNumber, false, Unit::kMs, "Sync", "time in them"};
inline constexpr Key kRowPreRangeMs{"pre_range_ms", KeyType::kNumber, false,
                                    Unit::kMs,      "Pre range",      "--phase pre ranges inside the iteration"};
inline constexpr Key kRowInferRangeMs{"infer_range_ms", KeyType::kNumber, false,
                                      Unit::kMs,        "Infer range",    "--phase infer ranges"};
inline constexpr Key kRowPostRangeMs{"post_range_ms", KeyType::kNumber, false,
                                     Unit::kMs,       "Post range",     "--phase post ranges"};
// Only on LLM serving steps (docs/SERVING.md): null where the step annotation does not say.
inline constexpr Key kRowStepKind{"step_kind",  KeyType::kString, true,
                                  Unit::kPlain, "Step kind",      "prefill, decode or mixed"};
inline constexpr Key kRowTokens{"tokens", KeyType::kInteger, true, Unit::kCount, "Tokens", "tokens of the step"};
inline constexpr Key kRowPrefillRequests{"prefill_requests", KeyType::kInteger,  true,
                                         Unit::kCount,       "Prefill requests", "prefill requests"};
inline constexpr Key kRowDecodeRequests{"decode_requests", KeyType::kInteger, true,
                                        Unit::kCount,      "Decode requests", "decode requests"};
inline constexpr Key kRowPrefillQueryTokens{
    "prefill_query_tokens", KeyType::kInteger,      true,
    Unit::kCount,           "Prefill query tokens", "summed query tokens of the prefills"};
inline constexpr Key kRowPrefillContextTokens{"prefill_context_tokens",
                                              KeyType::kInteger,
                                              true,
                                              Unit::kCount,
                                              "Prefill context tokens",
                                              "summed context tokens of the prefills"};
inline constexpr Key kRowDecodeQueryTokens{
    "decode_query_tokens", KeyType::kInteger,     true,
    Unit::kCount,          "Decode query tokens", "summed query tokens of the decodes"};
inline constexpr Key kRowDecodeContextTokens{"decode_context_tokens",
                                             KeyType::kInteger,
                                             true,
                                             Unit::kCount,
                                             "Decode context tokens",
                                             "summed context tokens of the decodes"};

// Every key of an iteration row (tests/unit/reports/report_keys_test.cpp checks them against the schema).
inline constexpr std::array<const Key*, 25> kIterationRowKeys{&kRowIndex,
                                                              &kRowName,
                                                              &kRowStartNs,
                                                              &kRowEndNs,
                                                              &kRowLatencyMs,
                                                              &kRowHostStepMs,
                                                              &kRowGpuBusyMs,
                                                              &kRowPhasesMs,
                                                              &kRowKernels,
                                                              &kRowMemcpys,
                                                              &kRowMemsets,
                                                              &kRowSyncs,
                                                              &kRowSyncMs,
                                                              &kRowPreRangeMs,
                                                              &kRowInferRangeMs,
                                                              &kRowPostRangeMs,
                                                              &kRowIdleCausesNs,
                                                              &kRowStepKind,
                                                              &kRowTokens,
                                                              &kRowPrefillRequests,
                                                              &kRowDecodeRequests,
                                                              &kRowPrefillQueryTokens,
                                                              &kRowPrefillContextTokens,
                                                              &kRowDecodeQueryTokens,
                                                              &kRowDecodeContextTokens};
// The leading columns of Python's Report.iterations DataFrame, in order (object columns expand to
// "<key>.<member>"): the first 16 row keys, index to post_range_ms; the others follow in the
// document's order.
inline constexpr std::span<const Key* const> kIterationColumns{kIterationRowKeys.data(), 16};

}  // namespace tg::internal::keys
