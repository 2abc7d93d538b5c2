// Deterministic Kineto trace generator (see gen_kineto.h).
#include "gen_kineto.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

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
  // Where the generation stands: host time (ns since base), each stream's next free instant,
  // correlation ids, steps.
  int64_t host = 1'000'000'000;
  int64_t gpu_free[64] = {0};
  long long corr = 1, step = 0;

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

namespace {

void WriteHead(Gen& g, int rank, int world) {
  std::fputs("{\n \"schemaVersion\": 1,\n \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H200\", "
             "\"totalGlobalMem\": 150121545728, \"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132}],\n", g.out);
  if (world > 0)
    std::fprintf(g.out, " \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": %d},\n", rank, world);
  std::fputs(" \"traceEvents\": [", g.out);
}

// One runtime call with its correlation id, its GPU op and the ac2g flow pair between them.
void EmitLaunch(Gen& g, const char* api, int64_t launch, int64_t launch_dur, int stream, int64_t gpu_start,
                const char* gpu_op) {
  char buf[4096];
  std::snprintf(buf, sizeof buf,
                "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": %lld, \"tid\": %lld, "
                "\"ts\": %s, \"dur\": %s, \"args\": {\"External id\": %lld, \"cbid\": 211, \"correlation\": %lld}}",
                api, g.pid, g.tid, Gen::Us(launch).c_str(), Gen::Us(launch_dur).c_str(), g.corr, g.corr);
  g.Emit(buf);
  std::snprintf(buf, sizeof buf,
                "{\"ph\": \"s\", \"id\": %lld, \"pid\": %lld, \"tid\": %lld, \"ts\": %s, \"cat\": \"ac2g\", \"name\": \"ac2g\"}",
                g.corr, g.pid, g.tid, Gen::Us(launch).c_str());
  g.Emit(buf);
  g.Emit(gpu_op);
  std::snprintf(buf, sizeof buf,
                "{\"ph\": \"f\", \"id\": %lld, \"pid\": 0, \"tid\": %d, \"ts\": %s, \"cat\": \"ac2g\", "
                "\"name\": \"ac2g\", \"bp\": \"e\"}",
                g.corr, stream, Gen::Us(gpu_start).c_str());
  g.Emit(buf);
  ++g.corr;
}

// A step's 40 ops (fewer when the target is reached): each a cpu_op range, its runtime launch and
// GPU work spread over the streams. Returns when the step's GPU work is done.
int64_t EmitOps(Gen& g, long long target) {
  char buf[4096];
  for (int op = 0; op < 40 && g.events < target; ++op) {
    int64_t op_start = g.host + 2000 + static_cast<int64_t>(g.rng() % 3000);
    int64_t launch = op_start + 1500;
    int64_t launch_dur = 3000 + static_cast<int64_t>(g.rng() % 4000);
    int s = 7 + static_cast<int>(g.rng() % static_cast<unsigned>(g.streams));
    int64_t& free_at = g.gpu_free[s % 64];
    int64_t gstart = std::max(launch + 5000, free_at + 500 + static_cast<int64_t>(g.rng() % 2000));
    int kind = static_cast<int>(g.rng() % 20);  // 0: H2D copy, 1: D2H copy, 2: memset, else kernel
    int64_t gdur = kind < 2 ? 8000 + static_cast<int64_t>(g.rng() % 50000) : 2000 + static_cast<int64_t>(g.rng() % 200000);
    free_at = gstart + gdur;
    const char* opname = kOps[g.rng() % 8];
    std::snprintf(buf, sizeof buf,
                  "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": %lld, \"tid\": %lld, "
                  "\"ts\": %s, \"dur\": %s, \"args\": {\"External id\": %lld}}",
                  opname, g.pid, g.tid, Gen::Us(op_start).c_str(), Gen::Us(launch_dur + 3000).c_str(), g.corr);
    g.Emit(buf);
    const char* api = kind < 2 ? "cudaMemcpyAsync" : kind == 2 ? "cudaMemsetAsync" : "cudaLaunchKernel";
    if (kind < 2) {
      long long bytes = 4096LL << (g.rng() % 12);
      std::snprintf(buf, sizeof buf,
                    "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy %s\", \"pid\": 0, \"tid\": %d, "
                    "\"ts\": %s, \"dur\": %s, \"args\": {\"External id\": %lld, \"device\": 0, \"context\": 1, "
                    "\"stream\": %d, \"correlation\": %lld, \"bytes\": %lld, \"memory bandwidth (GB/s)\": %.3f}}",
                    kind == 0 ? "HtoD (Pinned -> Device)" : "DtoH (Device -> Pageable)", s,
                    Gen::Us(gstart).c_str(), Gen::Us(gdur).c_str(), g.corr, s, g.corr, bytes,
                    static_cast<double>(bytes) / static_cast<double>(gdur));
    } else if (kind == 2) {
      std::snprintf(buf, sizeof buf,
                    "{\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"pid\": 0, \"tid\": %d, "
                    "\"ts\": %s, \"dur\": %s, \"args\": {\"External id\": %lld, \"device\": 0, \"context\": 1, "
                    "\"stream\": %d, \"correlation\": %lld, \"bytes\": 65536}}",
                    s, Gen::Us(gstart).c_str(), Gen::Us(gdur).c_str(), g.corr, s, g.corr);
    } else {
      unsigned k = static_cast<unsigned>(g.rng() % 8);
      std::snprintf(buf, sizeof buf,
                    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, "
                    "\"ts\": %s, \"dur\": %s, \"args\": {\"External id\": %lld, \"queued\": 0, \"device\": 0, "
                    "\"context\": 1, \"stream\": %d, \"correlation\": %lld, \"registers per thread\": %u, "
                    "\"shared memory\": %u, \"grid\": [%u, 1, 1], \"block\": [256, 1, 1], "
                    "\"est. achieved occupancy %%\": 50}}",
                    kKernelNames[k], s, Gen::Us(gstart).c_str(), Gen::Us(gdur).c_str(), g.corr, s, g.corr,
                    32 + k * 8, k * 4096, 108 * (1 + k));
    }
    EmitLaunch(g, api, launch, launch_dur, s, gstart, buf);
    g.host = launch + launch_dur;
  }
  int64_t gpu_done = 0;
  for (int s = 7; s < 7 + g.streams; ++s) gpu_done = std::max(gpu_done, g.gpu_free[s % 64]);
  return gpu_done;
}

// An NCCL all-reduce on the communication stream from `start` (this rank arrives) to `end` (the
// last rank has arrived and the reduction is done), with the metadata PyTorch writes for it.
void EmitAllReduce(Gen& g, int world, int64_t start, int64_t end) {
  constexpr int kCommStream = 40;
  char buf[4096];
  std::string ranks = "[";
  for (int r = 0; r < world; ++r) ranks += (r ? ", " : "") + std::to_string(r);
  ranks += "]";
  std::snprintf(buf, sizeof buf,
                "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, "
                "unsigned long, ncclWork*)\", \"pid\": 0, \"tid\": %d, \"ts\": %s, \"dur\": %s, \"args\": "
                "{\"External id\": %lld, \"device\": 0, \"context\": 1, \"stream\": %d, \"correlation\": %lld, "
                "\"Collective name\": \"allreduce\", \"In msg nelems\": 1048576, \"Out msg nelems\": 1048576, "
                "\"Group size\": %d, \"dtype\": \"Float\", \"Process Group Name\": \"0\", "
                "\"Process Group Description\": \"default_pg\", \"Process Group Ranks\": \"%s\", \"Seq\": %lld}}",
                kCommStream, Gen::Us(start).c_str(), Gen::Us(end - start).c_str(), g.corr, kCommStream, g.corr, world,
                ranks.c_str(), g.step);
  const int64_t launch = g.host + 1000;
  EmitLaunch(g, "cudaLaunchKernel", launch, 4000, kCommStream, start, buf);
  g.host = launch + 4000;
  g.gpu_free[kCommStream] = end;
}

// The step ends as a training or serving step does: the host waits for the GPU (loss.item(), a
// D2H copy of the output, an explicit synchronize), so the GPU never falls more than a step behind
// and each step's span is its real latency. Then the ProfilerStep range and a host-side gap.
void EndStep(Gen& g, int64_t step_start, int64_t gpu_done) {
  char buf[1024];
  const int64_t sync_start = g.host + 1000;
  const int64_t sync_end = std::max(sync_start + 2000, gpu_done + 1000);
  std::snprintf(buf, sizeof buf,
                "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaDeviceSynchronize\", \"pid\": %lld, "
                "\"tid\": %lld, \"ts\": %s, \"dur\": %s, \"args\": {\"External id\": %lld, \"cbid\": 165, "
                "\"correlation\": %lld}}",
                g.pid, g.tid, Gen::Us(sync_start).c_str(), Gen::Us(sync_end - sync_start).c_str(), g.corr, g.corr);
  g.Emit(buf);
  ++g.corr;
  g.host = sync_end;
  const int64_t step_len = g.host - step_start;
  g.host += 20000 + static_cast<int64_t>(g.rng() % 100000);
  std::snprintf(buf, sizeof buf,
                "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%lld\", \"pid\": %lld, "
                "\"tid\": %lld, \"ts\": %s, \"dur\": %s, \"args\": {\"External id\": %lld}}",
                g.step, g.pid, g.tid, Gen::Us(step_start).c_str(), Gen::Us(step_len + 10000).c_str(), g.corr++);
  g.Emit(buf);
  ++g.step;
}

bool Finish(Gen& g, unsigned long long seed) {
  std::fprintf(g.out, "\n ],\n \"traceName\": \"tracegate-gen-kineto seed %llu\",\n"
                      " \"baseTimeNanoseconds\": 1700000000000000000\n}\n", seed);
  return std::fclose(g.out) == 0;
}

}  // namespace

long long WriteKinetoTrace(const char* path, long long target, int streams, unsigned long long seed) {
  FILE* out = std::fopen(path, "w");
  if (!out) return -1;
  std::setvbuf(out, nullptr, _IOFBF, 1 << 20);
  Gen g{out, std::mt19937_64(seed), streams};
  WriteHead(g, 0, 0);
  while (g.events < target) {
    const int64_t step_start = g.host;
    EndStep(g, step_start, EmitOps(g, target));
  }
  return Finish(g, seed) ? g.events : -1;
}

long long WriteKinetoRanks(const std::string& dir, int world, long long target, int streams,
                           unsigned long long seed) {
  std::vector<Gen> ranks;
  ranks.reserve(static_cast<size_t>(world));
  bool ok = true;
  for (int r = 0; r < world; ++r) {
    const std::string path = dir + "/rank-" + std::to_string(r) + ".json";
    FILE* out = std::fopen(path.c_str(), "w");
    if (!out) { ok = false; break; }
    std::setvbuf(out, nullptr, _IOFBF, 1 << 20);
    ranks.push_back(Gen{out, std::mt19937_64(seed + static_cast<unsigned long long>(r)), streams});
    WriteHead(ranks.back(), r, world);
  }
  long long events = 0;
  // Every rank's step runs its own ops, then joins the all-reduce, which ends when the last rank
  // has arrived plus the transfer; the ranks wait there, then synchronise and start the next step
  // together (one true clock; the files are not skewed).
  constexpr int64_t kTransferNs = 300'000;
  while (ok && ranks[0].events < target) {
    std::vector<int64_t> starts, arrive;
    for (Gen& g : ranks) {
      starts.push_back(g.host);
      const int64_t done = EmitOps(g, target - 6);
      arrive.push_back(std::max(done, g.host + 6000));  // not before its launch (EmitAllReduce) ends
    }
    int64_t end = 0;
    for (int64_t a : arrive) end = std::max(end, a);
    end += kTransferNs;
    for (size_t r = 0; r < ranks.size(); ++r) {
      EmitAllReduce(ranks[r], world, arrive[r], end);
      EndStep(ranks[r], starts[r], end);
    }
    int64_t next = 0;  // the ranks leave the step together
    for (const Gen& g : ranks) next = std::max(next, g.host);
    for (Gen& g : ranks) g.host = next;
  }
  for (Gen& g : ranks) {
    events += g.events;
    ok = Finish(g, seed) && ok;
  }
  return ok ? events : -1;
}

}  // namespace tg::bench
