// The mini inference model: one iteration is
//   pre   (CPU) collate the batch's 8-bit RGB images into the host staging buffer
//   h2d   the staging buffer to the device, as --split-h2d copies
//   infer normalise (GPU), stem, res2..res5 (transition + blocks, fused or not), pool, classifier
//   d2h   the logits to the host, then wait for the stream
//   post  (CPU) top-k per image (+ --post-ms of extra work)
// each in an NVTX range of that name inside "iteration" ("warmup" for warm-up iterations), the
// stages in ranges "resN bytes=B flops=F", their blocks (not the transition) in "resN blocks". With --streams N the batch is split into N
// micro-batches, each with its own stream, buffers and cuDNN handles, issued one after another so
// that one micro-batch's copies overlap another's compute.
//
// int8 (--precision int8): every convolution runs cuDNN's INT8_CONFIG (conv.h) with per-tensor
// scales fixed in advance, not calibrated: the normalised input at 2.7 / 127 (its values lie in
// [-2.12, 2.64]), every activation at 4 / 127, each layer's filter at its weights' bound / 127 and
// the BN-folded filter at bound * 0.8 / 127 (BN scale < 0.8); BN scale and shift fp32. The pool
// dequantises into fp32 and the classifier stays fp32. Activations above 4 saturate: a timing
// workload, not an accuracy one.
#include "model.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "conv.h"
#include "cuda_check.h"
#include "device_buffer.h"
#include "model_kernels.h"
#include "tensor_io.h"
#include "tracegate/collector/nvtx_range.h"

namespace tg::kernels::cuda {
namespace {

constexpr size_t kInputChannels = 8;  // RGB padded to 8 for tensor cores
constexpr size_t kStemChannels = 64;
constexpr float kInt8InputScale = 2.7f / 127.f;
constexpr float kInt8ActivationScale = 4.f / 127.f;
constexpr float kBnScaleMax = 0.8f;

using Clock = std::chrono::steady_clock;

// CPU work that must not be optimised away: spin until `us` microseconds have passed.
void BusyWait(double us) {
  if (us <= 0) return;
  const auto until = Clock::now() + std::chrono::duration<double, std::micro>(us);
  while (Clock::now() < until) {
  }
}

// The weights of one convolution + BN layer (shared by every stream).
struct Layer {
  ConvShape shape;  // for one micro-batch
  DeviceBuffer w, w_folded, scale, shift;
  ConvInt8Scales int8;  // int8 only
};

// Uniform weights of about 1 / sqrt(fan-in) and a BN scale under 1 keep the activations of the
// residual stack bounded (fp16 must not overflow through 16 blocks). int8: the same real weights,
// quantised (see the file comment); `input_scale` is the int8 scale of the layer's input.
Layer MakeLayer(const ConvShape& s, Precision p, uint64_t seed, float input_scale = kInt8ActivationScale) {
  const float bound = 1.0f / std::sqrt(float(s.r * s.s * s.c));
  if (p != Precision::kInt8) {
    const std::vector<float> w = RandomTensor(s.w_elements(), seed, -bound, bound, p);
    const std::vector<float> scale = RandomTensor(s.k, seed + 1, 0.4f, kBnScaleMax, p);
    return Layer{s, Upload(w, p), Upload(FoldBnIntoFilter(s, p, w, scale), p), Upload(scale, p),
                 Upload(RandomTensor(s.k, seed + 2, -0.1f, 0.1f, p), p), {}};
  }
  constexpr Precision f = Precision::kFp32;  // the fp32 per-channel vectors
  ConvInt8Scales q;
  q.x = input_scale;
  q.w = Int8ScaleFor(bound);
  q.w_folded = Int8ScaleFor(bound * kBnScaleMax);
  q.z = q.y = q.tmp = kInt8ActivationScale;
  const std::vector<float> w = QuantizeTensor(RandomTensor(s.w_elements(), seed, -bound, bound, f), q.w);
  const std::vector<float> scale = RandomTensor(s.k, seed + 1, 0.4f, kBnScaleMax, f);
  std::vector<float> shift = RandomTensor(s.k, seed + 2, -0.1f, 0.1f, f);
  for (float& v : shift) v /= q.y;  // in units of y's scale
  return Layer{s, Upload(w, p), Upload(FoldBnIntoFilterInt8(s, w, q.w, scale, q.w_folded), p), Upload(scale, f),
               Upload(shift, f), q};
}

ConvBnAddRelu::Tensors TensorsOf(const Layer& l, const void* x, const void* z, void* tmp, void* y) {
  return {x, l.w.get(), l.w_folded.get(), l.scale.get(), l.shift.get(), z, tmp, y};
}

struct StageWeights {
  StageSpec spec;
  bool fused = false;
  std::string range;  // "res3 bytes=... flops=..."
  std::optional<Layer> transition;
  std::vector<Layer> blocks;
};

struct Network {
  Layer stem;
  std::vector<StageWeights> stages;
  DeviceBuffer fc_w, fc_b;  // fp32, channels x classes and classes
  size_t features = 0;      // channels into the classifier
};

Network BuildNetwork(const ModelOptions& o, size_t micro) {
  const Precision p = o.precision;
  uint64_t seed = o.seed * 1000003;
  ConvShape stem;
  stem.n = micro, stem.h = o.image, stem.w = o.image, stem.c = kInputChannels, stem.k = kStemChannels;
  stem.r = 4, stem.s = 4, stem.stride = 4, stem.pad = 0;
  Network net{MakeLayer(stem, p, seed += 10, kInt8InputScale), {}, {}, {}, 0};
  for (const StageSpec& spec : ModelStages(o.image)) {
    StageWeights st;
    st.spec = spec;
    st.fused = StageFused(o, spec.name);
    // Each stream's range covers its own micro-batch, so it carries that micro-batch's costs.
    const Costs c = StageCosts(spec, micro, p, st.fused);
    st.range = CostAnnotation(spec.name, c.bytes, c.flops);
    if (spec.in_channels > 0) st.transition = MakeLayer(StageTransitionShape(spec, micro), p, seed += 10);
    const ConvShape block = StageBlockShape(spec, micro);
    for (size_t b = 0; b < spec.blocks; ++b) st.blocks.push_back(MakeLayer(block, p, seed += 10));
    net.features = spec.channels;
    net.stages.push_back(std::move(st));
  }
  const float bound = 1.0f / std::sqrt(float(net.features));
  net.fc_w = Upload(RandomTensor(net.features * o.classes, seed += 10, -bound, bound, Precision::kFp32), Precision::kFp32);
  net.fc_b = Upload(RandomTensor(o.classes, seed += 10, -0.1f, 0.1f, Precision::kFp32), Precision::kFp32);
  return net;
}

// One micro-batch's stream, convolution plans and buffers.
struct Lane {
  size_t batch = 0;  // images in this micro-batch
  size_t first = 0;  // index of its first image in the batch
  Stream stream;
  std::unique_ptr<ConvBnAddRelu> stem;
  std::vector<std::unique_ptr<ConvBnAddRelu>> transition, block;  // per stage (transition may be null)
  DeviceBuffer images, input, act_a, act_b, tmp, pooled, logits;
  HostBuffer logits_host;
};

std::unique_ptr<Lane> MakeLane(const ModelOptions& o, const Network& net, size_t micro, size_t first) {
  auto lane = std::make_unique<Lane>();
  lane->batch = micro;
  lane->first = first;
  const Precision p = o.precision;
  lane->stem = std::make_unique<ConvBnAddRelu>(net.stem.shape, p, /*add=*/false, /*relu=*/true);
  lane->stem->SetInt8Scales(net.stem.int8);
  size_t max_act = net.stem.shape.y_elements();
  for (const StageWeights& st : net.stages) {
    lane->transition.push_back(st.transition ? std::make_unique<ConvBnAddRelu>(st.transition->shape, p, false, true)
                                             : nullptr);
    if (st.transition) lane->transition.back()->SetInt8Scales(st.transition->int8);
    // A stage's blocks share one shape, so one set of scales (same bound, same BN range).
    lane->block.push_back(std::make_unique<ConvBnAddRelu>(st.blocks.front().shape, p, true, true));
    lane->block.back()->SetInt8Scales(st.blocks.front().int8);
    max_act = std::max(max_act, st.blocks.front().shape.y_elements());
  }
  const size_t es = ElementBytes(p);
  lane->images = DeviceBuffer(micro * o.image * o.image * 3);
  lane->input = DeviceBuffer(micro * o.image * o.image * kInputChannels * es);
  lane->act_a = DeviceBuffer(max_act * es);
  lane->act_b = DeviceBuffer(max_act * es);
  lane->tmp = DeviceBuffer(max_act * es);
  lane->pooled = DeviceBuffer(micro * net.features * sizeof(float));
  lane->logits = DeviceBuffer(micro * o.classes * sizeof(float));
  lane->logits_host = HostBuffer(micro * o.classes * sizeof(float), !o.pageable);
  // Layers without a residual pass y as cuDNN's z with alpha2 = 0: start from zeros, not from
  // whatever the allocation held (0 * NaN is NaN).
  for (DeviceBuffer* b : {&lane->act_a, &lane->act_b, &lane->tmp}) TG_CUDA_CHECK(cudaMemset(b->get(), 0, b->bytes()));
  return lane;
}

// Enqueues the network for one lane; the input images are already on the device.
void EnqueueInfer(const ModelOptions& o, const Network& net, Lane& lane) {
  const Precision p = o.precision;
  const cudaStream_t s = lane.stream.get();
  const size_t pixels = lane.batch * o.image * o.image;
  LaunchNormalize(p, lane.images.as<uint8_t>(), lane.input.get(), pixels, kInputChannels, s, kInt8InputScale);
  void* x = lane.act_a.get();
  void* y = lane.act_b.get();
  lane.stem->Run(true, TensorsOf(net.stem, lane.input.get(), nullptr, lane.tmp.get(), x), s);
  for (size_t i = 0; i < net.stages.size(); ++i) {
    const StageWeights& st = net.stages[i];
    NvtxRange range(st.range);
    if (st.transition) {
      BusyWait(double(o.host_gap_us));
      lane.transition[i]->Run(true, TensorsOf(*st.transition, x, nullptr, lane.tmp.get(), y), s);
      std::swap(x, y);
    }
    {
      // The blocks alone (without the transition): the part whose S the benchmark measures
      // (conv_bn_add_relu/res3), so Amdahl's P is taken from this range (tests/gpu/amdahl_gpu.py).
      NvtxRange blocks_range(st.spec.name + " blocks");
      const double slow = SlowFactor(o, st.spec.name);
      for (size_t b = 0; b < st.blocks.size(); ++b) {
        const Layer& block = st.blocks[b];
        BusyWait(double(o.host_gap_us));
        // y = relu(bn(conv(x)) + x): the block's input is its residual. --slow runs it again
        // (the same y from the same x) right after, on the same stream.
        for (size_t r = 0; r <= SlowRepeats(slow, st.blocks.size(), b); ++r)
          lane.block[i]->Run(st.fused, TensorsOf(block, x, x, lane.tmp.get(), y), s);
        std::swap(x, y);
      }
    }
    if (o.sync_stages) TG_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  const ConvShape& last = net.stages.back().blocks.front().shape;
  LaunchGlobalAvgPool(p, x, lane.pooled.as<float>(), lane.batch, last.p() * last.q(), net.features, s,
                      kInt8ActivationScale);
  LaunchFullyConnected(lane.pooled.as<float>(), net.fc_w.as<float>(), net.fc_b.as<float>(), lane.logits.as<float>(),
                       lane.batch, net.features, o.classes, s);
}

}  // namespace

ModelRun RunModel(const ModelOptions& o) {
  SelectDevice(o.device);
  const size_t micro = o.batch / size_t(o.streams);
  const Network net = BuildNetwork(o, micro);
  std::vector<std::unique_ptr<Lane>> lanes;
  for (int i = 0; i < o.streams; ++i) lanes.push_back(MakeLane(o, net, micro, size_t(i) * micro));

  // The "decoded" images the pipeline starts from, and the host staging buffer pre fills.
  const size_t image_bytes = o.image * o.image * 3;
  std::vector<uint8_t> decoded(o.batch * image_bytes);
  uint64_t state = o.seed;
  for (auto& v : decoded) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    v = uint8_t(state >> 56);
  }
  HostBuffer staging(o.batch * image_bytes, !o.pageable);

  ModelRun run;
  const int total = o.warmup + o.iterations;
  for (int it = 0; it < total; ++it) {
    const bool measured = it >= o.warmup;
    const auto t0 = Clock::now();
    {
      NvtxRange iteration(measured ? "iteration" : "warmup");
      {
        NvtxRange r("pre");
        std::memcpy(staging.get(), decoded.data(), decoded.size());
      }
      {
        NvtxRange r("h2d");
        for (auto& lane : lanes) {
          const size_t bytes = lane->batch * image_bytes;
          const size_t chunk = (bytes + size_t(o.split_h2d) - 1) / size_t(o.split_h2d);
          for (size_t off = 0; off < bytes; off += chunk)
            TG_CUDA_CHECK(cudaMemcpyAsync(lane->images.as<uint8_t>() + off, staging.as<uint8_t>() + lane->first * image_bytes + off,
                                          std::min(chunk, bytes - off), cudaMemcpyHostToDevice, lane->stream.get()));
        }
      }
      {
        NvtxRange r("infer");
        for (auto& lane : lanes) EnqueueInfer(o, net, *lane);
      }
      {
        NvtxRange r("d2h");
        for (auto& lane : lanes)
          TG_CUDA_CHECK(cudaMemcpyAsync(lane->logits_host.get(), lane->logits.get(), lane->logits_host.bytes(),
                                        cudaMemcpyDeviceToHost, lane->stream.get()));
        for (auto& lane : lanes) TG_CUDA_CHECK(cudaStreamSynchronize(lane->stream.get()));
      }
      {
        NvtxRange r("post");
        run.top_k.clear();
        for (auto& lane : lanes) {
          const float* logits = lane->logits_host.as<float>();
          for (size_t n = 0; n < lane->batch; ++n)
            run.top_k.push_back(TopK(std::span<const float>(logits + n * o.classes, o.classes), o.top_k));
        }
        BusyWait(o.post_ms * 1000.0);
      }
    }
    if (measured) run.latency_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  // After the runs: a fused call cuDNN refused on the first run moved to its next algorithm.
  for (size_t i = 0; i < net.stages.size(); ++i) {
    const StageWeights& st = net.stages[i];
    run.stage_notes.push_back(st.spec.name + (st.fused ? " fused, " : " unfused, ") + "cuDNN " +
                              lanes.front()->block[i]->Describe());
  }
  return run;
}

}  // namespace tg::kernels::cuda
