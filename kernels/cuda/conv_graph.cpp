// int8 Conv (+ BN + Add + ReLU) through cuDNN's backend API (see conv_graph.h).
//
// Descriptors (cuDNN 9 cudnn_graph.h): tensors are 4-d with dimensions in N, C, H, W order and
// NHWC strides (C innermost), the filter K, C, R, S with KRSC strides; int8 tensors INT8, the
// convolution's compute type INT32, its output and every intermediate a virtual FLOAT tensor,
// the pointwise math FLOAT. Unique ids are fixed per role (enum Uid).
#include "conv_graph.h"

#include <cstdio>
#include <cstring>
#include <vector>

#include "cuda_check.h"
#include "device_buffer.h"

namespace tg::kernels::cuda {
namespace {

enum Uid : int64_t { kX = 1, kW, kAcc, kAlpha1, kT1, kZ, kAlpha2, kT2, kT3, kBias, kT4, kY };

std::string StatusText(cudnnStatus_t s) { return cudnnGetErrorString(s); }

// An owned backend descriptor.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t type) {
    const cudnnStatus_t s = cudnnBackendCreateDescriptor(type, &d_);
    if (s != CUDNN_STATUS_SUCCESS) ThrowCudaError("cudnnBackendCreateDescriptor", StatusText(s));
  }
  ~Desc() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  Desc(Desc&& o) noexcept : d_(o.d_) { o.d_ = nullptr; }
  cudnnBackendDescriptor_t get() const { return d_; }

  Desc& Set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count, const void* v) {
    const cudnnStatus_t s = cudnnBackendSetAttribute(d_, name, type, count, v);
    if (s != CUDNN_STATUS_SUCCESS)
      ThrowCudaError("cudnnBackendSetAttribute", StatusText(s) + " (attribute " + std::to_string(int(name)) + ")");
    return *this;
  }
  Desc& SetInts(cudnnBackendAttributeName_t name, const std::vector<int64_t>& v) {
    return Set(name, CUDNN_TYPE_INT64, int64_t(v.size()), v.data());
  }
  Desc& SetDesc(cudnnBackendAttributeName_t name, const Desc& d) {
    const cudnnBackendDescriptor_t raw = d.get();
    return Set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
  }
  // Finalizes; returns cuDNN's status (refusals are expected for some engines).
  cudnnStatus_t TryFinalize() { return cudnnBackendFinalize(d_); }
  Desc& Finalize(const char* what) {
    const cudnnStatus_t s = TryFinalize();
    if (s != CUDNN_STATUS_SUCCESS) ThrowCudaError(what, StatusText(s));
    return *this;
  }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

// dims in N, C, H, W order; NHWC strides.
Desc Tensor(int64_t uid, cudnnDataType_t type, int64_t n, int64_t c, int64_t h, int64_t w, bool is_virtual) {
  Desc t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const int64_t alignment = 16;
  t.Set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type)
      .SetInts(CUDNN_ATTR_TENSOR_DIMENSIONS, {n, c, h, w})
      .SetInts(CUDNN_ATTR_TENSOR_STRIDES, {h * w * c, 1, w * c, c})
      .Set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid)
      .Set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment)
      .Set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual)
      .Finalize("int8 graph tensor");
  return t;
}

// y = op(x[, b]) in float math.
Desc Pointwise(cudnnPointwiseMode_t mode, const Desc& x, const Desc* b, const Desc& y) {
  Desc pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  const cudnnDataType_t math = CUDNN_DATA_FLOAT;
  pw.Set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode)
      .Set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &math)
      .Finalize("int8 graph pointwise descriptor");
  Desc op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  op.SetDesc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw).SetDesc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
  if (b) op.SetDesc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
  op.SetDesc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y).Finalize("int8 graph pointwise operation");
  return op;
}

const char* HeurName(cudnnBackendHeurMode_t m) { return m == CUDNN_HEUR_MODE_A ? "heuristics A" : "fallback list"; }

}  // namespace

struct ConvGraphInt8::Impl {
  cudnnHandle_t handle = nullptr;
  ConvShape shape;
  bool fused = false, add = false, relu = false;
  std::string what;  // "int8 fused 28x28x128->128 3x3" for the log
  std::vector<Desc> keep;  // descriptors the plan refers to
  std::unique_ptr<Desc> plan;
  int64_t engine = -1;
  bool tensor_cores = false;
  DeviceBuffer workspace, alpha1, alpha2;

  void Build();
  bool TryEngines(const Desc& graph, cudnnBackendHeurMode_t mode, std::string& refusals);
};

void ConvGraphInt8::Impl::Build() {
  const ConvShape& s = shape;
  keep.reserve(64);  // references into `keep` stay valid while it grows
  const int64_t n = int64_t(s.n), c = int64_t(s.c), k = int64_t(s.k), p = int64_t(s.p()), q = int64_t(s.q());
  keep.push_back(Tensor(kX, CUDNN_DATA_INT8, n, c, int64_t(s.h), int64_t(s.w), false));
  const Desc& x = keep.back();
  keep.push_back(Tensor(kW, CUDNN_DATA_INT8, k, c, int64_t(s.r), int64_t(s.s), false));
  const Desc& w = keep.back();
  keep.push_back(Tensor(kAcc, CUDNN_DATA_FLOAT, n, k, p, q, true));
  const Desc& acc = keep.back();

  Desc conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_INT32;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const int64_t dims = 2, stride = int64_t(s.stride), pad = int64_t(s.pad);
  conv.Set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute)
      .Set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode)
      .Set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims)
      .SetInts(CUDNN_ATTR_CONVOLUTION_DILATIONS, {1, 1})
      .SetInts(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, {stride, stride})
      .SetInts(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, {pad, pad})
      .SetInts(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, {pad, pad})
      .Finalize("int8 graph convolution descriptor");
  Desc conv_op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  const float one = 1.0f, zero = 0.0f;
  conv_op.SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x)
      .SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w)
      .SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, acc)
      .SetDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv)
      .Set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &one)
      .Set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &zero)
      .Finalize("int8 graph convolution operation");
  std::vector<Desc> ops;
  ops.push_back(std::move(conv_op));
  keep.push_back(std::move(conv));

  // Per-channel vectors and the chain of pointwise operations.
  keep.push_back(Tensor(kAlpha1, CUDNN_DATA_FLOAT, 1, k, 1, 1, false));
  const Desc& a1 = keep.back();
  if (!fused) {
    keep.push_back(Tensor(kY, CUDNN_DATA_INT8, n, k, p, q, false));
    ops.push_back(Pointwise(CUDNN_POINTWISE_MUL, acc, &a1, keep.back()));
  } else {
    keep.push_back(Tensor(kT1, CUDNN_DATA_FLOAT, n, k, p, q, true));
    const Desc* sum = &keep.back();
    ops.push_back(Pointwise(CUDNN_POINTWISE_MUL, acc, &a1, *sum));
    if (add) {
      keep.push_back(Tensor(kZ, CUDNN_DATA_INT8, n, k, p, q, false));
      const Desc& z = keep.back();
      keep.push_back(Tensor(kAlpha2, CUDNN_DATA_FLOAT, 1, k, 1, 1, false));
      const Desc& a2 = keep.back();
      keep.push_back(Tensor(kT2, CUDNN_DATA_FLOAT, n, k, p, q, true));
      const Desc& t2 = keep.back();
      ops.push_back(Pointwise(CUDNN_POINTWISE_MUL, z, &a2, t2));
      keep.push_back(Tensor(kT3, CUDNN_DATA_FLOAT, n, k, p, q, true));
      ops.push_back(Pointwise(CUDNN_POINTWISE_ADD, *sum, &t2, keep.back()));
      sum = &keep.back();
    }
    keep.push_back(Tensor(kBias, CUDNN_DATA_FLOAT, 1, k, 1, 1, false));
    const Desc& bias = keep.back();
    keep.push_back(Tensor(kT4, CUDNN_DATA_FLOAT, n, k, p, q, true));
    const Desc& t4 = keep.back();
    ops.push_back(Pointwise(CUDNN_POINTWISE_ADD, *sum, &bias, t4));
    keep.push_back(Tensor(kY, CUDNN_DATA_INT8, n, k, p, q, false));
    ops.push_back(Pointwise(relu ? CUDNN_POINTWISE_RELU_FWD : CUDNN_POINTWISE_IDENTITY, t4, nullptr, keep.back()));
  }

  Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  std::vector<cudnnBackendDescriptor_t> raw;
  for (const Desc& op : ops) raw.push_back(op.get());
  graph.Set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, int64_t(raw.size()), raw.data())
      .Set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle)
      .Finalize("int8 operation graph");
  for (Desc& op : ops) keep.push_back(std::move(op));

  std::string refusals;
  if (!TryEngines(graph, CUDNN_HEUR_MODE_A, refusals) && !TryEngines(graph, CUDNN_HEUR_MODE_FALLBACK, refusals))
    throw CudaError("cuDNN graph API: no engine for " + what + (refusals.empty() ? ": the heuristics offered none" : refusals));
  keep.push_back(std::move(graph));
}

// Tries the configurations the heuristics in `mode` offer, in order; keeps the first whose plan
// finalizes. Logs each refusal and appends it to `refusals`.
bool ConvGraphInt8::Impl::TryEngines(const Desc& graph, cudnnBackendHeurMode_t mode, std::string& refusals) {
  Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heur.SetDesc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph).Set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  if (const cudnnStatus_t s = heur.TryFinalize(); s != CUDNN_STATUS_SUCCESS) {
    refusals += std::string("; ") + HeurName(mode) + ": " + StatusText(s);
    std::fprintf(stderr, "tracegate kernels: cuDNN graph %s for %s: %s\n", HeurName(mode), what.c_str(), StatusText(s).c_str());
    return false;
  }
  int64_t count = 0;
  if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                               nullptr) != CUDNN_STATUS_SUCCESS || count <= 0)
    return false;
  std::vector<Desc> cfgs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    cfgs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    raw.push_back(cfgs.back().get());
  }
  int64_t got = 0;
  if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                               raw.data()) != CUDNN_STATUS_SUCCESS)
    return false;
  for (int64_t i = 0; i < got; ++i) {
    // The engine's global index and notes, for the log and Describe().
    Desc engine_desc(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    cudnnBackendDescriptor_t engine_raw = engine_desc.get();
    int64_t one = 0, index = -1, notes_count = 0;
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    bool tc = false;
    if (cudnnBackendGetAttribute(raw[size_t(i)], CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &one,
                                 &engine_raw) == CUDNN_STATUS_SUCCESS) {
      cudnnBackendGetAttribute(engine_raw, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &one, &index);
      if (cudnnBackendGetAttribute(engine_raw, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                   CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &notes_count, notes) == CUDNN_STATUS_SUCCESS)
        for (int64_t j = 0; j < notes_count; ++j) tc = tc || notes[j] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
    }
    auto candidate = std::make_unique<Desc>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    candidate->Set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle)
        .Set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw[size_t(i)]);
    const cudnnStatus_t s = candidate->TryFinalize();
    if (s != CUDNN_STATUS_SUCCESS) {
      const std::string line = "engine " + std::to_string(index) + (tc ? " (tensor cores)" : "") + ": " + StatusText(s);
      refusals += "; " + std::string(HeurName(mode)) + " " + line;
      std::fprintf(stderr, "tracegate kernels: cuDNN graph refused %s for %s\n", line.c_str(), what.c_str());
      continue;
    }
    int64_t bytes = 0;
    cudnnBackendGetAttribute(candidate->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &one, &bytes);
    workspace = DeviceBuffer(size_t(bytes > 0 ? bytes : 0));
    plan = std::move(candidate);
    engine = index;
    tensor_cores = tc;
    keep.push_back(std::move(cfgs[size_t(i)]));
    return true;
  }
  return false;
}

ConvGraphInt8::ConvGraphInt8(cudnnHandle_t handle, const ConvShape& shape, bool fused, bool add, bool relu)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.handle = handle;
  s.shape = shape;
  s.fused = fused;
  s.add = add && fused;
  s.relu = relu && fused;
  s.what = std::string("int8 ") + (fused ? "fused " : "unfused ") + std::to_string(shape.h) + "x" +
           std::to_string(shape.w) + "x" + std::to_string(shape.c) + "->" + std::to_string(shape.k) + " " +
           std::to_string(shape.r) + "x" + std::to_string(shape.s) + " batch " + std::to_string(shape.n);
  s.alpha1 = DeviceBuffer(shape.k * sizeof(float));
  s.alpha2 = DeviceBuffer(shape.k * sizeof(float));
  SetAlphas(1.0f, 1.0f);
  s.Build();
}

ConvGraphInt8::~ConvGraphInt8() = default;

void ConvGraphInt8::SetAlphas(float alpha1, float alpha2) {
  const std::vector<float> a1(impl_->shape.k, alpha1), a2(impl_->shape.k, alpha2);
  TG_CUDA_CHECK(cudaMemcpy(impl_->alpha1.get(), a1.data(), a1.size() * sizeof(float), cudaMemcpyHostToDevice));
  TG_CUDA_CHECK(cudaMemcpy(impl_->alpha2.get(), a2.data(), a2.size() * sizeof(float), cudaMemcpyHostToDevice));
}

void ConvGraphInt8::Run(const void* x, const void* w, const void* z, const void* bias, void* y) {
  Impl& s = *impl_;
  std::vector<int64_t> uids = {kX, kW, kAlpha1, kY};
  std::vector<void*> ptrs = {const_cast<void*>(x), const_cast<void*>(w), s.alpha1.get(), y};
  if (s.fused) {
    uids.push_back(kBias);
    ptrs.push_back(const_cast<void*>(bias));
    if (s.add) {
      uids.insert(uids.end(), {kZ, kAlpha2});
      ptrs.insert(ptrs.end(), {const_cast<void*>(z), s.alpha2.get()});
    }
  }
  Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  void* ws = s.workspace.get();
  pack.Set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, int64_t(uids.size()), uids.data())
      .Set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, int64_t(ptrs.size()), ptrs.data())
      .Set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws)
      .Finalize("int8 graph variant pack");
  const cudnnStatus_t st = cudnnBackendExecute(s.handle, s.plan->get(), pack.get());
  if (st != CUDNN_STATUS_SUCCESS) ThrowCudaError("cudnnBackendExecute", StatusText(st) + " (" + s.what + ")");
}

std::string ConvGraphInt8::Describe() const {
  return "graph engine " + std::to_string(impl_->engine) + (impl_->tensor_cores ? ", tensor cores" : ", no tensor-core note");
}

}  // namespace tg::kernels::cuda
