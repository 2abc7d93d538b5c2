// NvmlSampler against a fake libnvidia-ml (tests/tools/fake_nvml.cpp) loaded with dlopen as the
// real one is: every reading of every GPU, a reading a GPU refuses left at -1, and a machine
// without NVML samples nothing and says why.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "collector/src/nvml_sampler.h"

namespace tg {

using internal::NvmlSampler;
using internal::NvmlSamplerOptions;
namespace {

TEST(NvmlSamplerTest, SamplesEveryGpuEachInterval) {
  NvmlSamplerOptions o;
  o.library = TRACEGATE_FAKE_NVML;
  o.interval_ms = 10;
  auto sampler = NvmlSampler::Start(o);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  sampler->Stop();
  sampler->Stop();  // idempotent
  const SampleTable& s = sampler->Samples();
  EXPECT_EQ(sampler->Note(), "2 GPUs every 10 ms (0: Fake H200, 1: Fake H100)");
  // One tick at start, about one per 10 ms, one at Stop; each tick reads both GPUs.
  ASSERT_GE(s.size(), 4u);
  ASSERT_EQ(s.size() % 2, 0u);
  for (size_t i = 0; i < s.size(); ++i) {
    int32_t gpu = static_cast<int32_t>(i % 2);
    EXPECT_EQ(s.device[i], gpu);
    EXPECT_EQ(s.temperature_c[i], 40.0 + gpu);
    EXPECT_EQ(s.sm_clock_mhz[i], 1980.0);
    EXPECT_EQ(s.mem_clock_mhz[i], 2619.0);
    EXPECT_EQ(s.memory_used_mb[i], 1024.0 + gpu);      // (1 GiB + gpu MiB) / 1 MiB
    EXPECT_EQ(s.power_w[i], gpu == 0 ? 350.5 : -1.0);  // 350500 mW; GPU 1: not supported
    if (i >= 2) {
      EXPECT_GE(s.time[i], s.time[i - 2]);
    }
  }
  EXPECT_EQ(s.time[0], s.time[1]);  // one timestamp per tick
}

// Starts and stops a sampler on `library`, which must give no samples; returns its note.
std::string NoteWithoutSamples(const std::string& library) {
  NvmlSamplerOptions o;
  o.library = library;
  auto sampler = NvmlSampler::Start(o);
  sampler->Stop();
  EXPECT_EQ(sampler->Samples().size(), 0u);
  return sampler->Note();
}

TEST(NvmlSamplerTest, WithoutNvmlSamplesNothingAndSaysWhy) {
  EXPECT_EQ(NoteWithoutSamples("libtracegate-no-such-nvml.so.1"),
            "not sampled: cannot load libtracegate-no-such-nvml.so.1 (no NVIDIA driver on this machine?)");
}

TEST(NvmlSamplerTest, ALibraryWithoutNvmlSymbolsIsRefused) {
  EXPECT_EQ(NoteWithoutSamples("libm.so.6"), "not sampled: libm.so.6 has no nvmlInit_v2 (NVML too old)");
}

}  // namespace
}  // namespace tg
