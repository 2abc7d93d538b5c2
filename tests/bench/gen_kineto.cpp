// Deterministic Kineto trace generator (see gen_kineto.h).
#include "gen_kineto.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

namespace {

const char* kKernelNames[] = {
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "ampere_sgemm_128x64_tn",
    "void cudnn::bn_fw_inf_1C11_kernel_NCHW<float, float, true, 1>(float, float, cudnnTensorStruct, "
    "float const*, cudnnTensorStruct, float*, float const*, float const*, float const*, float const*, float)",
    "void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10, false>"
    "(float*, float const*, int, int, int)",
    "sm80_xmma_fprop_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32",
    "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::"
    "(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&)::{lambda()#1}> >(int)",
    "_ZN7cutlass6KernelINS_4gemm6kernel4GemmINS1_11threadblock12MmaPipelinedEEEEEvNT_6ParamsE",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, "
    "float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps"
    "<float, float, float, float>, unsigned int, float, 4>)",
};
const char* kOps[] = {"aten::linear", "aten::conv2d", "aten::add", "aten::relu", "aten::softmax",
                      "aten::batch_norm", "aten::clamp", "aten::mean"};

struct Gen {
  FILE* out;
  std::mt19937_64 rng;
  int streams;
  bool first = true;
  long long events = 0;
  const long long pid = 4242, tid = 4243;

  void Emit(const char* text) {
    std::fputs(first ? "\n  " : ",\n  ", out);
    std::fputs(text, out);
    first = false;
    ++events;
  }
  // Microseconds with three decimals from integer nanoseconds, exact.
  static std::string Us(int64_t ns) {
    char b[40];
    std::snprintf(b, sizeof b, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
    return b;
  }
};

}  // namespace

namespace tg::bench {

long long WriteKinetoTrace(const char* path, long long target, int streams, unsigned long long seed) {
  FILE* out = std::fopen(path, "w");
  if (!out) return -1;
  std::setvbuf(out, nullptr, _IOFBF, 1 << 20);
  Gen g{out, std::mt19937_64(seed), streams};
  std::fputs("{\n \"schemaVersion\": 1,\n \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H200\", "
             "\"totalGlobalMem\": 150121545728, \"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132}],\n"
             " \"traceEvents\": [", out);
  char buf[4096];
  int64_t host = 1'000'000'000;  // ns since base
  int64_t gpu_free[64] = {0};
  long long corr = 1, step = 0;
  while (g.events < target) {
    int64_t step_start = host;
    int64_t step_len_guess = 0;
    std::string step_name = "ProfilerStep#" + std::to_string(step++);
    // 40 ops per step, each: cpu_op, runtime launch, flow s/f, GPU op.
    std::string body;
    for (int op = 0; op < 40 && g.events < target; ++op) {
      int64_t op_start = host + 2000 + static_cast<int64_t>(g.rng() % 3000);
      int64_t launch = op_start + 1500;
      int64_t launch_dur = 3000 + static_cast<int64_t>(g.rng() % 4000);
      int s = 7 + static_cast<int>(g.rng() % static_cast<unsigned>(streams));
      int64_t& free_at = gpu_free[s % 64];
      int64_t gstart = std::max(launch + 5000, free_at + 500 + static_cast<int64_t>(g.rng() % 2000));
      int kind = static_cast<int>(g.rng() % 20);  // 0: H2D copy, 1: D2H copy, 2: memset, else kernel
      int64_t gdur = kind < 2 ? 8000 + static_cast<int64_t>(g.rng() % 50000) : 2000 + static_cast<int64_t>(g.rng() % 200000);
      free_at = gstart + gdur;
      const char* opname = kOps[g.rng() % 8];
      std::snprintf(buf, sizeof buf,
                    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": %lld, \"tid\": %lld, "
                    "\"ts\": %s, \"dur\": %s, \"args\": {\"External id\": %lld}}",
                    opname, g.pid, g.tid, Gen::Us(op_start).c_str(), Gen::Us(launch_dur + 3000).c_str(), corr);
      g.Emit(buf);
      const char* api = kind < 2 ? "cudaMemcpyAsync" : kind == 2 ? "cudaMemsetAsync" : "cudaLaunchKernel";
      std::snprintf(buf, sizeof buf,
                    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": %lld, \"tid\": %lld, "
                    "\"ts\": %s, \"dur\": %s, \"args\": {\"External id\": %lld, \"cbid\": 211, \"correlation\": %lld}}",
                    api, g.pid, g.tid, Gen::Us(launch).c_str(), Gen::Us(launch_dur).c_str(), corr, corr);
      g.Emit(buf);
      std::snprintf(buf, sizeof buf,
                    "{\"ph\": \"s\", \"id\": %lld, \"pid\": %lld, \"tid\": %lld, \"ts\": %s, \"cat\": \"ac2g\", \"name\": \"ac2g\"}",
                    corr, g.pid, g.tid, Gen::Us(launch).c_str());
      g.Emit(buf);
      if (kind < 2) {
        long long bytes = 4096LL << (g.rng() % 12);
        std::snprintf(buf, sizeof buf,
                      "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy %s\", \"pid\": 0, \"tid\": %d, "
                      "\"ts\": %s, \"dur\": %s, \"args\": {\"External id\": %lld, \"device\": 0, \"context\": 1, "
                      "\"stream\": %d, \"correlation\": %lld, \"bytes\": %lld, \"memory bandwidth (GB/s)\": %.3f}}",
                      kind == 0 ? "HtoD (Pinned -> Device)" : "DtoH (Device -> Pageable)", s,
                      Gen::Us(gstart).c_str(), Gen::Us(gdur).c_str(), corr, s, corr, bytes,
                      static_cast<double>(bytes) / static_cast<double>(gdur));
      } else if (kind == 2) {
        std::snprintf(buf, sizeof buf,
                      "{\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"pid\": 0, \"tid\": %d, "
                      "\"ts\": %s, \"dur\": %s, \"args\": {\"External id\": %lld, \"device\": 0, \"context\": 1, "
                      "\"stream\": %d, \"correlation\": %lld, \"bytes\": 65536}}",
                      s, Gen::Us(gstart).c_str(), Gen::Us(gdur).c_str(), corr, s, corr);
      } else {
        unsigned k = static_cast<unsigned>(g.rng() % 8);
        std::snprintf(buf, sizeof buf,
                      "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, "
                      "\"ts\": %s, \"dur\": %s, \"args\": {\"External id\": %lld, \"queued\": 0, \"device\": 0, "
                      "\"context\": 1, \"stream\": %d, \"correlation\": %lld, \"registers per thread\": %u, "
                      "\"shared memory\": %u, \"grid\": [%u, 1, 1], \"block\": [256, 1, 1], "
                      "\"est. achieved occupancy %%\": 50}}",
                      kKernelNames[k], s, Gen::Us(gstart).c_str(), Gen::Us(gdur).c_str(), corr, s, corr,
                      32 + k * 8, k * 4096, 108 * (1 + k));
      }
      g.Emit(buf);
      std::snprintf(buf, sizeof buf,
                    "{\"ph\": \"f\", \"id\": %lld, \"pid\": 0, \"tid\": %d, \"ts\": %s, \"cat\": \"ac2g\", "
                    "\"name\": \"ac2g\", \"bp\": \"e\"}",
                    corr, s, Gen::Us(gstart).c_str());
      g.Emit(buf);
      ++corr;
      host = launch + launch_dur;
      step_len_guess = host - step_start;
    }
    // The step ends as a training or serving step does: the host waits for the GPU (loss.item(),
    // a D2H copy of the output, an explicit synchronize), so the GPU never falls more than a step
    // behind and each step's span is its real latency.
    int64_t gpu_done = 0;
    for (int s = 7; s < 7 + streams; ++s) gpu_done = std::max(gpu_done, gpu_free[s % 64]);
    const int64_t sync_start = host + 1000;
    const int64_t sync_end = std::max(sync_start + 2000, gpu_done + 1000);
    std::snprintf(buf, sizeof buf,
                  "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaDeviceSynchronize\", \"pid\": %lld, "
                  "\"tid\": %lld, \"ts\": %s, \"dur\": %s, \"args\": {\"External id\": %lld, \"cbid\": 165, "
                  "\"correlation\": %lld}}",
                  g.pid, g.tid, Gen::Us(sync_start).c_str(), Gen::Us(sync_end - sync_start).c_str(), corr, corr);
    g.Emit(buf);
    ++corr;
    host = sync_end;
    step_len_guess = host - step_start;
    host += 20000 + static_cast<int64_t>(g.rng() % 100000);  // host-side gap between steps
    std::snprintf(buf, sizeof buf,
                  "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"%s\", \"pid\": %lld, \"tid\": %lld, "
                  "\"ts\": %s, \"dur\": %s, \"args\": {\"External id\": %lld}}",
                  step_name.c_str(), g.pid, g.tid, Gen::Us(step_start).c_str(),
                  Gen::Us(step_len_guess + 10000).c_str(), corr++);
    g.Emit(buf);
  }
  std::fprintf(out, "\n ],\n \"traceName\": \"tracegate-gen-kineto seed %llu\",\n"
                    " \"baseTimeNanoseconds\": 1700000000000000000\n}\n", static_cast<unsigned long long>(seed));
  if (std::fclose(out) != 0) return -1;
  return g.events;
}

}  // namespace tg::bench
