// GPU telemetry for `tracegate record`: NVML loaded at run time with dlopen (no build-time NVML;
// a machine without the NVIDIA driver records without samples and the trace says why). One
// thread reads every GPU each interval: temperature, SM and memory clocks, memory used, power.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tracegate/analyzer/model.h"

namespace tg::internal {

struct NvmlSamplerOptions {
  std::string library = "libnvidia-ml.so.1";  // dlopen name or path (tests load a fake)
  int64_t interval_ms = 100;
};

class NvmlSampler {
 public:
  // Loads NVML and starts sampling. Never fails: without NVML (or with no GPU) it samples
  // nothing and Note() says why.
  static std::unique_ptr<NvmlSampler> Start(const NvmlSamplerOptions& options);
  NvmlSampler(const NvmlSampler&) = delete;
  NvmlSampler& operator=(const NvmlSampler&) = delete;
  ~NvmlSampler();  // Stop()

  // Takes one last sample, stops the thread and shuts NVML down. Idempotent.
  void Stop();

  // After Stop: the samples (time on RecordClockNs, device = NVML index; a reading NVML refused
  // is -1), and one line for the trace's metadata: "N GPUs every M ms (names)" or
  // "not sampled: <why>".
  const SampleTable& Samples() const;
  const std::string& Note() const;
  // The UUID of each GPU by NVML index ("GPU-..."; "" where NVML does not say), known from Start.
  const std::vector<std::string>& Uuids() const;

 private:
  struct Impl;
  explicit NvmlSampler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tg::internal
