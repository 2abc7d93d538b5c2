// The trace shapes of the benchmark matrix (issue 29; see gen_kineto.h, WriteKinetoShape).
//
// Every shape is written as PyTorch's profiler writes a trace: first the host ranges (user
// annotations and cpu_op events, in time order), then the Python frames (python_function, in
// pre-order), then the runtime calls, GPU work and flow events. The generation runs once per
// section with the same seed, so each pass takes the same decisions and writes only its section.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gen_kineto.h"

namespace tg::bench {

namespace {

enum Section { kHost = 0, kPython = 1, kDevice = 2, kSections = 3 };

constexpr long long kPid = 4242, kTid = 4243;

// Kernel names of a dense training step: mostly short vendor library names, some PyTorch templates.
const char* kDenseKernels[] = {
    "ampere_sgemm_128x64_tn",
    "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "void cutlass::Kernel<cutlass_80_tensorop_f16_s16816gemm_relu_f16_64x64_32x6_nn_align8>(Params)",
    "triton_poi_fused_add_mul_0",
    "triton_red_fused_native_layer_norm_1",
    "void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10, false>"
    "(float*, float const*, int, int, int)",
    "void at::native::index_elementwise_kernel<128, 4>(long)",
};

// What a vLLM decode step's CUDA graph replays: per layer, these kernels.
const char* kServingKernels[] = {
    "void vllm::rms_norm_kernel<c10::BFloat16, 8, 4>(c10::BFloat16*, c10::BFloat16 const*, long, "
    "c10::BFloat16 const*, float, int, int)",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, "
    "c10::BFloat16 const*, int, long, long, int, int, int)",
    "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>"
    "(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, __nv_bfloat16*, long const*, long, long, "
    "long, long, int, int, int, float const*, float const*)",
    "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, "
    "cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, false, false, false, "
    "false, true, true, false, false>(flash::Flash_fwd_params)",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "void vllm::act_and_mul_kernel<c10::BFloat16, &(c10::BFloat16 vllm::silu_kernel<c10::BFloat16>"
    "(c10::BFloat16 const&)), true>(c10::BFloat16*, c10::BFloat16 const*, int)",
    "triton_poi_fused_add_0",
};

const char* kPyModules[] = {
    "transformers/models/timesformer/modeling_timesformer.py", "torch/nn/modules/module.py",
    "transformers/pipelines/base.py", "torch/nn/modules/linear.py", "torch/nn/functional.py",
    "transformers/modeling_utils.py", "torch/utils/_contextlib.py", "torch/nn/modules/normalization.py",
};
const char* kPyFunctions[] = {"forward", "_call_impl", "_wrapped_call_impl", "__call__", "run_single",
                              "decorate_context", "layer_norm", "linear", "_conv_forward", "apply_chunking"};
const char* kPyBuiltins[] = {"<built-in function isinstance>", "<built-in method get of dict object at 0x7f6078eca900>",
                             "<built-in function len>", "<built-in method size of Tensor object at 0x7f5b0c2d1e40>",
                             "<built-in function getattr>", "<built-in method dim of Tensor object at 0x7f5b0c2d1e40>"};
const char* kHostOps[] = {"aten::linear", "aten::layer_norm", "aten::add", "aten::gelu", "aten::softmax",
                          "aten::matmul", "aten::copy_", "aten::mul"};

struct Frame {
  int64_t start = 0, end = -1;
  long long id = 0, parent = 0;  // parent 0: none (null)
  int depth = 0;
  const char* module = nullptr;
  const char* function = nullptr;  // null: a built-in, named by `module`
  int line = 0;
};

struct Writer {
  Writer(FILE* o, int p, unsigned long long seed) : out(o), pass(p), rng(seed) {}
  FILE* out;
  int pass = 0;
  std::mt19937_64 rng;
  bool first = true;
  long long events = 0;                       // every section's events (the pass writes its own)
  int64_t host = 1'000'000'000;               // ns since baseTimeNanoseconds
  int64_t gpu_free[64] = {0};
  long long corr = 1, ext = 1, step = 0, py_id = 0, ev_idx = 0;
  std::vector<Frame> frames;                  // this step's Python frames, in the order they opened
  std::vector<size_t> open;                   // the open frames' indexes into `frames`

  // Counts the event; writes it (printf-style) when it belongs to this pass's section.
  void Emit(int section, const char* fmt, ...) __attribute__((format(printf, 3, 4))) {
    ++events;
    if (section != pass) return;
    std::fputs(first ? "\n  " : ",\n  ", out);
    first = false;
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(out, fmt, ap);
    va_end(ap);
  }
  static std::string Us(int64_t ns) {
    char b[40];
    std::snprintf(b, sizeof b, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
    return b;
  }
  int64_t Rand(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)); }
  // `base` with a uniform relative jitter of +-`percent`.
  int64_t Jitter(int64_t base, int percent) {
    const int64_t span = base * percent / 100;
    return base - span + static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * span + 1));
  }

  // A runtime call (its correlation id), the GPU op (kernel / memcpy) and, with `flows`, the ac2g pair.
  void Launch(const char* api, int64_t at, int64_t dur, long long external, bool flows) {
    Emit(kDevice,
         "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": %lld, \"tid\": %lld, \"ts\": %s, "
         "\"dur\": %s, \"args\": {\"External id\": %lld, \"cbid\": %d, \"correlation\": %lld}}",
         api, kPid, kTid, Us(at).c_str(), Us(dur).c_str(), external,
         std::strcmp(api, "cudaLaunchKernel") == 0 ? 211 : std::strcmp(api, "cudaGraphLaunch") == 0 ? 311 : 41, corr);
    if (flows)
      Emit(kDevice, "{\"ph\": \"s\", \"id\": %lld, \"pid\": %lld, \"tid\": %lld, \"ts\": %s, \"cat\": \"ac2g\", \"name\": \"ac2g\"}",
           corr, kPid, kTid, Us(at).c_str());
  }
  void Kernel(const char* name, int stream, int64_t start, int64_t dur, long long external, bool flow, int grid) {
    Emit(kDevice,
         "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %d, \"ts\": %s, \"dur\": %s, "
         "\"args\": {\"External id\": %lld, \"device\": 0, \"stream\": %d, \"correlation\": %lld, "
         "\"grid\": [%d, 1, 1], \"block\": [256, 1, 1]}}",
         name, stream, Us(start).c_str(), Us(dur).c_str(), external, stream, corr, grid);
    if (flow)
      Emit(kDevice, "{\"ph\": \"f\", \"id\": %lld, \"pid\": 0, \"tid\": %d, \"ts\": %s, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}",
           corr, stream, Us(start).c_str());
  }
  void Memcpy(bool h2d, int stream, int64_t start, int64_t dur, long long external, long long bytes, bool flow) {
    Emit(kDevice,
         "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy %s\", \"pid\": 0, \"tid\": %d, \"ts\": %s, "
         "\"dur\": %s, \"args\": {\"External id\": %lld, \"device\": 0, \"context\": 1, \"stream\": %d, "
         "\"correlation\": %lld, \"bytes\": %lld, \"memory bandwidth (GB/s)\": %.3f}}",
         h2d ? "HtoD (Pinned -> Device)" : "DtoH (Device -> Pinned)", stream, Us(start).c_str(), Us(dur).c_str(),
         external, stream, corr, bytes, static_cast<double>(bytes) / static_cast<double>(dur));
    if (flow)
      Emit(kDevice, "{\"ph\": \"f\", \"id\": %lld, \"pid\": 0, \"tid\": %d, \"ts\": %s, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}",
           corr, stream, Us(start).c_str());
  }
  void HostRange(const char* cat, const char* name, int64_t start, int64_t end, long long external) {
    Emit(kHost,
         "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %lld, \"tid\": %lld, \"ts\": %s, \"dur\": %s, "
         "\"args\": {\"External id\": %lld, \"Record function id\": 0, \"Ev Idx\": %lld}}",
         cat, name, kPid, kTid, Us(start).c_str(), Us(end - start).c_str(), external, ev_idx++);
  }
  // Waits on the host for the GPU (stream or device synchronize) from now to `gpu_done` + 1 us.
  void Sync(const char* api, int64_t gpu_done) {
    const int64_t start = host + 1000, end = std::max(start + 2000, gpu_done + 1000);
    Emit(kDevice,
         "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", \"pid\": %lld, \"tid\": %lld, \"ts\": %s, "
         "\"dur\": %s, \"args\": {\"cbid\": 165, \"correlation\": %lld}}",
         api, kPid, kTid, Us(start).c_str(), Us(end - start).c_str(), corr++);
    host = end;
  }
  int64_t GpuDone() const {
    int64_t done = 0;
    for (int64_t f : gpu_free) done = std::max(done, f);
    return done;
  }

  // Python frames: opens one under the innermost open frame at the current host time.
  void OpenFrame(const char* module, const char* function, int line) {
    host += 150;
    Frame f;
    f.start = host;
    f.id = ++py_id;
    f.parent = open.empty() ? 0 : frames[open.back()].id;
    f.depth = static_cast<int>(open.size());
    f.module = module;
    f.function = function;
    f.line = line;
    open.push_back(frames.size());
    frames.push_back(f);
  }
  void CloseFrames(size_t depth) {  // closes the open frames at `depth` and deeper
    while (open.size() > depth) {
      host += 100;
      frames[open.back()].end = host;
      open.pop_back();
    }
  }
  void BuiltinLeaf() {
    OpenFrame(kPyBuiltins[rng() % (sizeof kPyBuiltins / sizeof *kPyBuiltins)], nullptr, 0);
    host += Rand(100, 600);
    CloseFrames(open.size() - 1);
  }
  // Writes the closed frames from `from` on (pre-order: the order they opened) and, unless `keep`,
  // forgets them.
  void FlushFrames(size_t from, bool keep = false) {
    for (size_t i = from; i < frames.size(); ++i) {
      const Frame& f = frames[i];
      char name[256];
      if (f.function) std::snprintf(name, sizeof name, "%s(%d): %s", f.module, f.line, f.function);
      else std::snprintf(name, sizeof name, "%s", f.module);
      char parent[32] = "null";
      if (f.parent) std::snprintf(parent, sizeof parent, "%lld", f.parent);
      Emit(kPython,
           "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"%s\", \"pid\": %lld, \"tid\": %lld, \"ts\": %s, "
           "\"dur\": %s, \"args\": {\"Python parent id\": %s, \"Python id\": %lld, \"Ev Idx\": %lld}}",
           name, kPid, kTid, Us(f.start).c_str(), Us(f.end - f.start).c_str(), parent, f.id, ev_idx++);
    }
    if (!keep) frames.resize(from);
  }
};

void Head(FILE* out) {
  std::fputs("{\n \"schemaVersion\": 1,\n \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H200\", "
             "\"totalGlobalMem\": 150121545728, \"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132}],\n"
             " \"traceEvents\": [", out);
}

// Kernel-dense: steps of 200 kernels (each index its own name, stream and base duration, jittered by
// 2% from step to step) on 4 streams, an H2D copy before and a D2H copy after, a device synchronize.
void DenseStep(Writer& w, int streams) {
  constexpr int kKernels = 200;
  const int64_t step_start = w.host;
  const long long step_ext = w.ext++;
  auto copy = [&](bool h2d, int64_t not_before) {
    const int64_t at = w.host + 2000, dur = 6000;
    const long long ext = w.ext++;
    const int64_t start = std::max(at + 4000, std::max(not_before, w.gpu_free[7]) + 500);
    const int64_t len = w.Jitter(40000, 2);
    w.Launch("cudaMemcpyAsync", at, dur, ext, false);
    w.Memcpy(h2d, 7, start, len, ext, 4LL << 20, false);
    ++w.corr;
    w.gpu_free[7] = start + len;
    w.host = at + dur;
  };
  copy(true, 0);
  for (int k = 0; k < kKernels; ++k) {
    // Per-index properties from a fixed hash of k: the same kernel sequence every step.
    const uint64_t h = (static_cast<uint64_t>(k) + 1) * 0x9E3779B97F4A7C15ULL;
    const char* name = kDenseKernels[(h >> 20) % (sizeof kDenseKernels / sizeof *kDenseKernels)];
    const int stream = 7 + k % streams;
    const int64_t base = 5000 + static_cast<int64_t>((h >> 33) % 60000);  // 5-65 us
    const int64_t at = w.host + 1500, dur = w.Jitter(4000, 2);
    const long long ext = w.ext++;
    int64_t& free_at = w.gpu_free[stream];
    const int64_t start = std::max(at + 3000, free_at + 300);
    const int64_t len = w.Jitter(base, 2);
    w.Launch("cudaLaunchKernel", at, dur, ext, false);
    w.Kernel(name, stream, start, len, ext, false, 108 * static_cast<int>(1 + (h >> 40) % 8));
    ++w.corr;
    free_at = start + len;
    w.host = at + dur;
  }
  copy(false, w.GpuDone());
  w.Sync("cudaDeviceSynchronize", w.GpuDone());
  char name[64];
  std::snprintf(name, sizeof name, "ProfilerStep#%lld", w.step++);
  w.HostRange("user_annotation", name, step_start, w.host + 5000, step_ext);
  w.host += w.Jitter(50000, 2);
}

// Python-stack-heavy: ops under a python_function tree 20 deep. Four frames span the trace (the
// script), one each step; every op opens a new chain from a random depth (5-14) to 19, with a
// built-in leaf beside each new frame, then its cpu_op (External id), launch and kernel.
void StacksStep(Writer& w, int streams) {
  constexpr int kOps = 40;
  const int64_t step_start = w.host;
  const long long step_ext = w.ext++;
  const size_t step_frames = w.frames.size();
  w.OpenFrame("train.py", "train_step", 88);
  for (int op = 0; op < kOps; ++op) {
    const size_t from = 5 + w.rng() % 10;
    w.CloseFrames(std::min(from, w.open.size()));
    while (w.open.size() < 20) {
      const size_t d = w.open.size();
      w.OpenFrame(kPyModules[(d + w.rng() % 3) % 8], kPyFunctions[w.rng() % 10], static_cast<int>(40 + (d * 37) % 1500));
      w.BuiltinLeaf();
    }
    const int64_t op_start = w.host + 500;
    const int64_t at = op_start + 2000, dur = w.Rand(3000, 7000);
    const long long ext = w.ext++;
    const char* opname = kHostOps[w.rng() % 8];
    const int stream = 7 + static_cast<int>(w.rng() % static_cast<uint64_t>(streams));
    int64_t& free_at = w.gpu_free[stream];
    const int64_t start = std::max(at + 5000, free_at + 500 + w.Rand(0, 2000));
    const int64_t len = w.Rand(2000, 150000);
    w.Emit(kHost,
           "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": %lld, \"tid\": %lld, \"ts\": %s, \"dur\": %s, "
           "\"args\": {\"External id\": %lld, \"Record function id\": 0, \"Ev Idx\": %lld}}",
           opname, kPid, kTid, Writer::Us(op_start).c_str(), Writer::Us(at + dur + 1000 - op_start).c_str(), ext,
           w.ev_idx++);
    w.Launch("cudaLaunchKernel", at, dur, ext, true);
    w.Kernel(kDenseKernels[w.rng() % 8], stream, start, len, ext, true, 216);
    ++w.corr;
    free_at = start + len;
    w.host = at + dur + 2000;
  }
  w.CloseFrames(5);  // the step's frames, not the script's
  w.Sync("cudaDeviceSynchronize", w.GpuDone());
  w.CloseFrames(4);
  w.FlushFrames(step_frames);
  char name[64];
  std::snprintf(name, sizeof name, "ProfilerStep#%lld", w.step++);
  w.HostRange("user_annotation", name, step_start, w.host + 5000, step_ext);
  w.host += w.Rand(20000, 120000);
}

// Serving: vLLM engine steps. A decode step (15 of 16) prepares its inputs on the host (slices and
// copies), uploads them, replays the decode CUDA graph (one cudaGraphLaunch whose correlation id
// its 32 kernels carry, an ac2g flow to each) and waits for it; a prefill step launches
// the same kernels eagerly. Each step is annotated execute_<tokens>_context_<n>(...)_generation_<m>(...).
void ServingStep(Writer& w) {
  constexpr int kLayers = 4, kPerLayer = sizeof kServingKernels / sizeof *kServingKernels;
  const int64_t step_start = w.host;
  const long long step_ext = w.ext++;
  const bool prefill = w.step % 16 == 0;
  const int reqs = static_cast<int>(w.Rand(8, 64));
  const long long kv = 1000 + w.step * 7 % 60000;
  const int context = prefill ? static_cast<int>(w.Rand(1, 4)) : 0;
  const int ctx_tokens = context * 512;
  for (int i = 0; i < 4; ++i) {  // input preparation: a slice and an upload
    const int64_t s = w.host + 3000;
    const long long ext_slice = w.ext++;
    w.Emit(kHost,
           "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::slice\", \"pid\": %lld, \"tid\": %lld, \"ts\": %s, "
           "\"dur\": %s, \"args\": {\"External id\": %lld, \"Record function id\": 0, \"Ev Idx\": %lld}}",
           kPid, kTid, Writer::Us(s).c_str(), Writer::Us(2500).c_str(), ext_slice, w.ev_idx++);
    const int64_t c = s + 4000, cdur = 8000;
    const long long ext = w.ext++;
    w.HostRange("cpu_op", "aten::copy_", c, c + cdur + 2000, ext);
    w.Launch("cudaMemcpyAsync", c + 1000, cdur, ext, true);
    const int64_t start = std::max(c + 6000, w.gpu_free[7] + 300);
    w.Memcpy(true, 7, start, w.Jitter(3000, 2), ext, 256LL * reqs, true);
    ++w.corr;
    w.gpu_free[7] = start + 3000;
    w.host = c + cdur + 2000;
  }
  if (prefill) {  // eager: a launch per kernel
    for (int l = 0; l < kLayers; ++l)
      for (int k = 0; k < kPerLayer; ++k) {
        const int64_t at = w.host + 1500, dur = w.Rand(4000, 7000);
        const long long ext = w.ext++;
        const int64_t start = std::max(at + 3000, w.gpu_free[7] + 300);
        const int64_t len = w.Jitter(20000 + 15000 * k, 2) * (1 + context);
        w.Launch("cudaLaunchKernel", at, dur, ext, true);
        w.Kernel(kServingKernels[k], 7, start, len, ext, true, 132);
        ++w.corr;
        w.gpu_free[7] = start + len;
        w.host = at + dur;
      }
  } else {  // one graph replay: every kernel carries the launch's correlation id
    const int64_t at = w.host + 2000, dur = w.Rand(20000, 40000);
    const long long ext = w.ext++;
    w.Launch("cudaGraphLaunch", at, dur, ext, true);
    int64_t t = std::max(at + 10000, w.gpu_free[7] + 300);
    for (int l = 0; l < kLayers; ++l)
      for (int k = 0; k < kPerLayer; ++k) {
        const int64_t len = w.Jitter(4000 + 3000 * k + reqs * 50, 2);
        w.Kernel(kServingKernels[k], 7, t, len, ext, true, 132);
        t += len + 1000;
      }
    ++w.corr;
    w.gpu_free[7] = t;
    w.host = at + dur;
  }
  w.Sync("cudaStreamSynchronize", w.GpuDone());
  char name[192];
  std::snprintf(name, sizeof name, "execute_%d_context_%d(sq%dsk%dsqsq%dsqsk%d)_generation_%d(sq%dsk%lldsqsq%dsqsk%lld)",
                reqs + ctx_tokens, context, ctx_tokens, ctx_tokens, ctx_tokens, ctx_tokens, reqs, reqs, kv, reqs, kv);
  w.HostRange("user_annotation", name, step_start, w.host + 2000, step_ext);
  ++w.step;
  w.host += w.Rand(30000, 80000);
}

}  // namespace

long long WriteKinetoShape(const char* path, TraceShape shape, long long steps, int streams, unsigned long long seed) {
  FILE* out = std::fopen(path, "w");
  if (!out) return -1;
  std::setvbuf(out, nullptr, _IOFBF, 1 << 20);
  Head(out);
  long long events = 0;
  int64_t trace_end = 0;  // from the host pass: the script frames span the whole trace
  bool first = true;
  for (int pass = 0; pass < kSections; ++pass) {
    Writer w(out, pass, seed);
    w.first = first;
    if (shape == TraceShape::kStacks) {  // the script's frames, open throughout
      w.OpenFrame("runpy.py", "_run_module_as_main", 198);
      w.OpenFrame("runpy.py", "_run_code", 88);
      w.OpenFrame("train.py", "<module>", 1);
      w.OpenFrame("train.py", "main", 120);
      for (Frame& f : w.frames) f.end = trace_end - 100 * f.depth;
      if (pass == kPython) w.FlushFrames(0, true);
      w.host += 1000;
    }
    for (long long s = 0; s < steps; ++s) {
      if (shape == TraceShape::kDense) DenseStep(w, streams);
      else if (shape == TraceShape::kStacks) StacksStep(w, streams);
      else ServingStep(w);
    }
    if (pass == kHost) trace_end = w.host + 1000;
    events = std::max(events, w.events);  // the script's frames count in the Python pass only
    first = w.first;
  }
  std::fprintf(out,
               "\n ],\n \"traceName\": \"tracegate-gen-kineto shape %s seed %llu\",\n"
               " \"baseTimeNanoseconds\": 1700000000000000000\n}\n",
               ShapeName(shape), seed);
  return std::fclose(out) == 0 ? events : -1;
}

namespace {

// The serving run's cost model (gen_kineto.h): fixed and per-token ns by ServingKind.
constexpr int64_t kFixedNs[] = {0, 400'000, 300'000, 500'000};
constexpr int64_t kPerTokenNs[] = {0, 20'000, 60'000, 30'000};
constexpr int64_t kMinStepNs = 400'000;
const char* kKindNames[] = {"unknown", "prefill", "decode", "mixed"};

struct PlannedStep {
  ServingKind kind = ServingKind::kDecode;
  long long bucket = 1, tokens = 0;
  long long prefill = 0, decode = 0;                     // requests
  long long p_sq = 0, p_sk = 0, p_sqsq = 0, p_sqsk = 0;  // the context part's sums
  long long d_sq = 0, d_sk = 0, d_sqsq = 0, d_sqsk = 0;  // the generation part's sums
  int64_t latency_ns = 0;
};

// A uniform integer in [lo, hi] (modulo: the same on every platform).
long long Uniform(std::mt19937_64& rng, long long lo, long long hi) {
  return lo + static_cast<long long>(rng() % static_cast<uint64_t>(hi - lo + 1));
}

std::vector<PlannedStep> PlanServingRun(const ServingRunSpec& spec) {
  std::vector<ServingGroupValue> mix = spec.mix;
  if (mix.empty()) ParseServingGroups(kDefaultServingMix, &mix);
  // Exact counts: floor of each share, the remainder to the largest fractions (first on ties).
  double total = 0;
  for (const ServingGroupValue& m : mix) total += m.value;
  std::vector<long long> count(mix.size());
  std::vector<std::pair<double, size_t>> rest;
  long long given = 0;
  for (size_t i = 0; i < mix.size(); ++i) {
    const double exact = static_cast<double>(spec.steps) * mix[i].value / total;
    count[i] = static_cast<long long>(exact);
    given += count[i];
    rest.push_back({exact - static_cast<double>(count[i]), i});
  }
  std::stable_sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; given < spec.steps; ++i, ++given) ++count[rest[i % rest.size()].second];
  std::vector<size_t> order;
  for (size_t i = 0; i < mix.size(); ++i) order.insert(order.end(), static_cast<size_t>(count[i]), i);
  std::mt19937_64 rng(spec.seed * 0x9E3779B97F4A7C15ULL + 30);
  for (size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[static_cast<size_t>(Uniform(rng, 0, static_cast<long long>(i) - 1))]);
  std::vector<PlannedStep> steps;
  for (size_t e : order) {
    PlannedStep p;
    p.kind = mix[e].kind;
    p.bucket = mix[e].bucket;
    p.tokens = Uniform(rng, p.bucket, 2 * p.bucket - 1);
    long long prefill_tokens = 0;
    if (p.kind == ServingKind::kDecode) p.decode = p.tokens;
    if (p.kind == ServingKind::kMixed) p.decode = std::max(1LL, p.tokens / 8);
    if (p.kind != ServingKind::kDecode) {
      prefill_tokens = p.tokens - p.decode;
      p.prefill = std::min(prefill_tokens, Uniform(rng, 1, p.kind == ServingKind::kMixed ? 2 : 4));
    }
    for (long long r = 0; r < p.prefill; ++r) {  // fresh prompts: KV length = query length
      const long long q = prefill_tokens / p.prefill + (r == 0 ? prefill_tokens % p.prefill : 0);
      p.p_sq += q, p.p_sk += q, p.p_sqsq += q * q, p.p_sqsk += q * q;
    }
    for (long long r = 0; r < p.decode; ++r) {  // one query token attending to its context
      const long long k = Uniform(rng, 100, 4000);
      p.d_sq += 1, p.d_sk += k, p.d_sqsq += 1, p.d_sqsk += k;
    }
    const int kind = static_cast<int>(p.kind);
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
    double factor = 1 + spec.noise_pct / 100 * std::sqrt(3.0) * (2 * u - 1);
    for (const ServingGroupValue& sl : spec.slow)
      if (sl.kind == p.kind && sl.bucket == p.bucket) factor *= sl.value;
    const double cost = static_cast<double>(kFixedNs[kind] + kPerTokenNs[kind] * p.tokens);
    p.latency_ns = std::max<int64_t>(kMinStepNs, std::llround(cost * factor));
    steps.push_back(p);
  }
  // The fastest step first: no prefix is over twice the median of the rest, so no warm-up.
  if (!steps.empty()) {
    const auto fastest = std::min_element(steps.begin(), steps.end(), [](const PlannedStep& a, const PlannedStep& b) {
      return a.latency_ns < b.latency_ns;
    });
    std::iter_swap(steps.begin(), fastest);
  }
  return steps;
}

// The durations of a step's 8 kernels (graph: a decode step's replay), in launch order: the kernel
// time between the first kernel's start and 40 us before the step's end, less 1 us between
// kernels, shared by kWeights.
std::vector<int64_t> ServingKernelLengths(const PlannedStep& p, bool graph) {
  constexpr int kKernels = 8;
  constexpr int64_t kWeights[kKernels] = {1, 4, 1, 1, 6, 3, 1, 1};
  const int64_t first = graph ? 60'000 : 50'000;
  const int64_t kernel_ns = (p.latency_ns - 40'000) - first - (kKernels - 1) * 1'000;
  std::vector<int64_t> out;
  int64_t given = 0;
  for (int k = 0; k < kKernels; ++k) {
    out.push_back(k + 1 == kKernels ? kernel_ns - given : kernel_ns * kWeights[k] / 18);
    given += out.back();
  }
  return out;
}

// One planned step at w.host: the upload, the kernels (a graph replay for decode), the stream
// synchronize, and the annotation around them, which lasts exactly latency_ns.
void ServingRunStep(Writer& w, const PlannedStep& p) {
  constexpr int kKernels = 8;
  const int64_t start = w.host, end = start + p.latency_ns;
  const long long step_ext = w.ext++;
  const long long upload = w.ext++;
  w.Launch("cudaMemcpyAsync", start + 20'000, 8'000, upload, false);
  w.Memcpy(true, 7, start + 30'000, 5'000, upload, 256LL * p.tokens, false);
  ++w.corr;
  const bool graph = p.kind == ServingKind::kDecode;
  const std::vector<int64_t> lengths = ServingKernelLengths(p, graph);
  int64_t t = start + (graph ? 60'000 : 50'000);
  const long long launch = w.ext++;
  if (graph) w.Launch("cudaGraphLaunch", start + 40'000, 15'000, launch, false);
  for (int k = 0; k < kKernels; ++k) {
    const int64_t len = lengths[static_cast<size_t>(k)];
    if (!graph) {
      w.Launch("cudaLaunchKernel", start + 35'000 + k * 12'000, 10'000, w.ext, false);
      w.Kernel(kServingKernels[k], 7, t, len, w.ext++, false, 132);
      ++w.corr;
    } else {
      w.Kernel(kServingKernels[k], 7, t, len, launch, false, 132);
    }
    t += len + 1'000;
  }
  if (graph) ++w.corr;
  w.Emit(
      kDevice,
      "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaStreamSynchronize\", \"pid\": %lld, \"tid\": %lld, "
      "\"ts\": %s, \"dur\": %s, \"args\": {\"cbid\": 131, \"correlation\": %lld}}",
      kPid, kTid, Writer::Us(start + 200'000).c_str(), Writer::Us(end - 10'000 - (start + 200'000)).c_str(), w.corr++);
  char name[256];
  std::snprintf(name, sizeof name,
                "execute_%lld_context_%lld(sq%lldsk%lldsqsq%lldsqsk%lld)_generation_%lld(sq%lldsk%lldsqsq%lldsqsk%lld)",
                p.tokens, p.prefill, p.p_sq, p.p_sk, p.p_sqsq, p.p_sqsk, p.decode, p.d_sq, p.d_sk, p.d_sqsq, p.d_sqsk);
  w.HostRange("user_annotation", name, start, end, step_ext);
  w.host = end + 30'000 + static_cast<int64_t>(w.step++ * 7919 % 50) * 1'000;
}

// The decode graphs' capture (--capture-out): one graph per decode token bucket B of the mix,
// captured as vLLM does for batch size 2B (capture_<2B>_FULL, a stream capture of the step's 8
// kernel launches, each inside its op and under the model's forward frame). Graphs of 32 tokens
// or fewer run the attention as vllm::unified_attention_with_output, larger ones as
// vllm::flash_attn_varlen_func: graphs of the same launch count that differ, so each replay is
// matched by its step's tokens (the smallest captured size that holds them).
constexpr const char* kCapturedOps[] = {
    "_C::rms_norm", "aten::mm", "_C::rotary_embedding", "_C_cache_ops::reshape_and_cache_flash",
    nullptr,        "aten::mm", "_C::silu_and_mul",     "triton_poi_fused_add_0"};
constexpr const char* kCapturedFrame = "vllm/model_executor/models/llama.py(240): forward";

const char* CapturedOp(int k, long long size) {
  if (kCapturedOps[k]) return kCapturedOps[k];
  return size <= 32 ? "vllm::unified_attention_with_output" : "vllm::flash_attn_varlen_func";
}

// The capture sizes: 2B for each decode bucket B of the planned steps, ascending.
std::vector<long long> CaptureSizes(const std::vector<PlannedStep>& steps) {
  std::vector<long long> sizes;
  for (const PlannedStep& p : steps)
    if (p.kind == ServingKind::kDecode) sizes.push_back(2 * p.bucket);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

// The captured size a decode step's replay is: the smallest that holds its tokens.
long long CaptureSizeOf(const PlannedStep& p, const std::vector<long long>& sizes) {
  return *std::lower_bound(sizes.begin(), sizes.end(), p.tokens);
}

bool WriteServingCapture(const char* path, const std::vector<long long>& sizes) {
  FILE* out = std::fopen(path, "w");
  if (!out) return false;
  std::fputs("{\n \"schemaVersion\": 1,\n \"traceEvents\": [", out);
  long long corr = 1, t = 1'000'000;  // us
  bool first = true;
  auto ev = [&](const char* cat, const char* name, long long ts, long long dur, long long correlation) {
    std::fprintf(out,
                 "%s\n  {\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 1, \"tid\": 1, \"ts\": %lld, "
                 "\"dur\": %lld%s",
                 first ? "" : ",", cat, name, ts, dur, correlation >= 0 ? "" : "}");
    if (correlation >= 0) std::fprintf(out, ", \"args\": {\"correlation\": %lld}}", correlation);
    first = false;
  };
  for (long long size : sizes) {
    char name[64];
    std::snprintf(name, sizeof name, "capture_%lld_FULL", size);
    ev("user_annotation", name, t, 2'000, -1);
    ev("cuda_runtime", "cudaStreamBeginCapture", t + 10, 5, corr++);
    ev("python_function", kCapturedFrame, t + 50, 1'800, -1);
    for (int k = 0; k < 8; ++k) {
      const long long at = t + 100 + 200 * k;
      ev("cpu_op", CapturedOp(k, size), at, 100, -1);
      ev("python_function", "torch/_ops.py(840): __call__", at + 1, 98, -1);
      ev("cuda_runtime", "cudaLaunchKernel", at + 10, 20, corr++);
    }
    ev("cuda_runtime", "cudaStreamEndCapture", t + 1'950, 10, corr++);
    t += 10'000;
  }
  std::fputs("\n ],\n \"traceName\": \"tracegate-gen-kineto serving capture\"\n}\n", out);
  return std::fclose(out) == 0;
}

// The shortest "%.<n>g" that reads back as the same double.
std::string Exact(double v) {
  char b[40];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(b, sizeof b, "%.*g", digits, v);
    if (std::strtod(b, nullptr) == v) break;
  }
  return b;
}

// The known answers, computed as the report's serving section computes them (docs/SERVING.md):
// latency_ms = ns / 1e6, nearest-rank percentiles of the sorted latencies, the mean their sum in
// ascending order over the count, ms_per_token = (summed ns / 1e6) / tokens, tokens_per_s =
// tokens / (summed ns / 1e9).
bool WriteServingAnswers(const char* path, const ServingRunSpec& spec, const std::vector<PlannedStep>& steps,
                         bool captured) {
  FILE* out = std::fopen(path, "w");
  if (!out) return false;
  std::map<std::pair<int, long long>, std::vector<const PlannedStep*>> groups;
  long long graph_launches = 0;
  for (const PlannedStep& p : steps) {
    groups[{static_cast<int>(p.kind), p.bucket}].push_back(&p);
    graph_launches += p.kind == ServingKind::kDecode;
  }
  auto list = [](const std::vector<ServingGroupValue>& v) {
    std::string text;
    for (const ServingGroupValue& g : v)
      text += (text.empty() ? "" : ",") + std::string(kKindNames[static_cast<int>(g.kind)]) + ":" +
              std::to_string(g.bucket) + "=" + Exact(g.value);
    return text;
  };
  std::fprintf(out,
               "{\n \"generator\": \"tracegate-gen-kineto --serving\",\n \"steps\": %lld,\n \"seed\": %llu,\n"
               " \"mix\": \"%s\",\n \"slow\": \"%s\",\n \"noise_pct\": %s,\n"
               " \"cost_model_us\": {\"prefill\": [400, 20], \"decode\": [300, 60], \"mixed\": [500, 30]},\n"
               " \"graph_replay\": {\"launches\": %lld, \"kernels\": %lld},\n \"groups\": [",
               spec.steps, spec.seed, (spec.mix.empty() ? std::string(kDefaultServingMix) : list(spec.mix)).c_str(),
               list(spec.slow).c_str(), Exact(spec.noise_pct).c_str(), graph_launches, graph_launches * 8);
  bool first = true;
  for (const auto& [key, members] : groups) {
    std::vector<double> ms;
    int64_t total_ns = 0;
    long long tokens = 0;
    for (const PlannedStep* p : members) {
      ms.push_back(static_cast<double>(p->latency_ns) / 1e6);
      total_ns += p->latency_ns;
      tokens += p->tokens;
    }
    std::sort(ms.begin(), ms.end());
    auto rank = [&](double pct) {
      const double r = std::ceil(pct * static_cast<double>(ms.size()) / 100.0);
      const size_t i = r >= static_cast<double>(ms.size()) ? ms.size() : static_cast<size_t>(r);
      return ms[std::max<size_t>(i, 1) - 1];
    };
    double sum = 0;
    for (double x : ms) sum += x;
    const double total_ms = static_cast<double>(total_ns) / 1e6;
    std::fprintf(out,
                 "%s\n  {\"kind\": \"%s\", \"token_bucket_min\": %lld, \"token_bucket_max\": %lld, \"count\": %zu, "
                 "\"tokens\": %lld, \"latency_total_ms\": %s, \"mean_latency_ms\": %s, \"p50_latency_ms\": %s, "
                 "\"p95_latency_ms\": %s, \"p99_latency_ms\": %s, \"ms_per_token\": %s, \"tokens_per_s\": %s}",
                 first ? "" : ",", kKindNames[key.first], key.second, 2 * key.second, ms.size(), tokens,
                 Exact(total_ms).c_str(), Exact(sum / static_cast<double>(ms.size())).c_str(), Exact(rank(50)).c_str(),
                 Exact(rank(95)).c_str(), Exact(rank(99)).c_str(),
                 Exact(total_ms / static_cast<double>(tokens)).c_str(),
                 Exact(static_cast<double>(tokens) / (static_cast<double>(total_ns) / 1e9)).c_str());
    first = false;
  }
  if (captured) {  // the ops each replayed kernel takes from the capture, and their kernel time
    const std::vector<long long> sizes = CaptureSizes(steps);
    std::map<std::string, std::pair<long long, int64_t>> ops;  // op -> kernels, ns
    long long launches = 0;
    for (const PlannedStep& p : steps) {
      if (p.kind != ServingKind::kDecode) continue;
      ++launches;
      const std::vector<int64_t> lengths = ServingKernelLengths(p, true);
      for (int k = 0; k < 8; ++k) {
        auto& o = ops[CapturedOp(k, CaptureSizeOf(p, sizes))];
        o.first += 1;
        o.second += lengths[static_cast<size_t>(k)];
      }
    }
    const bool differ = sizes.size() > 1 && sizes.front() <= 32 && sizes.back() > 32;
    std::fprintf(out,
                 "\n ],\n \"capture\": {\"graphs\": %zu, \"launches\": %lld, \"kernels_mapped\": %lld, "
                 "\"launch_count\": %lld, \"launch_count_and_capture_size\": %lld, \"frame\": \"%s\", \"ops\": {",
                 sizes.size(), launches, 8 * launches, differ ? 0 : launches, differ ? launches : 0, kCapturedFrame);
    bool first_op = true;
    for (const auto& [op, v] : ops) {
      std::fprintf(out, "%s\"%s\": [%lld, %lld]", first_op ? "" : ", ", op.c_str(), v.first,
                   static_cast<long long>(v.second));
      first_op = false;
    }
    std::fputs("}}", out);
    std::fputs(",\n \"step_latency_ns\": [", out);
  } else {
    std::fputs("\n ],\n \"step_latency_ns\": [", out);
  }
  for (size_t i = 0; i < steps.size(); ++i)
    std::fprintf(out, "%s%lld", i ? ", " : "", static_cast<long long>(steps[i].latency_ns));
  std::fputs("]\n}\n", out);
  return std::fclose(out) == 0;
}

}  // namespace

std::string ParseServingGroups(const std::string& text, std::vector<ServingGroupValue>* out) {
  std::vector<ServingGroupValue> groups;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    at = comma + 1;
    const size_t colon = item.find(':'), eq = item.find('=');
    if (colon == std::string::npos || eq == std::string::npos || eq < colon)
      return "'" + item + "' is not kind:bucket=value";
    ServingGroupValue g;
    const std::string kind = item.substr(0, colon);
    if (kind == "prefill") g.kind = ServingKind::kPrefill;
    else if (kind == "decode") g.kind = ServingKind::kDecode;
    else if (kind == "mixed") g.kind = ServingKind::kMixed;
    else return "'" + item + "': the kind is prefill, decode or mixed";
    char* end = nullptr;
    const std::string bucket = item.substr(colon + 1, eq - colon - 1), value = item.substr(eq + 1);
    g.bucket = std::strtoll(bucket.c_str(), &end, 10);
    if (bucket.empty() || *end != '\0' || g.bucket < 1 || g.bucket > (1LL << 20) || (g.bucket & (g.bucket - 1)) != 0 ||
        (g.kind == ServingKind::kMixed && g.bucket < 2))
      return "'" + item + "': the bucket is a power of two from 1 to 2^20 (2 or more for mixed)";
    g.value = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !(g.value > 0) || !std::isfinite(g.value))
      return "'" + item + "': the value is a positive number";
    groups.push_back(g);
  }
  *out = std::move(groups);
  return "";
}

long long WriteServingRun(const char* path, const ServingRunSpec& spec, const char* answers_path,
                          const char* capture_path) {
  const std::vector<PlannedStep> steps = PlanServingRun(spec);
  FILE* out = std::fopen(path, "w");
  if (!out) return -1;
  std::setvbuf(out, nullptr, _IOFBF, 1 << 20);
  Head(out);
  long long events = 0;
  bool first = true;
  for (int pass = 0; pass < kSections; ++pass) {
    Writer w(out, pass, spec.seed);
    w.first = first;
    for (const PlannedStep& p : steps) ServingRunStep(w, p);
    events = w.events;
    first = w.first;
  }
  std::fprintf(out,
               "\n ],\n \"traceName\": \"tracegate-gen-kineto serving run seed %llu\",\n"
               " \"baseTimeNanoseconds\": 1700000000000000000\n}\n",
               spec.seed);
  if (std::fclose(out) != 0) return -1;
  if (capture_path && !WriteServingCapture(capture_path, CaptureSizes(steps))) return -1;
  return WriteServingAnswers(answers_path, spec, steps, capture_path != nullptr) ? events : -1;
}

}  // namespace tg::bench
