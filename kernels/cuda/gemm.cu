// GEMM + bias + ReLU with cuBLASLt (see gemm.h).
//
// cuBLASLt is column-major and the reference (GemmBiasReluReference) is row-major, so we compute
// the transpose: out^T (n x m) = B^T (n x k) * A^T (k x m). A row-major R x C matrix is exactly a
// column-major C x R matrix with leading dimension C, so B, A and out are passed unchanged as
// cuBLASLt's A (n x k, ld n), B (k x m, ld k) and D (n x m, ld n), all CUBLAS_OP_N. The bias (n
// elements, one per output column of the row-major result) is then one per ROW of the
// column-major D, which is what CUBLASLT_EPILOGUE_RELU_BIAS broadcasts ("Bias vector length must
// match matrix D rows ... broadcasted to all columns", cublasLt.h).
//
// Types: compute CUBLAS_COMPUTE_32F (plain, not _PEDANTIC: cuBLASLt only uses TF32 when asked with
// CUBLAS_COMPUTE_32F_FAST_TF32, so fp32 stays IEEE fp32 FMA; fp16 inputs run on the tensor cores
// with fp32 accumulation), scale type CUDA_R_32F (alpha = 1, beta = 0 as floats), A/B/C/D in the
// storage type (CUDA_R_32F or CUDA_R_16F). CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE is left at its
// default (-1): "Bias vector elements are the same type as the elements of output matrix (Dtype)"
// for non-IMMA, non-fp8 kernels, i.e. the bias is in the storage precision, as gemm.h says.
#include "gemm.h"

#include <cublasLt.h>

#include <cstdint>
#include <string>

#include "cuda_check.h"
#include "device_buffer.h"
#include "elementwise.h"

namespace tg::kernels::cuda {
namespace {

void CheckCublasLt(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) ThrowCudaError(call, cublasLtGetStatusString(status));
}
#define TG_CUBLASLT_CHECK(call) CheckCublasLt((call), #call)

constexpr size_t kWorkspaceBytes = size_t{32} << 20;  // 32 MiB, as gemm.h promises
// cuBLASLt's heuristics assume 256-byte aligned A, B, C and D by default
// (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES, default 256); cudaMalloc gives that.
constexpr uintptr_t kRequiredAlignment = 256;

// One matmul configuration (descriptor with its epilogue plus the heuristic's algorithm).
struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatmulAlgo_t algo{};
};

// The storage type. int8 is not offered: CUBLAS_COMPUTE_32I needs int8 or int32 outputs with
// their own bias and scale rules and a TN-only layout, and the reference defines no int8 rounding.
cudaDataType_t DataType(Precision p) {
  if (p == Precision::kInt8) throw CudaError("GemmBiasRelu: int8 is not supported; use --precision fp32 or fp16");
  return p == Precision::kFp16 ? CUDA_R_16F : CUDA_R_32F;
}

bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kRequiredAlignment == 0; }

}  // namespace

struct GemmBiasRelu::Impl {
  GemmShape shape;
  Precision precision = Precision::kFp32;
  cublasLtHandle_t handle = nullptr;
  // cuBLASLt operands: a = B^T (n x k), b = A^T (k x m), d = out^T (n x m); C is D (beta = 0).
  cublasLtMatrixLayout_t a_layout = nullptr, b_layout = nullptr, d_layout = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  Plan fused, unfused;
  DeviceBuffer workspace;

  ~Impl() {
    // Skip what was never created (the constructor threw part-way).
    if (fused.desc) cublasLtMatmulDescDestroy(fused.desc);
    if (unfused.desc) cublasLtMatmulDescDestroy(unfused.desc);
    if (preference) cublasLtMatmulPreferenceDestroy(preference);
    if (d_layout) cublasLtMatrixLayoutDestroy(d_layout);
    if (b_layout) cublasLtMatrixLayoutDestroy(b_layout);
    if (a_layout) cublasLtMatrixLayoutDestroy(a_layout);
    if (handle) cublasLtDestroy(handle);
  }

  void MakePlan(Plan& plan, cublasLtEpilogue_t epilogue_value) {
    TG_CUBLASLT_CHECK(cublasLtMatmulDescCreate(&plan.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const uint32_t epilogue = epilogue_value;  // attribute type: uint32_t
    // TRANSA/TRANSB stay CUBLAS_OP_N (their default): the transposes are in the layouts.
    TG_CUBLASLT_CHECK(
        cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
    // The heuristic reads the bias pointer's value only for its alignment ("Routines that don't
    // dereference this pointer, like cublasLtMatmulAlgoGetHeuristic() depend on its value to
    // determine expected pointer alignment"): give it a 256-byte aligned device address (the
    // workspace); Run sets the real bias, which it requires to be as aligned.
    if (epilogue_value == CUBLASLT_EPILOGUE_RELU_BIAS) {
      const void* placeholder_bias = workspace.get();
      TG_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                       &placeholder_bias, sizeof(placeholder_bias)));
    }
    cublasLtMatmulHeuristicResult_t result{};
    int returned = 0;
    TG_CUBLASLT_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, plan.desc, a_layout, b_layout, d_layout, d_layout,
                                                     preference, 1, &result, &returned));
    if (returned < 1 || result.state != CUBLAS_STATUS_SUCCESS || result.workspaceSize > kWorkspaceBytes) {
      throw CudaError("GemmBiasRelu: cuBLASLt has no algorithm for " + std::to_string(shape.m) + "x" +
                      std::to_string(shape.n) + "x" + std::to_string(shape.k) + " " +
                      std::string(PrecisionName(precision)) +
                      (epilogue_value == CUBLASLT_EPILOGUE_RELU_BIAS ? " with the RELU_BIAS epilogue" : "") +
                      "; try another shape or precision");
    }
    plan.algo = result.algo;
  }

  void Matmul(const Plan& plan, const void* a, const void* b, void* d, cudaStream_t stream) const {
    const float alpha = 1.0f, beta = 0.0f;  // CUDA_R_32F scale type
    // Row-major out = A B is column-major out^T = B^T A^T: cuBLASLt's A is our b, its B our a.
    TG_CUBLASLT_CHECK(cublasLtMatmul(handle, plan.desc, &alpha, b, a_layout, a, b_layout, &beta, d, d_layout, d,
                                     d_layout, &plan.algo, workspace.get(), workspace.bytes(), stream));
  }
};

GemmBiasRelu::GemmBiasRelu(const GemmShape& shape, Precision p) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.shape = shape;
  s.precision = p;
  if (shape.m == 0 || shape.n == 0 || shape.k == 0) throw CudaError("GemmBiasRelu: m, n and k must be positive");
  const cudaDataType_t type = DataType(p);
  const auto m = static_cast<uint64_t>(shape.m), n = static_cast<uint64_t>(shape.n),
             k = static_cast<uint64_t>(shape.k);
  TG_CUBLASLT_CHECK(cublasLtCreate(&s.handle));
  TG_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&s.a_layout, type, n, k, static_cast<int64_t>(n)));
  TG_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&s.b_layout, type, k, m, static_cast<int64_t>(k)));
  TG_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&s.d_layout, type, n, m, static_cast<int64_t>(n)));
  TG_CUBLASLT_CHECK(cublasLtMatmulPreferenceCreate(&s.preference));
  const uint64_t max_workspace = kWorkspaceBytes;  // attribute type: uint64_t
  TG_CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(s.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                         &max_workspace, sizeof(max_workspace)));
  s.workspace = DeviceBuffer(kWorkspaceBytes);
  s.MakePlan(s.fused, CUBLASLT_EPILOGUE_RELU_BIAS);
  s.MakePlan(s.unfused, CUBLASLT_EPILOGUE_DEFAULT);
}

GemmBiasRelu::~GemmBiasRelu() = default;

void GemmBiasRelu::Run(bool fused, const void* a, const void* b, const void* bias, void* tmp, void* out,
                       cudaStream_t stream) {
  Impl& s = *impl_;
  void* gemm_out = fused ? out : tmp;
  if (!Aligned(a) || !Aligned(b) || !Aligned(bias) || !Aligned(gemm_out)) {
    throw CudaError("GemmBiasRelu: a, b, bias, tmp and out must be 256-byte aligned (cudaMalloc'd) device pointers");
  }
  if (fused) {
    TG_CUBLASLT_CHECK(
        cublasLtMatmulDescSetAttribute(s.fused.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    s.Matmul(s.fused, a, b, out, stream);
    return;
  }
  // Unfused: GEMM into tmp (rounded to storage), bias in place (rounded), ReLU into out.
  const size_t elements = s.shape.m * s.shape.n;
  s.Matmul(s.unfused, a, b, tmp, stream);
  LaunchBiasAdd(s.precision, tmp, bias, tmp, elements, s.shape.n, stream);
  LaunchRelu(s.precision, tmp, out, elements, stream);
}

}  // namespace tg::kernels::cuda
