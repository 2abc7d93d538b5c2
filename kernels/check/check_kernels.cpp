// tracegate-kernel-check: every fused kernel against its unfused pair and the CPU reference, on
// 100 random inputs each (seed 001 5.9). One line per pair:
//   ok   add_relu fp16      100 inputs  max |fused-unfused| 0  max |fused-ref| 0  max |unfused-ref| 0
// Exit 0 when every pair matches within its tolerance (tracegate/kernels/reference.h), 1 when one
// does not (the first mismatch is named) or a library refused one (an "ERROR" line with the
// library's message; the other pairs still run), 2 for bad flags.
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "conv.h"
#include "cuda_check.h"
#include "device_buffer.h"
#include "elementwise.h"
#include "gemm.h"
#include "tensor_io.h"
#include "tracegate/kernels/reference.h"

namespace tg::kernels::cuda {
namespace {

struct PairResult {
  std::string name;
  int inputs = 0;
  double fused_vs_unfused = 0, fused_vs_ref = 0, unfused_vs_ref = 0;
  std::string failure;  // "" when every comparison held
  bool error = false;   // the pair could not run (failure holds the CUDA / cuBLASLt / cuDNN error)
};

// Folds one comparison into the pair's result; the first failure is kept with its details.
void Record(PairResult& r, const char* what, int input, std::span<const float> got, std::span<const float> want,
            Tolerance tol, double PairResult::*field) {
  const CompareResult c = CompareOutputs(got, want, tol);
  r.*field = std::max(r.*field, c.max_abs_error);
  if (c.mismatches > 0 && r.failure.empty()) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s: input %d: %zu mismatches, first at %zu: got %g, want %g (atol %g, rtol %g)",
                  what, input, c.mismatches, c.first_mismatch, double(got[c.first_mismatch]),
                  double(want[c.first_mismatch]), tol.atol, tol.rtol);
    r.failure = buf;
  }
}

// Compares fused and unfused GPU outputs with each other and with their CPU references.
// int8: each version is held to one step of its own reference; the two versions legitimately
// differ by more (the unfused chain requantises every intermediate, the fused convolution uses
// the BN-folded filter, itself quantised), so fused vs unfused is held to what their references
// differ by plus one step for each version: 2 + max |ref fused - ref unfused|.
template <typename RefFn>
void CompareVersions(PairResult& r, int input, Precision p, const std::vector<float>& fused,
                     const std::vector<float>& unfused, Tolerance tol, RefFn ref) {
  std::vector<float> ref_fused(fused.size()), ref_unfused(unfused.size());
  ref(true, std::span<float>(ref_fused));
  ref(false, std::span<float>(ref_unfused));
  Tolerance pair_tol = tol;
  if (p == Precision::kInt8) {
    pair_tol.atol = 2 * tol.atol + CompareOutputs(ref_fused, ref_unfused, Tolerance{}).max_abs_error;
  }
  Record(r, "fused vs unfused", input, fused, unfused, pair_tol, &PairResult::fused_vs_unfused);
  Record(r, "fused vs CPU reference", input, fused, ref_fused, tol, &PairResult::fused_vs_ref);
  Record(r, "unfused vs CPU reference", input, unfused, ref_unfused, tol, &PairResult::unfused_vs_ref);
}

// n is not a multiple of the vector width, so the kernels' scalar tails are checked too.
// int8: q over the whole int8 range with scales 4 / 128 (values in [-4, 4) as for fp32 and fp16),
// fp32 per-channel vectors in [-2, 2), output scale 10 / 127 (|x * scale + bias| <= 10).
PairResult CheckElementwise(ElementwiseOp op, Precision p, int inputs, size_t n, size_t channels) {
  PairResult r{std::string(Info(op).name) + " " + std::string(PrecisionName(p)), inputs, 0, 0, 0, {}};
  const bool int8 = p == Precision::kInt8;
  const Precision cp = ChannelPrecision(p);
  const float range = int8 ? 128.f : 4.f;
  Int8Scales q;
  q.a = q.b = 4.f / 128.f, q.out = 10.f / 127.f;
  Stream stream;
  DeviceBuffer a(n * ElementBytes(p)), b(n * ElementBytes(p)), scale(channels * ElementBytes(cp)),
      bias(channels * ElementBytes(cp)), tmp(n * ElementBytes(p)), out_f(n * ElementBytes(p)), out_u(n * ElementBytes(p));
  for (int i = 0; i < inputs; ++i) {
    const uint64_t seed = 1000 + 10 * uint64_t(i);
    const std::vector<float> ha = RandomTensor(n, seed, -range, range, p),
                             hb = RandomTensor(n, seed + 1, -range, range, p),
                             hs = RandomTensor(channels, seed + 2, -2.f, 2.f, cp),
                             hbias = RandomTensor(channels, seed + 3, -2.f, 2.f, cp);
    UploadInto(ha, p, a.get());
    UploadInto(hb, p, b.get());
    UploadInto(hs, cp, scale.get());
    UploadInto(hbias, cp, bias.get());
    ElementwiseArgs args{a.get(), b.get(), scale.get(), bias.get(), tmp.get(), out_f.get(), n, channels};
    LaunchElementwise(op, p, true, args, stream.get(), q);
    args.out = out_u.get();
    LaunchElementwise(op, p, false, args, stream.get(), q);
    TG_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    const ElementwiseInputs in{ha, hb, hs, hbias, channels};
    CompareVersions(r, i, p, Download(out_f.get(), n, p), Download(out_u.get(), n, p), ElementwiseTolerance(op, p),
                    [&](bool fused, std::span<float> out) {
                      if (int8) ElementwiseInt8Reference(op, fused, in, q, out);
                      else ElementwiseReference(op, p, fused, in, out);
                    });
  }
  return r;
}

// int8: a and bt (B transposed, n x k) q over the whole range; alpha 1 / 2048 (k = 64: acc has a
// standard deviation of 8 * 128 * 128 / 3 = 44000, so outputs of about 21 and the unfused
// GEMM's int8 result saturates only beyond 5.9 of them); the float bias in output units in
// [-16, 16).
PairResult CheckGemm(Precision p, int inputs, GemmShape s) {
  PairResult r{"gemm_bias_relu " + std::string(PrecisionName(p)), inputs, 0, 0, 0, {}};
  const bool int8 = p == Precision::kInt8;
  const Precision cp = ChannelPrecision(p);
  const float range = int8 ? 128.f : 1.f, bias_range = int8 ? 16.f : 1.f, alpha = 1.f / 2048.f;
  Stream stream;
  GemmBiasRelu gemm(s, p);
  if (int8) gemm.SetInt8Alpha(alpha);
  const size_t es = ElementBytes(p);
  DeviceBuffer a(s.m * s.k * es), b(s.k * s.n * es), bias(s.n * ElementBytes(cp)), tmp(s.m * s.n * es),
      out_f(s.m * s.n * es), out_u(s.m * s.n * es);
  for (int i = 0; i < inputs; ++i) {
    const uint64_t seed = 5000 + 10 * uint64_t(i);
    const std::vector<float> ha = RandomTensor(s.m * s.k, seed, -range, range, p),
                             hb = RandomTensor(s.k * s.n, seed + 1, -range, range, p),  // int8: bt
                             hbias = RandomTensor(s.n, seed + 2, -bias_range, bias_range, cp);
    UploadInto(ha, p, a.get());
    UploadInto(hb, p, b.get());
    UploadInto(hbias, cp, bias.get());
    gemm.Run(true, a.get(), b.get(), bias.get(), tmp.get(), out_f.get(), stream.get());
    gemm.Run(false, a.get(), b.get(), bias.get(), tmp.get(), out_u.get(), stream.get());
    TG_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    CompareVersions(r, i, p, Download(out_f.get(), s.m * s.n, p), Download(out_u.get(), s.m * s.n, p),
                    ReductionTolerance(p, s.k), [&](bool fused, std::span<float> out) {
                      if (int8) GemmBiasReluInt8Reference(s, fused, alpha, ha, hb, hbias, out);
                      else GemmBiasReluReference(s, p, fused, ha, hb, hbias, out);
                    });
  }
  return r;
}

// int8: the fp inputs' ranges as q at 1/128 (x, z in [-1, 1), w in [-0.25, 0.25)); the folded
// filter at 1.5 / 128 (BN scale < 1.5 keeps it in range); the convolution of L = R*S*C terms has
// a standard deviation of about sqrt(L) * 0.083 (res3: 2.8), so tmp and y at 1/8 hold +-15.9
// (over 5 of them: saturation, which the fused version does not do in between, stays rare);
// shift (y units) is the fp shift [-0.5, 0.5) * 8.
PairResult CheckConv(Precision p, int inputs, ConvShape s, const std::string& label) {
  PairResult r{"conv_bn_add_relu " + label + " " + std::string(PrecisionName(p)), inputs, 0, 0, 0, {}};
  const bool int8 = p == Precision::kInt8;
  const Precision cp = ChannelPrecision(p);
  const float unit = int8 ? 128.f : 1.f, shift_unit = int8 ? 8.f : 1.f;
  ConvInt8Scales q;
  q.x = q.w = q.z = 1.f / 128.f, q.w_folded = 1.5f / 128.f, q.tmp = q.y = 1.f / 8.f;
  Stream stream;
  ConvBnAddRelu conv(s, p);
  conv.SetInt8Scales(q);
  const size_t es = ElementBytes(p), cs = ElementBytes(cp);
  DeviceBuffer x(s.x_elements() * es), w(s.w_elements() * es), wf(s.w_elements() * es), scale(s.k * cs),
      shift(s.k * cs), z(s.y_elements() * es), tmp(s.y_elements() * es), y_f(s.y_elements() * es),
      y_u(s.y_elements() * es);
  for (int i = 0; i < inputs; ++i) {
    const uint64_t seed = 9000 + 10 * uint64_t(i);
    const std::vector<float> hx = RandomTensor(s.x_elements(), seed, -unit, unit, p),
                             hw = RandomTensor(s.w_elements(), seed + 1, -0.25f * unit, 0.25f * unit, p),
                             hscale = RandomTensor(s.k, seed + 2, 0.5f, 1.5f, cp),
                             hshift = RandomTensor(s.k, seed + 3, -0.5f * shift_unit, 0.5f * shift_unit, cp),
                             hz = RandomTensor(s.y_elements(), seed + 4, -unit, unit, p);
    UploadInto(hx, p, x.get());
    UploadInto(hw, p, w.get());
    UploadInto(int8 ? FoldBnIntoFilterInt8(s, hw, q.w, hscale, q.w_folded) : FoldBnIntoFilter(s, p, hw, hscale), p,
               wf.get());
    UploadInto(hscale, cp, scale.get());
    UploadInto(hshift, cp, shift.get());
    UploadInto(hz, p, z.get());
    ConvBnAddRelu::Tensors t{x.get(), w.get(), wf.get(), scale.get(), shift.get(), z.get(), tmp.get(), y_f.get()};
    conv.Run(true, t, stream.get());
    t.y = y_u.get();
    conv.Run(false, t, stream.get());
    TG_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    CompareVersions(r, i, p, Download(y_f.get(), s.y_elements(), p), Download(y_u.get(), s.y_elements(), p),
                    ReductionTolerance(p, s.r * s.s * s.c), [&](bool fused, std::span<float> out) {
                      if (int8) ConvBnAddReluInt8Reference(s, fused, q, hx, hw, hscale, hshift, hz, out);
                      else ConvBnAddReluReference(s, p, fused, hx, hw, hscale, hshift, hz, out);
                    });
  }
  return r;
}

}  // namespace
}  // namespace tg::kernels::cuda

int main(int argc, char** argv) {
  using namespace tg::kernels;
  using namespace tg::kernels::cuda;
  CLI::App app{"tracegate-kernel-check: every fused kernel against its unfused pair and the CPU reference"};
  int inputs = 100;
  int device = 0;
  std::string only;
  app.add_option("--inputs", inputs, "random inputs per pair (seed 001: 100)")->check(CLI::Range(1, 100000));
  app.add_option("--device", device, "CUDA device")->check(CLI::NonNegativeNumber);
  app.add_option("--only", only, "check only the pairs whose \"<name> <precision>\" contains this text (e.g. add_relu, gemm, conv, int8)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return e.get_exit_code() == 0 ? app.exit(e) : (app.exit(e), 2);
  }
  // --only matches "<pair> <precision>", so "add_relu", "int8" and "gemm_bias_relu fp16" all work.
  constexpr Precision kAll[] = {Precision::kFp32, Precision::kFp16, Precision::kInt8};
  auto wanted = [&](std::string_view pair, Precision p) {
    return only.empty() || (std::string(pair) + " " + std::string(PrecisionName(p))).find(only) != std::string::npos;
  };
  bool any = false;
  for (Precision p : kAll) {
    any = any || wanted("gemm_bias_relu", p) || wanted("conv_bn_add_relu", p);
    for (ElementwiseOp op : kAllElementwiseOps) any = any || wanted(Info(op).name, p);
  }
  if (!any) {
    std::fprintf(stderr, "tracegate-kernel-check: --only '%s' matches no pair (add_relu, mul_relu, scale_bias_relu, "
                 "bias_gelu, gemm_bias_relu, conv_bn_add_relu; fp32, fp16, int8)\n", only.c_str());
    return 2;
  }
  try {
    SelectDevice(device);
  } catch (const CudaError& e) {
    std::fprintf(stderr, "tracegate-kernel-check: %s\n", e.what());
    return 1;
  }
  // Each pair on its own: a configuration a library refuses (no int8 IMMA algorithm with the
  // RELU_BIAS epilogue on this GPU, say) is reported and the other pairs still run. Lines are
  // printed as pairs finish, so a crash or a timeout keeps the ones before it.
  struct Pending {
    std::string name;
    std::function<PairResult()> run;
  };
  std::vector<Pending> pairs;
  // 48 channels: every thread keeps its channels in registers (elementwise_plan.h); 4099 (prime,
  // more blocks than one wave would need): the kernels compute each vector's channels.
  for (ElementwiseOp op : kAllElementwiseOps)
    for (Precision p : kAll)
      if (wanted(Info(op).name, p)) {
        const std::string name = std::string(Info(op).name) + " " + std::string(PrecisionName(p));
        pairs.push_back({name, [=] { return CheckElementwise(op, p, inputs, 4099 * 16 + 5, 48); }});
        if (Info(op).channel_inputs > 0)
          pairs.push_back({name + " c4099", [=] {
                             PairResult r = CheckElementwise(op, p, inputs, 4099 * 16 + 5, 4099);
                             r.name += " c4099";
                             return r;
                           }});
      }
  for (Precision p : kAll)  // n = 80 and k = 64 are multiples of 4, as int8 needs
    if (wanted("gemm_bias_relu", p))
      pairs.push_back({"gemm_bias_relu " + std::string(PrecisionName(p)), [=] { return CheckGemm(p, inputs, GemmShape{96, 80, 64}); }});
  ConvShape small;  // a small NHWC block: 2 x 8 x 8 x 32 -> 32, 3x3, pad 1
  small.n = 2, small.h = 8, small.w = 8, small.c = 32, small.k = 32;
  for (Precision p : kAll)
    if (wanted("conv_bn_add_relu", p)) {
      const std::string prec(PrecisionName(p));
      pairs.push_back({"conv_bn_add_relu 2x8x8x32 " + prec, [=] { return CheckConv(p, inputs, small, "2x8x8x32"); }});
      pairs.push_back({"conv_bn_add_relu res3 batch 1 " + prec, [=] { return CheckConv(p, 1, Res3Shape(1), "res3 batch 1"); }});
    }
  int failed = 0, errors = 0;
  for (const Pending& pending : pairs) {
    PairResult r;
    try {
      r = pending.run();
    } catch (const CudaError& e) {
      r = PairResult{pending.name, 0, 0, 0, 0, e.what(), true};
      // A launch error may leave the CUDA context unusable; later pairs then report it too.
      cudaGetLastError();
    }
    if (r.error) {
      std::printf("%-5s %-34s %s\n", "ERROR", r.name.c_str(), r.failure.c_str());
      ++errors;
    } else {
      std::printf("%-5s %-34s %4d inputs  max |fused-unfused| %.3g  max |fused-ref| %.3g  max |unfused-ref| %.3g\n",
                  r.failure.empty() ? "ok" : "FAIL", r.name.c_str(), r.inputs, r.fused_vs_unfused, r.fused_vs_ref,
                  r.unfused_vs_ref);
      if (!r.failure.empty()) {
        std::printf("      %s\n", r.failure.c_str());
        ++failed;
      }
    }
    std::fflush(stdout);
  }
  std::printf("%zu pairs checked, %d failed, %d could not run\n", pairs.size(), failed, errors);
  return failed == 0 && errors == 0 ? 0 : 1;
}
