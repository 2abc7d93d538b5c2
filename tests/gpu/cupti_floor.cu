// The cost per call of each CUPTI feature (issue 32): one process runs one configuration, set up
// before CUDA starts, then five timed loops, and prints one line per loop:
//   cupti_floor {"config": "kernel", "loop": "launch", "calls": 200000, "seconds": 0.91, "us_per_call": 4.55, ...}
// Loops: 1M cudaGetLastError; 200k launches of an empty kernel (then one sync); 20k launch + sync;
// 20k NVTX push/pop; a 100-node graph (empty kernels, captured) replayed, per replay and per node.
// tests/gpu/cupti_floor.py runs every configuration in its own process, interleaved, and makes the
// table; the configurations that go through tracegate's injection library (`tracegate record`) run
// this program with --config none.
// Usage: cupti_floor --config NAME [--scale X] | --list   (--scale multiplies every loop's count)
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cupti_floor.h"

__global__ void empty_kernel() {}

namespace {

using Clock = std::chrono::steady_clock;

bool Ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "cupti_floor: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

void Print(const std::string& config, const char* loop, long calls, double seconds, const char* unit = "call") {
  std::printf("cupti_floor {\"config\": \"%s\", \"loop\": \"%s\", \"calls\": %ld, \"seconds\": %.6f, "
              "\"us_per_call\": %.4f, \"unit\": \"%s\"}\n",
              config.c_str(), loop, calls, seconds, seconds / static_cast<double>(calls) * 1e6, unit);
  std::fflush(stdout);
}

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

long Scaled(long n, double scale) {
  long v = static_cast<long>(static_cast<double>(n) * scale);
  return v < 1 ? 1 : v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config;
  double scale = 1.0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--list")) {
      for (const char* const* c = kFloorConfigs; *c; ++c) std::printf("%s\n", *c);
      return 0;
    }
    if (!std::strcmp(argv[i], "--config") && i + 1 < argc) config = argv[++i];
    else if (!std::strcmp(argv[i], "--scale") && i + 1 < argc) scale = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: cupti_floor --config NAME [--scale X] | --list\n");
      return 2;
    }
  }
  if (config.empty() || scale <= 0) {
    std::fprintf(stderr, "usage: cupti_floor --config NAME [--scale X] | --list\n");
    return 2;
  }
  std::string note;
  if (!SetUpFloorConfig(config, &note)) return 1;

  // CUDA starts here: context, module load, one launch and one graph, none of it timed.
  cudaStream_t stream;
  if (!Ok(cudaFree(nullptr), "cudaFree(0)") || !Ok(cudaStreamCreate(&stream), "cudaStreamCreate")) return 1;
  empty_kernel<<<1, 1, 0, stream>>>();
  if (!Ok(cudaStreamSynchronize(stream), "warm-up")) return 1;
  nvtxRangePushA("cupti_floor warm-up");
  nvtxRangePop();

  const long n_error = Scaled(1000000, scale), n_launch = Scaled(200000, scale), n_sync = Scaled(20000, scale),
             n_nvtx = Scaled(20000, scale), n_graph = Scaled(2000, scale);
  constexpr int kNodes = 100;

  auto t = Clock::now();
  for (long i = 0; i < n_error; ++i) (void)cudaGetLastError();
  Print(config, "cudaGetLastError", n_error, Since(t));

  t = Clock::now();
  for (long i = 0; i < n_launch; ++i) empty_kernel<<<1, 1, 0, stream>>>();
  if (!Ok(cudaStreamSynchronize(stream), "launch loop")) return 1;
  Print(config, "launch", n_launch, Since(t));

  t = Clock::now();
  for (long i = 0; i < n_sync; ++i) {
    empty_kernel<<<1, 1, 0, stream>>>();
    cudaStreamSynchronize(stream);
  }
  if (!Ok(cudaGetLastError(), "launch+sync loop")) return 1;
  Print(config, "launch+sync", n_sync, Since(t));

  t = Clock::now();
  for (long i = 0; i < n_nvtx; ++i) {
    nvtxRangePushA("cupti_floor");
    nvtxRangePop();
  }
  Print(config, "nvtx push+pop", n_nvtx, Since(t));

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  if (!Ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "capture")) return 1;
  for (int k = 0; k < kNodes; ++k) empty_kernel<<<1, 1, 0, stream>>>();
  if (!Ok(cudaStreamEndCapture(stream, &graph), "end capture") ||
      !Ok(cudaGraphInstantiate(&exec, graph, 0), "instantiate") || !Ok(cudaGraphLaunch(exec, stream), "graph warm-up") ||
      !Ok(cudaStreamSynchronize(stream), "graph warm-up"))
    return 1;
  t = Clock::now();
  for (long i = 0; i < n_graph; ++i) cudaGraphLaunch(exec, stream);
  if (!Ok(cudaStreamSynchronize(stream), "graph replay")) return 1;
  const double graph_s = Since(t);
  Print(config, "graph replay (100 nodes)", n_graph, graph_s, "replay");
  Print(config, "graph node", n_graph * kNodes, graph_s, "node");

  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  uint64_t records = 0, buffers = 0;
  FinishFloorConfig(&records, &buffers);
  std::printf("cupti_floor {\"config\": \"%s\", \"records\": %llu, \"buffers\": %llu, \"note\": \"%s\"}\n",
              config.c_str(), static_cast<unsigned long long>(records), static_cast<unsigned long long>(buffers),
              note.c_str());
  return 0;
}
