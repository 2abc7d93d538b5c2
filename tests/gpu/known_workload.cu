// A CUDA program whose work is known exactly, for tests/gpu/record_known.sh: two kernels launched
// a fixed number of times, each timed with CUDA events; one kernel launched through a CUDA graph;
// one copy of each direction; one memset; a stream and a device synchronisation; all inside one
// NVTX range. It prints what it did, one line per item, for the script to compare with the
// recording:
//   warmup <name> <launches>              (untimed launches before the timed ones)
//   kernel <name> <ms by CUDA events>     (one line per timed launch, in launch order)
//   graph_kernel <name> <launches>
//   copy <HtoD|DtoH|DtoD> <bytes>
//   memset <bytes>
//   range <name>
//   allocated_mb <device memory the program allocated, MiB>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>

namespace {

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "known_workload: %s failed: %s\n", #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

constexpr int kLaunches = 5;
constexpr int kGraphLaunches = 3;
constexpr size_t kElements = size_t{64} << 20;  // 64 Mi floats = 256 MiB per array
constexpr size_t kBytes = kElements * sizeof(float);
constexpr int kFmaIterations = 4096;            // ~ms of compute per launch on an H200

// Compute-bound: every thread runs a dependent chain of FMAs on its element.
__global__ void known_fma_kernel(float* data, size_t n, int iterations) {
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  if (i >= n) return;
  float v = data[i];
  for (int k = 0; k < iterations; ++k) v = fmaf(v, 0.999f, 0.001f);
  data[i] = v;
}

// Memory-bound: y = a * x + y over 256 MiB arrays (768 MiB of traffic per launch).
__global__ void known_axpy_kernel(float a, const float* x, float* y, size_t n) {
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// Launched only through a CUDA graph: its records must keep the graph's ids.
__global__ void known_graph_kernel(float* y, size_t n) {
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  if (i < n) y[i] = y[i] * 0.5f;
}

// One untimed launch first: with lazy module loading (CUDA_MODULE_LOADING=LAZY, the default) the
// first launch of a kernel loads its module on the host between the two events, which the
// recorded kernel duration does not include, against a tolerance of 3% + 5 us.
template <typename Launch>
void Timed(const char* name, cudaStream_t stream, Launch launch) {
  launch();
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(stream));
  std::printf("warmup %s 1\n", name);
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < kLaunches; ++i) {
    CHECK(cudaEventRecord(start, stream));
    launch();
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("kernel %s %.6f\n", name, ms);
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
}

}  // namespace

int main() {
  nvtxRangePushA("known_region");
  std::printf("range known_region\n");

  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float *x = nullptr, *y = nullptr, *host = nullptr;
  CHECK(cudaMalloc(&x, kBytes));
  CHECK(cudaMalloc(&y, kBytes));
  std::printf("allocated_mb %zu\n", 2 * kBytes >> 20);
  CHECK(cudaMallocHost(&host, kBytes));
  for (size_t i = 0; i < kElements; ++i) host[i] = static_cast<float>(i % 1000) * 0.001f;

  CHECK(cudaMemcpyAsync(x, host, kBytes, cudaMemcpyHostToDevice, stream));
  std::printf("copy HtoD %zu\n", kBytes);
  CHECK(cudaMemsetAsync(y, 0, kBytes, stream));
  std::printf("memset %zu\n", kBytes);
  CHECK(cudaStreamSynchronize(stream));

  const unsigned threads = 256;
  const unsigned blocks = static_cast<unsigned>((kElements + threads - 1) / threads);
  Timed("known_fma_kernel", stream, [&] { known_fma_kernel<<<blocks, threads, 0, stream>>>(y, kElements, kFmaIterations); });
  Timed("known_axpy_kernel", stream, [&] { known_axpy_kernel<<<blocks, threads, 0, stream>>>(2.0f, x, y, kElements); });

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  known_graph_kernel<<<blocks, threads, 0, stream>>>(y, kElements);
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < kGraphLaunches; ++i) CHECK(cudaGraphLaunch(exec, stream));
  std::printf("graph_kernel known_graph_kernel %d\n", kGraphLaunches);

  CHECK(cudaMemcpyAsync(x, y, kBytes, cudaMemcpyDeviceToDevice, stream));
  std::printf("copy DtoD %zu\n", kBytes);
  CHECK(cudaMemcpyAsync(host, x, kBytes, cudaMemcpyDeviceToHost, stream));
  std::printf("copy DtoH %zu\n", kBytes);
  CHECK(cudaDeviceSynchronize());

  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaFreeHost(host));
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaStreamDestroy(stream));
  nvtxRangePop();
  return 0;
}
