// A program that uses NVTX and no CUDA, for injection_test.cpp: NVTX loads the library named by
// NVTX_INJECTION64_PATH on its first call, which must start the collector (NVTX may come before
// CUDA) and hand NVTX on to CUPTI.
#include <nvtx3/nvToolsExt.h>

int main() {
  nvtxRangePushA("probe");
  nvtxMarkA("probe mark");
  nvtxRangePop();
  return 0;
}
