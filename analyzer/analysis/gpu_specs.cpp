// Peak rates of known GPUs. FP16 is the dense tensor-core rate: datasheets print the sparse rate
// (2:4 sparsity) beside it, which is twice the dense one; we quote both in the source string where
// the dense figure is derived. The rows whose source begins "tracegate specification" keep the
// figures of the project's original specification, which win over the datasheet (docs/RULES.md,
// "Roofline"); the report prints the source (peak.source), so it names where a reader finds them.
#include "tracegate/analyzer/gpu_specs.h"

#include <array>
#include <cctype>
#include <map>
#include <utility>

namespace tg {

namespace {

// Most specific first: a variant's entry precedes its family's ("h100 pcie" before "h100").
constexpr std::array<GpuSpec, 18> kGpus{{
    {"NVIDIA H200 NVL", "h200 nvl", 4800, 60, 835,
     "NVIDIA H200 Tensor Core GPU datasheet (NVL: 4.8 TB/s, FP32 60, FP16 tensor 1,671 sparse = 835 dense)"},
    {"NVIDIA H200", "h200", 4800, 67, 989,
     "NVIDIA H200 Tensor Core GPU datasheet (SXM: 4.8 TB/s, FP32 67, FP16 tensor 1,979 sparse = 989 dense)"},
    {"NVIDIA H100 PCIe", "h100 pcie", 2000, 51, 756,
     "NVIDIA H100 Tensor Core GPU datasheet (PCIe: 2 TB/s, FP32 51, FP16 tensor 1,513 sparse = 756 dense)"},
    {"NVIDIA H100 NVL", "h100 nvl", 3900, 60, 835,
     "NVIDIA H100 Tensor Core GPU datasheet (NVL: 3.9 TB/s, FP32 60, FP16 tensor 1,671 sparse = 835 dense)"},
    {"NVIDIA H100 SXM", "h100", 3350, 67, 989,
     "NVIDIA H100 Tensor Core GPU datasheet (SXM: 3.35 TB/s, FP32 67, FP16 tensor 1,979 sparse = 989 dense)"},
    {"NVIDIA A100 80GB PCIe", "a100 80gb pcie", 1935, 19.5, 312,
     "NVIDIA A100 Tensor Core GPU datasheet (80GB PCIe: 1,935 GB/s, FP32 19.5, FP16 tensor 312 dense)"},
    {"NVIDIA A100 40GB PCIe", "a100-pcie", 1555, 19.5, 312,
     "NVIDIA A100 Tensor Core GPU datasheet (40GB PCIe: 1,555 GB/s, FP32 19.5, FP16 tensor 312 dense)"},
    {"NVIDIA A100 40GB SXM4", "a100-sxm4-40gb", 1555, 19.5, 312,
     "NVIDIA A100 Tensor Core GPU datasheet (40GB SXM: 1,555 GB/s, FP32 19.5, FP16 tensor 312 dense)"},
    {"NVIDIA A100", "a100", 2039, 19.5, 312,
     "tracegate specification (docs/RULES.md, Roofline): 2039 GB/s, FP32 19.5, FP16 312 (= A100 80GB SXM datasheet)"},
    {"NVIDIA A10", "a10", 600, 31.2, 125,
     "NVIDIA A10 Tensor Core GPU datasheet (600 GB/s, FP32 31.2, FP16 tensor 125 dense / 250 sparse)"},
    {"Tesla V100 PCIe", "v100-pcie", 900, 14, 112,
     "NVIDIA Tesla V100 datasheet (PCIe: 900 GB/s, FP32 14, tensor 112)"},
    {"Tesla V100", "v100", 900, 15.7, 125, "tracegate specification (docs/RULES.md, Roofline): 900 GB/s, FP32 15.7, FP16 125 (= V100 SXM2 datasheet)"},
    {"NVIDIA RTX A6000", "a6000", 768, 38, 150,
     "tracegate specification (docs/RULES.md, Roofline): 768 GB/s, FP32 38, FP16 150 (RTX A6000 datasheet: 38.7, 154.8 dense tensor)"},
    {"NVIDIA GeForce RTX 3090 Ti", "3090 ti", 1008, 40, 160, "tracegate specification (docs/RULES.md, Roofline): 1008 GB/s, FP32 40, FP16 160"},
    {"NVIDIA L40S", "l40s", 864, 91.6, 362,
     "NVIDIA L40S datasheet (864 GB/s, FP32 91.6, FP16 tensor 362 dense / 733 sparse)"},
    {"NVIDIA L40", "l40", 864, 90.5, 181,
     "NVIDIA L40 datasheet (864 GB/s, FP32 90.5, FP16 tensor 181 dense / 362 sparse)"},
    {"NVIDIA L4", "l4", 300, 30.3, 121,
     "NVIDIA L4 Tensor Core GPU datasheet (300 GB/s, FP32 30.3, FP16 tensor 242 sparse = 121 dense)"},
    {"NVIDIA T4", "t4", 320, 8.1, 65,
     "NVIDIA T4 Tensor Core GPU datasheet (320 GB/s, FP32 8.1, mixed FP16/FP32 65)"},
}};

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// `match` occurs in `name` as a token (see FindGpuSpec).
bool ContainsToken(const std::string& name, std::string_view match) {
  for (size_t at = name.find(match); at != std::string::npos; at = name.find(match, at + 1)) {
    size_t after = at + match.size();
    if ((at == 0 || !IsAlnum(name[at - 1])) && (after == name.size() || !IsDigit(name[after]))) return true;
  }
  return false;
}

// The device with the most GPU work; -1 when there is none.
int32_t BusiestDevice(const Trace& trace) {
  std::map<int32_t, uint64_t> work;
  for (int32_t d : trace.kernels.device) work[d]++;
  for (int32_t d : trace.memcpys.device) work[d]++;
  for (int32_t d : trace.memsets.device) work[d]++;
  int32_t best = -1;
  uint64_t most = 0;
  for (const auto& [device, n] : work) {  // ascending ids: ties keep the lowest
    if (n > most) {
      best = device;
      most = n;
    }
  }
  if (work.empty() && trace.devices.size() == 1) best = trace.devices[0].id;
  return best;
}

// The first known (> 0) of the override, the table's and the trace's value; returns where it came
// from, "" when none is known.
std::string Pick(double override_value, double table_value, const std::string& table, double trace_value,
                 double* out) {
  const std::pair<double, std::string> in_order[] = {
      {override_value, "override"}, {table_value, table}, {trace_value, "trace"}};
  for (const auto& [value, from] : in_order) {
    if (value > 0) {
      *out = value;
      return from;
    }
  }
  return "";
}

}  // namespace

std::span<const GpuSpec> KnownGpus() { return kGpus; }

const GpuSpec* FindGpuSpec(std::string_view device_name) {
  std::string lower(device_name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const GpuSpec& g : kGpus) {
    if (ContainsToken(lower, g.match)) return &g;
  }
  return nullptr;
}

PeakRates ResolvePeakRates(const Trace& trace, const PeakOverride& override_rates) {
  PeakRates r;
  const Device* traced = trace.FindDevice(BusiestDevice(trace));
  if (traced) r.device_name = traced->name;
  const GpuSpec* spec = r.device_name.empty() ? nullptr : FindGpuSpec(r.device_name);
  std::string table = spec ? std::string("table: ") + spec->name + " (" + spec->source + ")" : "";
  std::string unknown = r.device_name.empty() ? "no device name in the trace"
                                              : "'" + r.device_name + "' is not in the GPU table";

  std::string bw_source = Pick(override_rates.bandwidth_gbs, spec ? spec->bandwidth_gbs : 0, table,
                               traced ? traced->peak_bandwidth_gbs : 0, &r.bandwidth_gbs);
  std::string flops_source = Pick(override_rates.tflops, spec ? spec->fp16_tflops : 0, table, 0, &r.tflops);
  r.has_bandwidth = !bw_source.empty();
  r.has_flops = !flops_source.empty();

  if (!r.has_bandwidth && !r.has_flops) {
    r.source = unknown + "; pass --peak-gbs/--peak-tflops";
  } else if (bw_source == flops_source) {
    r.source = bw_source;
  } else {
    r.source = "bandwidth: " + (r.has_bandwidth ? bw_source : "unknown (" + unknown + "; pass --peak-gbs)") +
               "; FLOP/s: " + (r.has_flops ? flops_source : "unknown (" + unknown + "; pass --peak-tflops)");
  }
  return r;
}

}  // namespace tg
