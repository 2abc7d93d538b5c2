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
//
// int8 (cuBLASLt's IMMA path; semantics GemmBiasReluInt8Reference):
// - types: A/B CUDA_R_8I, compute CUBLAS_COMPUTE_32I, scale type CUDA_R_32F, C/D CUDA_R_8I (the
//   "CUBLAS_COMPUTE_32I | CUDA_R_32F | CUDA_R_8I | CUDA_R_8I" row of cublasLtMatmul's type table);
//   alpha = scale_a * scale_b / scale_out as a float, beta = 0.
// - layout: IMMA with regular (column-major) ordering supports only "TN": A transposed, B not
//   (cublasLtMatmul docs, IMMA requirements). Our B is given transposed (bt, n x k row-major =
//   column-major k x n, ld k) and passed as cuBLASLt's A with CUBLAS_OP_T; our A (m x k row-major
//   = column-major k x m, ld k) is cuBLASLt's B, CUBLAS_OP_N; D as above (n x m, ld n).
// - shape: "Dimensions m and k must be multiples of 4" and "leading dimensions of matrices A, B, C
//   must be multiples of 4" (same docs); cuBLASLt's m is our n and the leading dimensions are k, k
//   and n, so n and k must be multiples of 4 (checked, CudaError). Pointers must be 4-byte aligned
//   (16 for speed): ours are 256-byte aligned.
// - bias: "IMMA kernels with computeType=CUDA_R_32I and Ctype=CUDA_R_8I [have] bias vector
//   elements [of] the same type as alpha, beta (CUBLASLT_MATMUL_DESC_SCALE_TYPE=CUDA_R_32F)"
//   (cublasLt.h, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE): n floats, added after alpha, so in units
//   of the output's scale. Set explicitly to CUDA_R_32F.
// - unfused: the default epilogue stores QuantizeInt8(alpha * acc) in tmp (same scale as out),
//   then the int8 bias kernel (float bias, all scales 1: it works in the output's units) and the
//   int8 ReLU kernel.
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

// The storage type.
cudaDataType_t DataType(Precision p) {
  switch (p) {
    case Precision::kFp32: return CUDA_R_32F;
    case Precision::kFp16: return CUDA_R_16F;
    case Precision::kInt8: return CUDA_R_8I;
  }
  return CUDA_R_32F;
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
  float alpha = 1.0f;  // int8: scale_a * scale_b / scale_out (SetInt8Alpha)

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
    const bool int8 = precision == Precision::kInt8;
    TG_CUBLASLT_CHECK(
        cublasLtMatmulDescCreate(&plan.desc, int8 ? CUBLAS_COMPUTE_32I : CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const uint32_t epilogue = epilogue_value;  // attribute type: uint32_t
    // fp32 / fp16: TRANSA/TRANSB stay CUBLAS_OP_N (their default), the transposes are in the
    // layouts. int8: IMMA needs "TN" (see the file comment): TRANSA = CUBLAS_OP_T.
    if (int8) {
      const int32_t transa = CUBLAS_OP_T;  // attribute type: int32_t (cublasOperation_t)
      TG_CUBLASLT_CHECK(
          cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));
    }
    TG_CUBLASLT_CHECK(
        cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
    // The heuristic reads the bias pointer's value only for its alignment ("Routines that don't
    // dereference this pointer, like cublasLtMatmulAlgoGetHeuristic() depend on its value to
    // determine expected pointer alignment"): give it a 256-byte aligned device address (the
    // workspace); Run sets the real bias, which it requires to be as aligned.
    if (epilogue_value == CUBLASLT_EPILOGUE_RELU_BIAS) {
      if (int8) {  // IMMA with int8 C: the bias has the scale type, float (cublasLt.h)
        const int32_t bias_type = CUDA_R_32F;  // attribute type: int32_t (cudaDataType)
        TG_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                                         sizeof(bias_type)));
      }
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
    const float beta = 0.0f;  // CUDA_R_32F scale type; alpha 1 except for int8
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
  if (p == Precision::kInt8 && (shape.n % 4 != 0 || shape.k % 4 != 0)) {
    throw CudaError("GemmBiasRelu: int8 (cuBLASLt IMMA) needs n and k to be multiples of 4, got " +
                    std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" + std::to_string(shape.k) +
                    " (m x n x k); pad the matrices or use fp16");
  }
  TG_CUBLASLT_CHECK(cublasLtCreate(&s.handle));
  if (p == Precision::kInt8) {  // cuBLASLt's A is bt (k x n column-major, ld k), used transposed
    TG_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&s.a_layout, type, k, n, static_cast<int64_t>(k)));
  } else {
    TG_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&s.a_layout, type, n, k, static_cast<int64_t>(n)));
  }
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

void GemmBiasRelu::SetInt8Alpha(float alpha) { impl_->alpha = alpha; }

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
  // int8: default Int8Scales (all 1): tmp, the float bias and out are all in the output's units.
  LaunchBiasAdd(s.precision, tmp, bias, tmp, elements, s.shape.n, stream);
  LaunchRelu(s.precision, tmp, out, elements, stream);
}

}  // namespace tg::kernels::cuda
