// Reading reports back: the report check every command that reads a report makes, and the few
// headline fields other commands need from a report document.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tracegate/analyzer/findings.h"
#include "tracegate/analyzer/status.h"

namespace tg {

// The checks a gate, a baseline or a report given as "a report or a trace" pass: a JSON object
// with schema tracegate.report/v1 and the keys a gate reads with their types (avg_latency_ms,
// p95_latency_ms, throughput_fps: number or null; latency_samples_ms: array of numbers;
// devices: array; data_quality: {has_errors, counters[]}). InvalidInput "<label>: ..." naming the
// first problem; Unsupported for another schema version.
Status CheckReport(const nlohmann::json& report, const std::string& label);

// A report written by `tracegate analyze -o` as the higher-precision reference of an INT8 run:
// needs schema tracegate.report/v1 and a numeric avg_latency_ms; precision may be null.
// Errors name the file and the problem ("<path>: not a tracegate report (schema ...)").
Status ReadReferenceRun(const std::string& path, ReferenceRun* out);

}  // namespace tg
