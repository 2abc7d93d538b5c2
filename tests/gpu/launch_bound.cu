// A launch-bound loop for the recorder's overhead measurement (tests/gpu/overhead.sh): many tiny
// kernels, each too short to hide the launch cost, so any per-launch tracing cost shows in the
// wall time. Usage: launch_bound [LAUNCHES] (default 200000). Prints the wall time.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void tiny(float* x) { x[threadIdx.x] += 1.0f; }

int main(int argc, char** argv) {
  const long launches = argc > 1 ? std::atol(argv[1]) : 200000;
  float* x = nullptr;
  if (cudaMalloc(&x, 32 * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "launch_bound: cudaMalloc failed\n");
    return 1;
  }
  tiny<<<1, 32>>>(x);  // warm-up: module load, context
  cudaDeviceSynchronize();
  auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < launches; ++i) tiny<<<1, 32>>>(x);
  cudaError_t err = cudaDeviceSynchronize();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  cudaFree(x);
  if (err != cudaSuccess) {
    std::fprintf(stderr, "launch_bound: %s\n", cudaGetErrorString(err));
    return 1;
  }
  std::printf("launch_bound: %ld launches in %.3f s, %.3f us/launch\n", launches, s, s / launches * 1e6);
  return 0;
}
