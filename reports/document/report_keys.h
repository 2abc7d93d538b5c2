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
#include <string>
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
  // A headline key's JSON Schema (ReportSchemaJson puts it into the report's schema, with the key
  // required and, when nullable, its "<name>_reason" required whenever it is null).
  std::string_view schema = {};
};

// The sibling key that says why `key` is null ("<key>_reason"), wherever a report has one.
inline std::string ReasonKey(std::string_view key) { return std::string(key) + "_reason"; }

// ---- the headline (flat keys at the top of the document; docs/RULES.md "Iterations and phases")
inline constexpr Key kIterations{.name = "iterations",
                                 .type = KeyType::kInteger,
                                 .nullable = false,
                                 .unit = Unit::kCount,
                                 .label = "Iterations",
                                 .meaning = "kept iterations (warm-up dropped)",
                                 .shown = kInTable | kKeyFigure,
                                 .schema = R"({"$ref": "#/$defs/count"})"};
inline constexpr Key kAvgLatencyMs{.name = "avg_latency_ms",
                                   .type = KeyType::kNumber,
                                   .nullable = true,
                                   .unit = Unit::kMs,
                                   .label = "Latency mean",
                                   .meaning = "mean iteration latency; null: no iterations, or zero-length ones",
                                   .shown = kInTable | kKeyFigure,
                                   .schema = R"({"$ref": "#/$defs/nullable_nonneg"})"};
inline constexpr Key kP50LatencyMs{.name = "p50_latency_ms",
                                   .type = KeyType::kNumber,
                                   .nullable = true,
                                   .unit = Unit::kMs,
                                   .label = "Latency p50",
                                   .meaning = "nearest-rank median latency; null as avg_latency_ms",
                                   .shown = kInTable | kKeyFigure | kCardIfSeveral,
                                   .schema = R"({"$ref": "#/$defs/nullable_nonneg"})"};
inline constexpr Key kP95LatencyMs{.name = "p95_latency_ms",
                                   .type = KeyType::kNumber,
                                   .nullable = true,
                                   .unit = Unit::kMs,
                                   .label = "Latency p95",
                                   .meaning = "nearest-rank p95 latency; null as avg_latency_ms",
                                   .shown = kInTable | kKeyFigure | kCardIfSeveral,
                                   .schema = R"({"$ref": "#/$defs/nullable_nonneg"})"};
inline constexpr Key kP99LatencyMs{.name = "p99_latency_ms",
                                   .type = KeyType::kNumber,
                                   .nullable = true,
                                   .unit = Unit::kMs,
                                   .label = "Latency p99",
                                   .meaning = "nearest-rank p99 latency; null as avg_latency_ms",
                                   .shown = kInTable | kCardIfSeveral,
                                   .card_rule = CardRule::kManyIterations,
                                   .card_hidden = "fewer than 20 iterations",
                                   .schema = R"({"$ref": "#/$defs/nullable_nonneg"})"};
inline constexpr Key kStdLatencyMs{.name = "std_latency_ms",
                                   .type = KeyType::kNumber,
                                   .nullable = true,
                                   .unit = Unit::kMs,
                                   .label = "Latency std",
                                   .meaning = "sample standard deviation of the latencies; null as avg_latency_ms",
                                   .shown = kInTable | kCardIfSeveral,
                                   .schema = R"({"$ref": "#/$defs/nullable_nonneg"})"};
inline constexpr Key kLatencyCv{.name = "latency_cv",
                                .type = KeyType::kNumber,
                                .nullable = true,
                                .unit = Unit::kPercent,
                                .label = "Latency CV",
                                .meaning = "std / mean; null: fewer than 2 iterations",
                                .shown = kInTable | kCardIfSeveral,
                                .schema = R"({"$ref": "#/$defs/nullable_nonneg"})"};
inline constexpr Key kThroughputFps{.name = "throughput_fps",
                                    .type = KeyType::kNumber,
                                    .nullable = true,
                                    .unit = Unit::kFps,
                                    .label = "Throughput",
                                    .meaning = "batch x iterations / summed latency (s); null: a zero-length run",
                                    .shown = kInTable | kKeyFigure,
                                    .card_rule = CardRule::kPositive,
                                    .card_hidden = "no time between iterations",
                                    .schema = R"({"$ref": "#/$defs/nullable_nonneg"})"};
inline constexpr std::string_view kNoSuchPhase = "0: no such phase in the iterations";
inline constexpr Key kPreRatio{.name = "pre_ms_ratio",
                               .type = KeyType::kNumber,
                               .nullable = true,
                               .unit = Unit::kPercent,
                               .label = "Pre share",
                               .meaning = "share of the iterations' time in the pre phase",
                               .shown = kInTable,
                               .card_rule = CardRule::kPositive,
                               .card_hidden = kNoSuchPhase,
                               .schema = R"({"$ref": "#/$defs/nullable_ratio"})"};
inline constexpr Key kH2dRatio{.name = "h2d_ms_ratio",
                               .type = KeyType::kNumber,
                               .nullable = true,
                               .unit = Unit::kPercent,
                               .label = "H2D share",
                               .meaning = "share in host-to-device copies",
                               .shown = kInTable,
                               .card_rule = CardRule::kPositive,
                               .card_hidden = kNoSuchPhase,
                               .schema = R"({"$ref": "#/$defs/nullable_ratio"})"};
inline constexpr Key kInferRatio{.name = "infer_ms_ratio",
                                 .type = KeyType::kNumber,
                                 .nullable = true,
                                 .unit = Unit::kPercent,
                                 .label = "Infer share",
                                 .meaning = "share in GPU compute",
                                 .shown = kInTable,
                                 .card_rule = CardRule::kPositive,
                                 .card_hidden = kNoSuchPhase,
                                 .schema = R"({"$ref": "#/$defs/nullable_ratio"})"};
inline constexpr Key kD2hRatio{.name = "d2h_ms_ratio",
                               .type = KeyType::kNumber,
                               .nullable = true,
                               .unit = Unit::kPercent,
                               .label = "D2H share",
                               .meaning = "share in device-to-host copies",
                               .shown = kInTable,
                               .card_rule = CardRule::kPositive,
                               .card_hidden = kNoSuchPhase,
                               .schema = R"({"$ref": "#/$defs/nullable_ratio"})"};
inline constexpr Key kPostRatio{.name = "post_ms_ratio",
                                .type = KeyType::kNumber,
                                .nullable = true,
                                .unit = Unit::kPercent,
                                .label = "Post share",
                                .meaning = "share in the post phase",
                                .shown = kInTable,
                                .card_rule = CardRule::kPositive,
                                .card_hidden = kNoSuchPhase,
                                .schema = R"({"$ref": "#/$defs/nullable_ratio"})"};
inline constexpr Key kIdleRatio{
    .name = "idle_ratio",
    .type = KeyType::kNumber,
    .nullable = true,
    .unit = Unit::kPercent,
    .label = "Idle share",
    .meaning = "share with the GPU idle; null without device activity (no_device_activity says why)",
    .shown = kInTable | kKeyFigure,
    .card_label = "GPU idle",
    .schema = R"({"$ref": "#/$defs/nullable_ratio"})"};
inline constexpr Key kMemoryPeakMb{.name = "memory_peak_mb",
                                   .type = KeyType::kNumber,
                                   .nullable = true,
                                   .unit = Unit::kMb,
                                   .label = "Memory peak",
                                   .meaning = "peak device memory (NVML samples or trace metadata); null: neither",
                                   .shown = kInTable | kKeyFigure | kIfPresent,
                                   .schema = R"({"$ref": "#/$defs/nullable_nonneg"})"};
// Where memory_peak_mb comes from ("cupti allocations", "nvml samples", "trace metadata"); present
// when it is not null. Not a headline figure of its own.
inline constexpr Key kMemoryPeakMbSource{.name = "memory_peak_mb_source",
                                         .type = KeyType::kString,
                                         .nullable = false,
                                         .unit = Unit::kPlain,
                                         .meaning = "where memory_peak_mb comes from"};
inline constexpr Key kTemperatureRange{.name = "temperature_c_range",
                                       .type = KeyType::kString,
                                       .nullable = true,
                                       .unit = Unit::kPlain,
                                       .label = "Temperature (C)",
                                       .meaning = "min-max of the NVML temperature samples; null: none",
                                       .shown = kInTable | kIfPresent,
                                       .schema = R"({"type": ["string", "null"], "pattern": "^[0-9]+-[0-9]+$"})"};
inline constexpr Key kLatencySamplesMs{.name = "latency_samples_ms",
                                       .type = KeyType::kNumberArray,
                                       .nullable = false,
                                       .unit = Unit::kMs,
                                       .meaning = "every kept iteration's latency, in order",
                                       .schema = R"({"type": "array", "items": {"$ref": "#/$defs/nonneg"}})"};

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
inline constexpr Key kRowIndex{.name = "index",
                               .type = KeyType::kInteger,
                               .nullable = false,
                               .unit = Unit::kCount,
                               .label = "Index",
                               .meaning = "the iteration's index"};
inline constexpr Key kRowName{.name = "name",
                              .type = KeyType::kString,
                              .nullable = false,
                              .unit = Unit::kPlain,
                              .label = "Name",
                              .meaning = "the marker's name"};
inline constexpr Key kRowStartNs{.name = "start_ns",
                                 .type = KeyType::kInteger,
                                 .nullable = false,
                                 .unit = Unit::kCount,
                                 .label = "Start",
                                 .meaning = "trace clock, ns"};
inline constexpr Key kRowEndNs{.name = "end_ns",
                               .type = KeyType::kInteger,
                               .nullable = false,
                               .unit = Unit::kCount,
                               .label = "End",
                               .meaning = "trace clock, ns"};
inline constexpr Key kRowLatencyMs{.name = "latency_ms",
                                   .type = KeyType::kNumber,
                                   .nullable = false,
                                   .unit = Unit::kMs,
                                   .label = "Latency",
                                   .meaning = "end - start"};
inline constexpr Key kRowHostStepMs{.name = "host_step_ms",
                                    .type = KeyType::kNumber,
                                    .nullable = false,
                                    .unit = Unit::kMs,
                                    .label = "Host step",
                                    .meaning = "the host's step: marker start to the last GPU work's end"};
inline constexpr Key kRowGpuBusyMs{.name = "gpu_busy_ms",
                                   .type = KeyType::kNumber,
                                   .nullable = false,
                                   .unit = Unit::kMs,
                                   .label = "GPU busy",
                                   .meaning = "union of the iteration's GPU work"};
inline constexpr Key kRowPhasesMs{.name = "phases_ms",
                                  .type = KeyType::kObject,
                                  .nullable = false,
                                  .unit = Unit::kMs,
                                  .label = "Phases",
                                  .meaning = "ms per phase (kPhaseNames), summing to latency_ms"};
inline constexpr Key kRowIdleCausesNs{.name = "idle_causes_ns",
                                      .type = KeyType::kObject,
                                      .nullable = false,
                                      .unit = Unit::kCount,
                                      .label = "Idle causes",
                                      .meaning = "ns of GPU-idle time per cause (iteration_idle.h)"};
inline constexpr Key kRowKernels{.name = "kernels",
                                 .type = KeyType::kInteger,
                                 .nullable = false,
                                 .unit = Unit::kCount,
                                 .label = "Kernels",
                                 .meaning = "kernels started"};
inline constexpr Key kRowMemcpys{.name = "memcpys",
                                 .type = KeyType::kInteger,
                                 .nullable = false,
                                 .unit = Unit::kCount,
                                 .label = "Copies",
                                 .meaning = "copies started"};
inline constexpr Key kRowMemsets{.name = "memsets",
                                 .type = KeyType::kInteger,
                                 .nullable = false,
                                 .unit = Unit::kCount,
                                 .label = "Memsets",
                                 .meaning = "memsets started"};
inline constexpr Key kRowSyncs{.name = "syncs",
                               .type = KeyType::kInteger,
                               .nullable = false,
                               .unit = Unit::kCount,
                               .label = "Syncs",
                               .meaning = "synchronising calls"};
inline constexpr Key kRowSyncMs{.name = "sync_ms",
                                .type = KeyType::kNumber,
                                .nullable = false,
                                .unit = Unit::kMs,
                                .label = "Sync",
                                .meaning = "time in them"};
inline constexpr Key kRowPreRangeMs{.name = "pre_range_ms",
                                    .type = KeyType::kNumber,
                                    .nullable = false,
                                    .unit = Unit::kMs,
                                    .label = "Pre range",
                                    .meaning = "--phase pre ranges inside the iteration"};
inline constexpr Key kRowInferRangeMs{.name = "infer_range_ms",
                                      .type = KeyType::kNumber,
                                      .nullable = false,
                                      .unit = Unit::kMs,
                                      .label = "Infer range",
                                      .meaning = "--phase infer ranges"};
inline constexpr Key kRowPostRangeMs{.name = "post_range_ms",
                                     .type = KeyType::kNumber,
                                     .nullable = false,
                                     .unit = Unit::kMs,
                                     .label = "Post range",
                                     .meaning = "--phase post ranges"};
// Only on LLM serving steps (docs/SERVING.md): null where the step annotation does not say.
inline constexpr Key kRowStepKind{.name = "step_kind",
                                  .type = KeyType::kString,
                                  .nullable = true,
                                  .unit = Unit::kPlain,
                                  .label = "Step kind",
                                  .meaning = "prefill, decode or mixed"};
inline constexpr Key kRowTokens{.name = "tokens",
                                .type = KeyType::kInteger,
                                .nullable = true,
                                .unit = Unit::kCount,
                                .label = "Tokens",
                                .meaning = "tokens of the step"};
inline constexpr Key kRowPrefillRequests{.name = "prefill_requests",
                                         .type = KeyType::kInteger,
                                         .nullable = true,
                                         .unit = Unit::kCount,
                                         .label = "Prefill requests",
                                         .meaning = "prefill requests"};
inline constexpr Key kRowDecodeRequests{.name = "decode_requests",
                                        .type = KeyType::kInteger,
                                        .nullable = true,
                                        .unit = Unit::kCount,
                                        .label = "Decode requests",
                                        .meaning = "decode requests"};
inline constexpr Key kRowPrefillQueryTokens{.name = "prefill_query_tokens",
                                            .type = KeyType::kInteger,
                                            .nullable = true,
                                            .unit = Unit::kCount,
                                            .label = "Prefill query tokens",
                                            .meaning = "summed query tokens of the prefills"};
inline constexpr Key kRowPrefillContextTokens{.name = "prefill_context_tokens",
                                              .type = KeyType::kInteger,
                                              .nullable = true,
                                              .unit = Unit::kCount,
                                              .label = "Prefill context tokens",
                                              .meaning = "summed context tokens of the prefills"};
inline constexpr Key kRowDecodeQueryTokens{.name = "decode_query_tokens",
                                           .type = KeyType::kInteger,
                                           .nullable = true,
                                           .unit = Unit::kCount,
                                           .label = "Decode query tokens",
                                           .meaning = "summed query tokens of the decodes"};
inline constexpr Key kRowDecodeContextTokens{.name = "decode_context_tokens",
                                             .type = KeyType::kInteger,
                                             .nullable = true,
                                             .unit = Unit::kCount,
                                             .label = "Decode context tokens",
                                             .meaning = "summed context tokens of the decodes"};

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
