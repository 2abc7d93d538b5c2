// tracegate-kernel-check: every fused kernel against its unfused pair and the CPU reference, on
// 100 random inputs each (seed 001 5.9). One line per pair:
//   ok   add_relu fp16      100 inputs  max |fused-unfused| 0  max |fused-ref| 0  max |unfused-ref| 0
// Exit 0 when every pair matches within its tolerance (tracegate/kernels/reference.h), 1 when one
// does not (the first mismatch is named), 2 for bad flags.
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <string>
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
template <typename RefFn>
void CompareVersions(PairResult& r, int input, const std::vector<float>& fused, const std::vector<float>& unfused,
                     Tolerance tol, RefFn ref) {
  std::vector<float> ref_fused(fused.size()), ref_unfused(unfused.size());
  ref(true, std::span<float>(ref_fused));
  ref(false, std::span<float>(ref_unfused));
  Record(r, "fused vs unfused", input, fused, unfused, tol, &PairResult::fused_vs_unfused);
  Record(r, "fused vs CPU reference", input, fused, ref_fused, tol, &PairResult::fused_vs_ref);
  Record(r, "unfused vs CPU reference", input, unfused, ref_unfused, tol, &PairResult::unfused_vs_ref);
}

// n is not a multiple of the vector width, so the kernels' scalar tails are checked too.
PairResult CheckElementwise(ElementwiseOp op, Precision p, int inputs, size_t n, size_t channels) {
  PairResult r{std::string(Info(op).name) + " " + std::string(PrecisionName(p)), inputs, 0, 0, 0, {}};
  Stream stream;
  DeviceBuffer a(n * ElementBytes(p)), b(n * ElementBytes(p)), scale(channels * ElementBytes(p)),
      bias(channels * ElementBytes(p)), tmp(n * ElementBytes(p)), out_f(n * ElementBytes(p)), out_u(n * ElementBytes(p));
  for (int i = 0; i < inputs; ++i) {
    const uint64_t seed = 1000 + 10 * uint64_t(i);
    const std::vector<float> ha = RandomTensor(n, seed, -4.f, 4.f, p), hb = RandomTensor(n, seed + 1, -4.f, 4.f, p),
                             hs = RandomTensor(channels, seed + 2, -2.f, 2.f, p),
                             hbias = RandomTensor(channels, seed + 3, -2.f, 2.f, p);
    UploadInto(ha, p, a.get());
    UploadInto(hb, p, b.get());
    UploadInto(hs, p, scale.get());
    UploadInto(hbias, p, bias.get());
    ElementwiseArgs args{a.get(), b.get(), scale.get(), bias.get(), tmp.get(), out_f.get(), n, channels};
    LaunchElementwise(op, p, true, args, stream.get());
    args.out = out_u.get();
    LaunchElementwise(op, p, false, args, stream.get());
    TG_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    const ElementwiseInputs in{ha, hb, hs, hbias, channels};
    CompareVersions(r, i, Download(out_f.get(), n, p), Download(out_u.get(), n, p), ElementwiseTolerance(op, p),
                    [&](bool fused, std::span<float> out) { ElementwiseReference(op, p, fused, in, out); });
  }
  return r;
}

PairResult CheckGemm(Precision p, int inputs, GemmShape s) {
  PairResult r{"gemm_bias_relu " + std::string(PrecisionName(p)), inputs, 0, 0, 0, {}};
  Stream stream;
  GemmBiasRelu gemm(s, p);
  const size_t es = ElementBytes(p);
  DeviceBuffer a(s.m * s.k * es), b(s.k * s.n * es), bias(s.n * es), tmp(s.m * s.n * es), out_f(s.m * s.n * es),
      out_u(s.m * s.n * es);
  for (int i = 0; i < inputs; ++i) {
    const uint64_t seed = 5000 + 10 * uint64_t(i);
    const std::vector<float> ha = RandomTensor(s.m * s.k, seed, -1.f, 1.f, p),
                             hb = RandomTensor(s.k * s.n, seed + 1, -1.f, 1.f, p),
                             hbias = RandomTensor(s.n, seed + 2, -1.f, 1.f, p);
    UploadInto(ha, p, a.get());
    UploadInto(hb, p, b.get());
    UploadInto(hbias, p, bias.get());
    gemm.Run(true, a.get(), b.get(), bias.get(), tmp.get(), out_f.get(), stream.get());
    gemm.Run(false, a.get(), b.get(), bias.get(), tmp.get(), out_u.get(), stream.get());
    TG_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    CompareVersions(r, i, Download(out_f.get(), s.m * s.n, p), Download(out_u.get(), s.m * s.n, p),
                    ReductionTolerance(p, s.k), [&](bool fused, std::span<float> out) {
                      GemmBiasReluReference(s, p, fused, ha, hb, hbias, out);
                    });
  }
  return r;
}

PairResult CheckConv(Precision p, int inputs, ConvShape s, const std::string& label) {
  PairResult r{"conv_bn_add_relu " + label + " " + std::string(PrecisionName(p)), inputs, 0, 0, 0, {}};
  Stream stream;
  ConvBnAddRelu conv(s, p);
  const size_t es = ElementBytes(p);
  DeviceBuffer x(s.x_elements() * es), w(s.w_elements() * es), wf(s.w_elements() * es), scale(s.k * es),
      shift(s.k * es), z(s.y_elements() * es), tmp(s.y_elements() * es), y_f(s.y_elements() * es),
      y_u(s.y_elements() * es);
  for (int i = 0; i < inputs; ++i) {
    const uint64_t seed = 9000 + 10 * uint64_t(i);
    const std::vector<float> hx = RandomTensor(s.x_elements(), seed, -1.f, 1.f, p),
                             hw = RandomTensor(s.w_elements(), seed + 1, -0.25f, 0.25f, p),
                             hscale = RandomTensor(s.k, seed + 2, 0.5f, 1.5f, p),
                             hshift = RandomTensor(s.k, seed + 3, -0.5f, 0.5f, p),
                             hz = RandomTensor(s.y_elements(), seed + 4, -1.f, 1.f, p);
    UploadInto(hx, p, x.get());
    UploadInto(hw, p, w.get());
    UploadInto(FoldBnIntoFilter(s, p, hw, hscale), p, wf.get());
    UploadInto(hscale, p, scale.get());
    UploadInto(hshift, p, shift.get());
    UploadInto(hz, p, z.get());
    ConvBnAddRelu::Tensors t{x.get(), w.get(), wf.get(), scale.get(), shift.get(), z.get(), tmp.get(), y_f.get()};
    conv.Run(true, t, stream.get());
    t.y = y_u.get();
    conv.Run(false, t, stream.get());
    TG_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    CompareVersions(r, i, Download(y_f.get(), s.y_elements(), p), Download(y_u.get(), s.y_elements(), p),
                    ReductionTolerance(p, s.r * s.s * s.c), [&](bool fused, std::span<float> out) {
                      ConvBnAddReluReference(s, p, fused, hx, hw, hscale, hshift, hz, out);
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
  app.add_option("--only", only, "check only the pairs whose name contains this text (e.g. add_relu, gemm, conv)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return e.get_exit_code() == 0 ? app.exit(e) : (app.exit(e), 2);
  }
  std::vector<PairResult> results;
  auto wanted = [&](const std::string& name) { return only.empty() || name.find(only) != std::string::npos; };
  bool any = wanted("gemm_bias_relu") || wanted("conv_bn_add_relu");
  for (ElementwiseOp op : kAllElementwiseOps) any = any || wanted(std::string(Info(op).name));
  if (!any) {
    std::fprintf(stderr, "tracegate-kernel-check: --only '%s' matches no pair (add_relu, mul_relu, scale_bias_relu, "
                 "bias_gelu, gemm_bias_relu, conv_bn_add_relu)\n", only.c_str());
    return 2;
  }
  try {
    SelectDevice(device);
    for (ElementwiseOp op : kAllElementwiseOps)
      for (Precision p : {Precision::kFp32, Precision::kFp16})
        if (wanted(std::string(Info(op).name)))
          results.push_back(CheckElementwise(op, p, inputs, 4099 * 8 + 5, 48));
    for (Precision p : {Precision::kFp32, Precision::kFp16})
      if (wanted("gemm_bias_relu")) results.push_back(CheckGemm(p, inputs, GemmShape{96, 80, 64}));
    ConvShape small;  // a small NHWC block: 2 x 8 x 8 x 32 -> 32, 3x3, pad 1
    small.n = 2, small.h = 8, small.w = 8, small.c = 32, small.k = 32;
    for (Precision p : {Precision::kFp32, Precision::kFp16})
      if (wanted("conv_bn_add_relu")) {
        results.push_back(CheckConv(p, inputs, small, "2x8x8x32"));
        results.push_back(CheckConv(p, 1, Res3Shape(1), "res3 batch 1"));
      }
  } catch (const CudaError& e) {
    std::fprintf(stderr, "tracegate-kernel-check: %s\n", e.what());
    return 1;
  }
  int failed = 0;
  for (const PairResult& r : results) {
    std::printf("%-4s %-34s %4d inputs  max |fused-unfused| %.3g  max |fused-ref| %.3g  max |unfused-ref| %.3g\n",
                r.failure.empty() ? "ok" : "FAIL", r.name.c_str(), r.inputs, r.fused_vs_unfused, r.fused_vs_ref,
                r.unfused_vs_ref);
    if (!r.failure.empty()) {
      std::printf("     %s\n", r.failure.c_str());
      ++failed;
    }
  }
  std::printf("%zu pairs checked, %d failed\n", results.size(), failed);
  return failed == 0 ? 0 : 1;
}
