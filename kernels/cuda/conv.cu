// Convolution + BN + Add + ReLU with cuDNN's legacy convolution API (see conv.h).
//
// Descriptors (cuDNN 9, cudnn_ops.h / cudnn_cnn.h):
// - x: 4d NHWC (dims given as n, c, h, w); y, z and tmp share one NHWC descriptor (n, k, p, q);
//   the bias (BN shift) is 1 x K x 1 x 1 in the same format as the output (as PyTorch does).
// - filter: NHWC format with dims (k, c, r, s), i.e. memory K x R x S x C as reference.h says.
// - convolution: pad, stride, dilation 1, CUDNN_CROSS_CORRELATION (what deep learning and
//   ConvBnAddReluReference compute: no filter flip), compute type CUDNN_DATA_FLOAT for both
//   precisions (fp16 tensors with a float convolution are cuDNN's PSEUDO_HALF_CONFIG; fp32 is
//   FLOAT_CONFIG). Bias, z and y have the tensors' data type in both configurations.
// - math: fp32 uses CUDNN_FMA_MATH, which restricts cuDNN to FMA kernels (CUDNN_DEFAULT_MATH
//   permits TF32 tensor cores on Ampere and later, and the fp32 reference has no TF32); fp16
//   asks for CUDNN_TENSOR_OP_MATH and then uses the math type the heuristic reports for the
//   algorithm it picked (as PyTorch does).
// Algorithms: cudnnGetConvolutionForwardAlgorithm_v7's list, in its order, keeping entries whose
// status is success, whose math type is allowed and whose workspace is known and fits. The fused
// call supports CUDNN_ACTIVATION_IDENTITY only with CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
// so without ReLU that is its only candidate. The v7 heuristic knows nothing of the fused call's
// bias and activation, so when cuDNN answers a Run with a not-supported status (returned before
// anything is launched) the version moves to its next candidate and tries again; that happens in
// the first (warm-up) run and is then remembered. Each refusal is logged on stderr. Not every
// not-supported status is about the algorithm: a missing engine sub-library
// (SUBLIBRARY_UNAVAILABLE), a missing runtime prerequisite (NVRTC for runtime-compiled engines), an
// incompatible driver, runtime or architecture would silently move every version to a slower
// algorithm, so those stop the run with cuDNN's message instead. (CUDNN_LOGLEVEL_DBG=2 makes cuDNN
// say more; docs/gpu/README.md runs the first GPU session with it.)
//
// int8 (semantics ConvBnAddReluInt8Reference; rules from the cuDNN 9 API reference's "supported
// configurations" tables of cudnnConvolutionForward and cudnnConvolutionBiasActivationForward):
// - INT8_CONFIG: x and w CUDNN_DATA_INT8, convolution compute type CUDNN_DATA_INT32, y (and z)
//   CUDNN_DATA_INT8, bias CUDNN_DATA_FLOAT; NHWC only, with the input and output channel counts
//   multiples of 4 (checked, CudaError); DP4A / IMMA GPUs (sm_61 and later, the H200 is sm_90).
// - both calls use INT8_CONFIG: the fused call writes int8 y, the unfused convolution an int8
//   tmp (its own scale), then the int8 element-wise BN (fp32 scale and shift), add and ReLU.
// - the fused call's int8 configurations are implemented by IMPLICIT_PRECOMP_GEMM only, so that
//   is its only candidate; the unfused call takes the heuristic's list.
// - on the H200 both legacy int8 calls ran at 17-18 TOPS (no tensor cores: every call logged an
//   ARCH_MISMATCH engine before cuDNN settled on IMPLICIT_PRECOMP_GEMM's generic kernel), so int8
//   versions first try the same computation through the graph API (conv_graph.h), where cuDNN's
//   Hopper IMMA engines live; a version whose graph no engine builds logs why and keeps the legacy
//   call (Describe() says which path each version took). TRACEGATE_CONV_INT8_LEGACY=1 skips the
//   graphs, for A/B timing.
// - alpha1 / alpha2 (floats, as for every non-double configuration) carry the scales: fused
//   alpha1 = x * w_folded / y, alpha2 = z / y; unfused alpha = x * w / tmp. The bias is added
//   after alpha1, so the float shift is in units of y's scale.
#include "conv.h"

#include <cudnn.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>

#include "conv_graph.h"
#include "cuda_check.h"
#include "device_buffer.h"
#include "elementwise.h"

namespace tg::kernels::cuda {
namespace {

void CheckCudnn(cudnnStatus_t status, const char* call) {
  if (status != CUDNN_STATUS_SUCCESS) ThrowCudaError(call, cudnnGetErrorString(status));
}
#define TG_CUDNN_CHECK(call) CheckCudnn((call), #call)

// A candidate whose workspace exceeds this is skipped (FFT algorithms at large batches).
constexpr size_t kMaxWorkspaceBytes = size_t{1} << 30;

struct Candidate {
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  size_t workspace = 0;
};

// One version (fused or unfused): its own convolution descriptor, since the math type chosen
// per algorithm lives there, and its candidates, the current one at `current`.
struct Version {
  cudnnConvolutionDescriptor_t conv = nullptr;
  std::vector<Candidate> candidates;
  size_t current = 0;
};

const char* AlgoName(cudnnConvolutionFwdAlgo_t algo) {
  switch (algo) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "UNKNOWN";
  }
}

// cuDNN's 4d descriptors take int dimensions; only the padding may be 0.
int Dim(size_t value, const char* what, size_t min = 1) {
  if (value < min || value > static_cast<size_t>(INT_MAX)) {
    throw CudaError(std::string("ConvBnAddRelu: ") + what + " must be between " + std::to_string(min) + " and " +
                    std::to_string(INT_MAX));
  }
  return static_cast<int>(value);
}

// The tensors' type.
cudnnDataType_t DataType(Precision p) {
  switch (p) {
    case Precision::kFp32: return CUDNN_DATA_FLOAT;
    case Precision::kFp16: return CUDNN_DATA_HALF;
    case Precision::kInt8: return CUDNN_DATA_INT8;
  }
  return CUDNN_DATA_FLOAT;
}

// The convolution's compute type: INT32 for int8 (INT8_CONFIG), FLOAT otherwise (FLOAT_CONFIG,
// PSEUDO_HALF_CONFIG).
cudnnDataType_t ComputeType(Precision p) { return p == Precision::kInt8 ? CUDNN_DATA_INT32 : CUDNN_DATA_FLOAT; }

// True when another algorithm may succeed; false for every other status, including the
// not-supported ones that no algorithm can get past (see the file comment).
bool TryNextAlgorithm(cudnnStatus_t status) {
  if (CUDNN_STATUS_CATEGORY(status) != CUDNN_STATUS_NOT_SUPPORTED) return false;
  switch (status) {
    case CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER:
    case CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART:
    case CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH:
    case CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING:
    case CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE: return false;
    default: return true;
  }
}

}  // namespace

struct ConvBnAddRelu::Impl {
  ConvShape shape;
  Precision precision = Precision::kFp32;
  bool add = true, relu = true;
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x_desc = nullptr, y_desc = nullptr, bias_desc = nullptr;
  cudnnFilterDescriptor_t w_desc = nullptr;
  cudnnActivationDescriptor_t act_desc = nullptr;
  Version fused, unfused;
  std::unique_ptr<ConvGraphInt8> graph_fused, graph_unfused;  // int8 through the graph API, when built
  DeviceBuffer workspace;
  ConvInt8Scales int8;  // SetInt8Scales; unused for fp32 and fp16

  ~Impl() {
    graph_fused.reset();  // before the handle they use
    graph_unfused.reset();
    for (Version* v : {&fused, &unfused})
      if (v->conv) cudnnDestroyConvolutionDescriptor(v->conv);
    if (act_desc) cudnnDestroyActivationDescriptor(act_desc);
    if (w_desc) cudnnDestroyFilterDescriptor(w_desc);
    if (bias_desc) cudnnDestroyTensorDescriptor(bias_desc);
    if (y_desc) cudnnDestroyTensorDescriptor(y_desc);
    if (x_desc) cudnnDestroyTensorDescriptor(x_desc);
    if (handle) cudnnDestroy(handle);
  }

  void MakeConvolution(Version& v) {
    TG_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&v.conv));
    const int pad = Dim(shape.pad, "pad", 0), stride = Dim(shape.stride, "stride");
    TG_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(v.conv, pad, pad, stride, stride, /*dilation*/ 1, 1,
                                                   CUDNN_CROSS_CORRELATION, ComputeType(precision)));
    TG_CUDNN_CHECK(cudnnSetConvolutionMathType(
        v.conv, precision == Precision::kFp32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
  }

  bool MathAllowed(cudnnMathType_t math) const {
    // fp32 must not run on TF32 tensor cores.
    return precision != Precision::kFp32 || math == CUDNN_FMA_MATH || math == CUDNN_DEFAULT_MATH;
  }

  void FindCandidates(Version& v, bool fused_version) {
    int max_count = 0;
    TG_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &max_count));
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(std::max(max_count, 1)));
    int returned = 0;
    TG_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle, x_desc, w_desc, v.conv, y_desc,
                                                          static_cast<int>(perf.size()), &returned, perf.data()));
    for (int i = 0; i < returned; ++i) {
      const cudnnConvolutionFwdAlgoPerf_t& r = perf[static_cast<size_t>(i)];
      if (r.status != CUDNN_STATUS_SUCCESS || !MathAllowed(r.mathType)) continue;
      if (fused_version && (!relu || precision == Precision::kInt8) &&
          r.algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM)
        continue;
      Candidate c{r.algo, precision == Precision::kFp32 ? CUDNN_FMA_MATH : r.mathType, 0};
      // The workspace depends on the math type, so ask with the candidate's set.
      TG_CUDNN_CHECK(cudnnSetConvolutionMathType(v.conv, c.math));
      if (cudnnGetConvolutionForwardWorkspaceSize(handle, x_desc, w_desc, v.conv, y_desc, c.algo, &c.workspace) !=
              CUDNN_STATUS_SUCCESS ||
          c.workspace > kMaxWorkspaceBytes)
        continue;
      v.candidates.push_back(c);
    }
    // The fused call is one kernel with IMPLICIT_PRECOMP_GEMM; with other algorithms cuDNN may
    // run the bias and activation as separate kernels, which would not be the fused version
    // the benchmark means to time. So it goes first when it is usable.
    if (fused_version)
      std::stable_partition(v.candidates.begin(), v.candidates.end(), [](const Candidate& c) {
        return c.algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
      });
    if (v.candidates.empty()) {
      throw CudaError(std::string("ConvBnAddRelu: cuDNN has no ") + (fused_version ? "fused" : "unfused") +
                      " convolution algorithm for " + std::string(PrecisionName(precision)) +
                      " NHWC with this shape; try another precision or shape");
    }
    Select(v, 0);
  }

  // int8: each version through the graph API when an engine builds it (see the file comment).
  void MakeGraphs() {
    const char* legacy = std::getenv("TRACEGATE_CONV_INT8_LEGACY");
    if (legacy != nullptr && std::string(legacy) == "1") {
      std::fprintf(stderr, "tracegate kernels: TRACEGATE_CONV_INT8_LEGACY=1: int8 convolutions use the legacy calls\n");
      return;
    }
    for (bool fused_version : {true, false}) {
      try {
        (fused_version ? graph_fused : graph_unfused) = std::make_unique<ConvGraphInt8>(handle, shape, fused_version, add, relu);
      } catch (const CudaError& e) {
        std::fprintf(stderr, "tracegate kernels: int8 %s version keeps the legacy %s (%s): %s\n",
                     fused_version ? "fused" : "unfused",
                     fused_version ? "cudnnConvolutionBiasActivationForward" : "cudnnConvolutionForward",
                     AlgoName((fused_version ? fused : unfused).candidates[0].algo), e.what());
      }
    }
  }

  void Select(Version& v, size_t index) {
    v.current = index;
    TG_CUDNN_CHECK(cudnnSetConvolutionMathType(v.conv, v.candidates[index].math));
  }

  // Makes the workspace hold `bytes`; queued work may still use the buffer it replaces (on any
  // stream a Run was given), so this rare path waits for the device.
  void EnsureWorkspace(size_t bytes) {
    if (bytes <= workspace.bytes()) return;
    TG_CUDA_CHECK(cudaDeviceSynchronize());
    workspace = DeviceBuffer(bytes);
  }

  // Calls `launch(candidate)` until cuDNN accepts a candidate; see the file comment.
  template <typename Launch>
  void RunVersion(Version& v, const char* what, Launch launch) {
    for (;;) {
      const Candidate& c = v.candidates[v.current];
      EnsureWorkspace(c.workspace);
      const cudnnStatus_t status = launch(c);
      if (status == CUDNN_STATUS_SUCCESS) return;
      if (!TryNextAlgorithm(status) || v.current + 1 >= v.candidates.size())
        ThrowCudaError(what, std::string(cudnnGetErrorString(status)) + " (" + AlgoName(c.algo) + ")");
      std::fprintf(stderr, "tracegate kernels: cuDNN refused %s with %s (%s); trying %s\n", what, AlgoName(c.algo),
                   cudnnGetErrorString(status), AlgoName(v.candidates[v.current + 1].algo));
      Select(v, v.current + 1);
    }
  }
};

ConvBnAddRelu::ConvBnAddRelu(const ConvShape& shape, Precision p, bool add, bool relu)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.shape = shape;
  s.precision = p;
  s.add = add;
  s.relu = relu;
  const cudnnDataType_t type = DataType(p);
  if (p == Precision::kInt8 && (shape.c % 4 != 0 || shape.k % 4 != 0)) {
    throw CudaError("ConvBnAddRelu: int8 (cuDNN INT8_CONFIG) needs C and K to be multiples of 4, got C " +
                    std::to_string(shape.c) + ", K " + std::to_string(shape.k) + "; pad the channels or use fp16");
  }
  if (shape.h + 2 * shape.pad < shape.r || shape.w + 2 * shape.pad < shape.s) {
    throw CudaError("ConvBnAddRelu: the filter is larger than the padded input");
  }
  const int n = Dim(shape.n, "batch"), c = Dim(shape.c, "C"), k = Dim(shape.k, "K");
  const int p_out = Dim(shape.p(), "P"), q_out = Dim(shape.q(), "Q");
  Dim(shape.x_elements(), "the input's element count");
  Dim(shape.y_elements(), "the output's element count");

  TG_CUDNN_CHECK(cudnnCreate(&s.handle));
  TG_CUDNN_CHECK(cudnnCreateTensorDescriptor(&s.x_desc));
  TG_CUDNN_CHECK(cudnnSetTensor4dDescriptor(s.x_desc, CUDNN_TENSOR_NHWC, type, n, c, Dim(shape.h, "H"),
                                            Dim(shape.w, "W")));
  TG_CUDNN_CHECK(cudnnCreateTensorDescriptor(&s.y_desc));
  TG_CUDNN_CHECK(cudnnSetTensor4dDescriptor(s.y_desc, CUDNN_TENSOR_NHWC, type, n, k, p_out, q_out));
  TG_CUDNN_CHECK(cudnnCreateTensorDescriptor(&s.bias_desc));
  // The bias is FLOAT in INT8_CONFIG, the tensors' type otherwise.
  TG_CUDNN_CHECK(cudnnSetTensor4dDescriptor(s.bias_desc, CUDNN_TENSOR_NHWC,
                                            p == Precision::kInt8 ? CUDNN_DATA_FLOAT : type, 1, k, 1, 1));
  TG_CUDNN_CHECK(cudnnCreateFilterDescriptor(&s.w_desc));
  TG_CUDNN_CHECK(cudnnSetFilter4dDescriptor(s.w_desc, type, CUDNN_TENSOR_NHWC, k, c, Dim(shape.r, "R"),
                                            Dim(shape.s, "S")));
  TG_CUDNN_CHECK(cudnnCreateActivationDescriptor(&s.act_desc));
  TG_CUDNN_CHECK(cudnnSetActivationDescriptor(s.act_desc, relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
                                              CUDNN_NOT_PROPAGATE_NAN, 0.0));
  s.MakeConvolution(s.fused);
  s.MakeConvolution(s.unfused);

  // Our P and Q (reference.h) must be cuDNN's.
  int on = 0, oc = 0, oh = 0, ow = 0;
  TG_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(s.fused.conv, s.x_desc, s.w_desc, &on, &oc, &oh, &ow));
  if (on != n || oc != k || oh != p_out || ow != q_out) {
    throw CudaError("ConvBnAddRelu: cuDNN's output shape " + std::to_string(on) + "x" + std::to_string(oh) + "x" +
                    std::to_string(ow) + "x" + std::to_string(oc) + " differs from ConvShape's");
  }

  s.FindCandidates(s.fused, /*fused_version=*/true);
  s.FindCandidates(s.unfused, /*fused_version=*/false);
  if (p == Precision::kInt8) s.MakeGraphs();
  s.workspace = DeviceBuffer(std::max(s.fused.candidates[0].workspace, s.unfused.candidates[0].workspace));
}

ConvBnAddRelu::~ConvBnAddRelu() = default;

void ConvBnAddRelu::SetInt8Scales(const ConvInt8Scales& scales) {
  Impl& s = *impl_;
  s.int8 = scales;
  // The same ratios as the legacy calls' alpha1 / alpha2 / alpha (Run).
  if (s.graph_fused) s.graph_fused->SetAlphas(scales.x * scales.w_folded / scales.y, scales.z / scales.y);
  if (s.graph_unfused) s.graph_unfused->SetAlphas(scales.x * scales.w / scales.tmp, 1.0f);
}

void ConvBnAddRelu::Run(bool fused, const Tensors& t, cudaStream_t stream) {
  Impl& s = *impl_;
  TG_CUDNN_CHECK(cudnnSetStream(s.handle, stream));
  // float scaling factors for float, half and int8 data; 1 except for int8, where they carry
  // the scales (see the file comment).
  const bool int8 = s.precision == Precision::kInt8;
  const ConvInt8Scales& q = s.int8;
  const float zero = 0.0f;
  if (fused) {
    // y = act(alpha1 * conv(x, w') + alpha2 * z + shift). Without the residual, z is y with
    // alpha2 = 0 (the call takes no null z), so y's old contents are not added.
    const float alpha1 = int8 ? q.x * q.w_folded / q.y : 1.0f;
    const float alpha2 = s.add ? (int8 ? q.z / q.y : 1.0f) : 0.0f;
    const void* z = s.add ? t.z : t.y;
    if (s.graph_fused) return s.graph_fused->Run(t.x, t.w_folded, s.add ? t.z : nullptr, t.shift, t.y);
    s.RunVersion(s.fused, "cudnnConvolutionBiasActivationForward", [&](const Candidate& c) {
      return cudnnConvolutionBiasActivationForward(s.handle, &alpha1, s.x_desc, t.x, s.w_desc, t.w_folded, s.fused.conv,
                                                   c.algo, s.workspace.get(), s.workspace.bytes(), &alpha2,
                                                   s.y_desc, z, s.bias_desc, t.shift, s.act_desc, s.y_desc, t.y);
    });
    return;
  }
  const float alpha = int8 ? q.x * q.w / q.tmp : 1.0f;
  if (s.graph_unfused) s.graph_unfused->Run(t.x, t.w, nullptr, nullptr, t.tmp);
  else s.RunVersion(s.unfused, "cudnnConvolutionForward", [&](const Candidate& c) {
    return cudnnConvolutionForward(s.handle, &alpha, s.x_desc, t.x, s.w_desc, t.w, s.unfused.conv, c.algo,
                                   s.workspace.get(), s.workspace.bytes(), &zero, s.y_desc, t.tmp);
  });
  // Each step stores (and so rounds) its result; the last step writes y, the others tmp in place.
  // int8: BN reads tmp (scale tmp) and writes y's scale; shift is in y's units; add and ReLU
  // then work at y's scale (ConvBnAddReluInt8Reference).
  const size_t n = s.shape.y_elements(), channels = s.shape.k;
  Int8Scales bn, add, relu;
  bn.a = q.tmp, bn.out = q.y, bn.bias_unit = q.y;
  add.a = q.y, add.b = q.z, add.out = q.y;
  relu.a = q.y, relu.out = q.y;
  LaunchBatchNorm(s.precision, t.tmp, t.scale, t.shift, s.add || s.relu ? t.tmp : t.y, n, channels, stream, bn);
  if (s.add) LaunchAdd(s.precision, t.tmp, t.z, s.relu ? t.tmp : t.y, n, stream, add);
  if (s.relu) LaunchRelu(s.precision, t.tmp, t.y, n, stream, relu);
}

std::string ConvBnAddRelu::Describe() const {
  const Impl& s = *impl_;
  return std::string("fused: ") +
         (s.graph_fused ? s.graph_fused->Describe() : AlgoName(s.fused.candidates[s.fused.current].algo)) +
         ", unfused: " +
         (s.graph_unfused ? s.graph_unfused->Describe() : AlgoName(s.unfused.candidates[s.unfused.current].algo));
}

}  // namespace tg::kernels::cuda
