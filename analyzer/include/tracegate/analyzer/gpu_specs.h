// Peak rates of known GPUs for the roofline: memory bandwidth and dense FP32 / FP16 tensor
// throughput, from vendor datasheets or the project's original figures (docs/RULES.md,
// "Roofline"). Users override them (--peak-gbs, --peak-tflops or rules.json "gpu").
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "tracegate/analyzer/model.h"

namespace tg {

struct GpuSpec {
  const char* name;         // "NVIDIA H200"
  const char* match;        // lower-case substring of the CUDA device name ("h200")
  double bandwidth_gbs;     // HBM / GDDR peak, 1 GB = 1e9 B
  double fp32_tflops;       // non-tensor FP32
  double fp16_tflops;       // dense FP16 tensor-core
  const char* source;       // where the figures come from
};

// The table, most specific match first (e.g. "a100-sxm4-80gb" before "a100").
std::span<const GpuSpec> KnownGpus();
// Case-insensitive: the first entry whose `match` is a substring of the device name; null if none.
// The match must stand as a token: no letter or digit before it and no digit after it, so "a10"
// finds "NVIDIA A10" and "NVIDIA A10G" but not "NVIDIA A100" or "RTX A1000", and "l4" not "L40S".
const GpuSpec* FindGpuSpec(std::string_view device_name);

struct PeakOverride {
  double bandwidth_gbs = 0;  // 0 = not overridden
  double tflops = 0;         // 0 = not overridden
};

struct PeakRates {
  bool has_bandwidth = false, has_flops = false;
  double bandwidth_gbs = 0;
  double tflops = 0;         // the peak the roofline compares FLOP/s with (FP16 tensor when known)
  std::string device_name;   // the device the rates are for ("" when no device is known)
  std::string source;        // "override", "table: NVIDIA H200 (datasheet ...)", "trace" or why unknown
};

// Rates for the busiest device of the trace (most kernels + memcpys + memsets; ties: lowest id; a
// trace without GPU work but with exactly one device uses that one): per field, overrides first,
// then the table by device name, then the trace's own peak bandwidth (nsys TARGET_INFO_GPU).
// `source` is one origin when both fields share it ("override", "table: NVIDIA H200 (...)",
// "trace"), else "bandwidth: ...; FLOP/s: ...", and says why a field is unknown and which option
// sets it.
PeakRates ResolvePeakRates(const Trace& trace, const PeakOverride& override_rates);

}  // namespace tg
