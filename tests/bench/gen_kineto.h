// A deterministic, realistically shaped PyTorch-profiler (Kineto) trace for benchmarks:
// ProfilerStep#N iterations of 40 ops, each a cpu_op range, a runtime call (cudaLaunchKernel /
// cudaMemcpyAsync / cudaMemsetAsync) with its correlation id and ac2g flow pair, and its GPU
// work (85% kernels with realistic long template names, 10% H2D/D2H copies, 5% memsets) spread
// over several streams. Times are three-decimal microseconds relative to baseTimeNanoseconds.
#pragma once

namespace tg::bench {

// Writes about `events` trace events (ranges, runtime calls, flows and GPU work together) to
// `path`. Same arguments, same bytes. Returns the number of events written, or -1 on I/O error.
long long WriteKinetoTrace(const char* path, long long events, int streams, unsigned long long seed);

}  // namespace tg::bench
