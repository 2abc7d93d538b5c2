#include "tracegate/analyzer/kernel_class.h"

#include <gtest/gtest.h>

#include "analyzer/util/demangle.h"
#include "trace_builder.h"

namespace tg {

using internal::Demangle;
namespace {

struct Named {
  const char* name;  // as traces show them (demangled by the source, or mangled)
  KernelClass expected;
};

// Names as PyTorch, cuDNN, cuBLAS, CUTLASS, NCCL, TorchInductor and hand-written kernels show them.
const Named kNames[] = {
    // communication
    {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", KernelClass::kCommunication},
    {"ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", KernelClass::kCommunication},
    {"void vllm::cross_device_reduce_1stage<float, 8>(vllm::RankData*, vllm::RankSignals, int)",
     KernelClass::kCommunication},
    // conv: cuDNN, CUTLASS, PyTorch, fused heads named after their epilogue
    {"void cudnn::detail::implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int, int, "
     "int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, "
     "float const*, float const*, bool, int, int)",
     KernelClass::kConv},
    {"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_"
     "g1_tensor16x8x8_execute_kernel__5x_cudnn",
     KernelClass::kConv},
    {"sm86_xmma_dgrad_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize64x64x64", KernelClass::kConv},
    {"ampere_scudnn_128x64_relu_interior_nn_v1", KernelClass::kConv},
    {"void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::"
     "WinogradDataParams<float, float>)",
     KernelClass::kConv},
    {"void cutlass__5x_cudnn::Kernel<cutlass__5x_cudnn::conv::kernel::ImplicitGemmConvolution<"
     "cutlass::epilogue::thread::LinearCombinationRelu<float, 4, float, float> > >(Params)",
     KernelClass::kConv},
    {"void at::native::(anonymous namespace)::conv_depthwise2d_forward_kernel<3, float, int>(at::GenericPackedTensor"
     "Accessor<float const, 4ul>, int)",
     KernelClass::kConv},
    {"fused_conv_bias_add_relu", KernelClass::kConv},
    {"conv_bn_relu", KernelClass::kConv},
    {"triton_tem_fused_convolution_0", KernelClass::kConv},
    // gemm: cuBLAS, cuBLASLt, CUTLASS (whose template arguments name transform:: and a ReLU epilogue)
    {"ampere_sgemm_128x64_nn", KernelClass::kGemm},
    {"volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_nn", KernelClass::kGemm},
    {"sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
     "cublas",
     KernelClass::kGemm},
    {"void cutlass::Kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::threadblock::MmaMultistage<cutlass::"
     "transform::threadblock::PredicatedTileAccessIterator<float>>, cutlass::epilogue::thread::LinearCombinationRelu<"
     "float, 4>>>(cutlass::gemm::kernel::GemmUniversal::Params)",
     KernelClass::kGemm},
    {"void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, "
     "cublasGemvParamsEx<int, float const*>>(cublasGemvParamsEx<int, float const*>, float, float)",
     KernelClass::kGemm},
    {"nvjet_hsh_128x256_64x4_1x2_h_bz_coopA_NNN", KernelClass::kGemm},
    {"void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, false, false>(cublasLt::"
     "cublasSplitKParams<float>, float const*, float*)",
     KernelClass::kGemm},
    // hipBLASLt / Tensile: "_Bias_" and "_SAV_" name the epilogue, not an add or a scale
    {"Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_"
     "CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSU0_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA128_LBSPPB128_"
     "LBSPPM0_LPA16_LPB16_LPM0_LRVW16_LWPMn1_MIAV0_MIWT4_2_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS16_NLCA1_"
     "NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW8_SK0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_"
     "VSn1_VWA8_VWB1_WSGRA0_WSGRB0_WS64_WG32_8_1",
     KernelClass::kGemm},
    {"Cijk_Ailk_Bljk_S_B_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x16x1_SN_LDSB1_AFC1_AFEM1", KernelClass::kGemm},
    {"nvjet_tst_192x192_64x4_2x1_v_bz_coopA_bias_TNT", KernelClass::kGemm},
    {"void ck_tile::kentry<256, 1, ck_tile::GemmKernel<ck_tile::GemmTile2DPartitioner<ck_tile::TileGemmShape<"
     "ck_tile::sequence<256, 256, 64>>>, ck_tile::GemmPipelineAgBgCrCompV3<ck_tile::bf16_t>>>(ck_tile::GemmKernelArgs)",
     KernelClass::kGemm},
    // attention: flash, FMHA (cutlass, ck, ck_tile), AMD's Triton attn_fwd, vLLM's paged and unified
    // attention; ck_tile's FmhaBatchPrefill names its block GEMMs in template arguments
    {"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4>, false, true>(Flash_fwd_params)",
     KernelClass::kAttention},
    {"fmha_cutlassF_bf16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, "
     "cutlass::arch::Sm80, true, 64, 128, 128, true, true>::Params)",
     KernelClass::kAttention},
    {"void ck_tile::kentry<256, 1, ck_tile::FmhaBatchPrefillWithPagedKVCacheKernel<ck_tile::BlockFmhaBatchPrefill"
     "PipelineQRKSVSAsync<ck_tile::BlockFmhaPipelineProblem<ck_tile::bf16_t, ck_tile::BlockGemmShape<"
     "ck_tile::sequence<128, 64, 32, 128, 32, 128>>>>, ck_tile::Default2DEpilogue<ck_tile::bf16_t>>>("
     "ck_tile::FmhaBatchPrefillKargs)",
     KernelClass::kAttention},
    {"attn_fwd", KernelClass::kAttention},
    {"_attn_fwd_inner", KernelClass::kAttention},
    {"kernel_unified_attention_2d", KernelClass::kAttention},
    {"kernel_unified_attention_3d", KernelClass::kAttention},
    {"void vllm::paged_attention_v2_kernel<__hip_bfloat16, __hip_bfloat16, 128, 16, 128, (vllm::Fp8KVCacheDataType)"
     "0, false, 512>(float*, float*, __hip_bfloat16*, __hip_bfloat16 const*, int, float)",
     KernelClass::kAttention},
    {"void paged_attention_ll4mi_QKV_mfma16_kernel<__hip_bfloat16, __hip_bfloat16, 16, 128, 256, 4>(int)",
     KernelClass::kAttention},
    {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x64_4x1x1_kernel0_0",
     KernelClass::kAttention},
    {"triton_tem_fused_addmm_relu_0", KernelClass::kGemm},
    // transform
    {"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_"
     "cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, "
     "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::"
     "{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast)",
     KernelClass::kTransform},
    {"void at::native::(anonymous namespace)::CatArrayBatchedCopy_contig<at::native::(anonymous namespace)::OpaqueType"
     "<4u>, unsigned int, 4, 128, 1>(at::native::(anonymous namespace)::OpaqueType<4u>*, at::native::(anonymous "
     "namespace)::CatArrInputTensorMetadata)",
     KernelClass::kTransform},
    {"void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>(cudnn::ops::"
     "nchw2nhwc_params_t<float>, float const*, float*)",
     KernelClass::kTransform},
    {"void cudnn::ops::nhwcToNchwKernel<__half, __half, float, true, false, (cudnnKernelDataType_t)0>(cudnn::ops::"
     "nhwc2nchw_params_t<float>, __half const*, __half*)",
     KernelClass::kTransform},
    {"void at::native::im2col_kernel<float>(long, float const*, long, long, long, long, long, float*)",
     KernelClass::kTransform},
    {"void at::native::(anonymous namespace)::transpose_kernel<float>(float const*, float*, int, int)",
     KernelClass::kTransform},
    {"void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)",
     KernelClass::kTransform},  // FBGEMM is no GEMM
    // Nsight Systems' demangler spelling
    {"void at::native::vectorized_elementwise_kernel<(int)8, at::native::bfloat16_copy_kernel_cuda(at::"
     "TensorIteratorBase &)::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)",
     KernelClass::kTransform},
    // normalization
    {"void at::native::batch_norm_collect_statistics_kernel<at::native::InvStd, float, float, float, int>("
     "at::GenericPackedTensorAccessor<float const, 3ul>, float, float)",
     KernelClass::kNormalization},
    {"void cudnn::bn_fw_inf_1C11_kernel_NCHW<float, float, true, 1>(float, float, cudnnTensorStruct, float const*, "
     "cudnnTensorStruct, float*, float const*, float const*, float const*, float const*, float)",
     KernelClass::kNormalization},
    {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, "
     "float const*, float const*, float*, float*, float*)",
     KernelClass::kNormalization},
    {"_ZN2at6native12_GLOBAL__N_124RowwiseMomentsCUDAKernelIffEEvlT0_PKT_PS4_S7_", KernelClass::kNormalization},
    // activation: PyTorch's relu is clamp_min / threshold; gelu in template arguments
    {"void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::clamp_min_scalar_kernel_"
     "impl(at::TensorIteratorBase&, c10::Scalar)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() "
     "const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, float, at::detail::Array<char*, 2>)",
     KernelClass::kActivation},
    {"void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
     "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, "
     "at::detail::Array<char*, 2> >(int, float, at::detail::Array<char*, 2>)",
     KernelClass::kActivation},
    {"void at::native::(anonymous namespace)::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)",
     KernelClass::kActivation},
    {"relu_kernel", KernelClass::kActivation},
    {"add_relu_fused", KernelClass::kActivation},
    {"scale_bias_relu", KernelClass::kActivation},
    {"bias_gelu", KernelClass::kActivation},
    {"void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, true>(c10::BFloat16*, "
     "c10::BFloat16 const*, int)",
     KernelClass::kActivation},
    // elementwise
    {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, "
     "3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
     KernelClass::kElementwise},
    {"void at::native::unrolled_elementwise_kernel<at::native::BinaryFunctor<float, float, float, at::native::"
     "binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor)",
     KernelClass::kElementwise},
    {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
     "TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>>(int)",
     KernelClass::kElementwise},
    {"triton_poi_fused_add_relu_0", KernelClass::kElementwise},
    {"triton_poi_fused__to_copy_1", KernelClass::kElementwise},  // Inductor's prefix before the copy pattern
    {"triton_poi_fused_convolution_relu_1", KernelClass::kElementwise},
    {"triton_poi_fused__native_batch_norm_legit_no_training_2", KernelClass::kElementwise},
    {"add_kernel", KernelClass::kElementwise},
    // cuBLAS scal whose parameter types name a transpose: parameters are not searched
    {"void scal_kernel<float, float, 1, false, 6, 5, 5, 3>(cublasTransposeParams<float>, float const*, float*, "
     "float const*)",
     KernelClass::kElementwise},
    // cuBLASLt's separate bias / activation epilogue
    {"void epilogue::impl::globalKernel<float, float, float, true, true>(int, int, long, float*, cublasLtEpilogue_t, "
     "int, float*, long, void*, long, long, long, float*, long, int*)",
     KernelClass::kElementwise},
    {"scale_bias", KernelClass::kElementwise},
    // reduction
    {"void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*, "
     "float const*, int, int, int, bool const*, int, bool)",
     KernelClass::kReduction},
    {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, "
     "float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, "
     "unsigned int, float, 4>)",
     KernelClass::kReduction},
    {"void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*, long, long, "
     "long, int, int, int, int, int, int, int, int, int, int, float*, long*)",
     KernelClass::kReduction},
    {"triton_red_fused_add_sum_0", KernelClass::kReduction},
    {"triton_per_fused__softmax_0", KernelClass::kReduction},
    // thrust fill is element-wise work; a sort is none of the classes; tokens inside words do not match
    {"padding_kernel_address_compute", KernelClass::kOther},
    {"void thrust::cuda_cub::core::_kernel_agent<thrust::cuda_cub::__fill::functor<int*, int>, long>(int*, long)",
     KernelClass::kElementwise},
    {"void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<float, cub::NullType, int>::Policy800, false>"
     "(int*, int*, float const*, float*)",
     KernelClass::kOther},
    {"my_custom_kernel", KernelClass::kOther},
    {"void split_embedding_codegen_forward_unweighted_kernel<c10::Half, c10::Half, float, false, long, 2ul, 32ul>("
     "at::GenericPackedTensorAccessor<c10::Half, 1ul, at::RestrictPtrTraits, long>)",
     KernelClass::kOther},  // an embedding lookup, not a split
};

KernelClassifier Defaults() {
  KernelClassifier k;
  EXPECT_TRUE(KernelClassifier::Create({}, &k).ok());
  return k;
}

TEST(KernelClass, ClassifiesRealKernelNames) {
  KernelClassifier k = Defaults();
  for (const Named& n : kNames) {
    KernelClass got = k.Classify(Demangle(n.name));
    EXPECT_EQ(got, n.expected) << n.name << "\n  got " << kKernelClassNames[static_cast<size_t>(got)] << ", want "
                               << kKernelClassNames[static_cast<size_t>(n.expected)];
  }
}

TEST(KernelClass, AHugeTemplateNameIsClassifiedWithoutTrouble) {
  // CUTLASS / Thrust names can run to tens of kilobytes; std::regex must not recurse per character.
  std::string name = "void cutlass::Kernel<";
  for (int i = 0; i < 2'000; ++i) name += "cutlass::layout::RowMajor, ";
  name += "int>(Params)";
  EXPECT_EQ(Defaults().Classify(name), KernelClass::kGemm);
  std::string other(50'000, 'x');
  EXPECT_EQ(Defaults().Classify(other), KernelClass::kOther);
}

TEST(KernelClass, NamesRoundTripAndOtherHasNoPattern) {
  for (size_t c = 0; c < kKernelClassCount; ++c) {
    KernelClass parsed;
    ASSERT_TRUE(ParseKernelClass(kKernelClassNames[c], &parsed));
    EXPECT_EQ(static_cast<size_t>(parsed), c);
  }
  KernelClass unused;
  EXPECT_FALSE(ParseKernelClass("softmax", &unused));
  EXPECT_TRUE(DefaultKernelClassPatterns()[static_cast<size_t>(KernelClass::kOther)].empty());
}

TEST(KernelClass, OverridesReplaceOnePatternAndAnEmptyOneTurnsTheClassOff) {
  KernelClassifier k;
  ASSERT_TRUE(KernelClassifier::Create({{"transform", "^my_shuffle$"}, {"activation", ""}}, &k).ok());
  EXPECT_EQ(k.patterns()[static_cast<size_t>(KernelClass::kTransform)], "^my_shuffle$");
  EXPECT_EQ(k.Classify("MY_SHUFFLE"), KernelClass::kTransform);  // case-insensitive
  EXPECT_EQ(k.Classify("transpose_kernel"), KernelClass::kOther);
  // With activation off, "add_relu_fused" falls through to element-wise ("add").
  EXPECT_EQ(k.Classify("add_relu_fused"), KernelClass::kElementwise);
  EXPECT_EQ(k.Classify("ampere_sgemm_128x64_nn"), KernelClass::kGemm);  // others keep their defaults
}

TEST(KernelClass, PatternsIgnoreCaseButEscapesKeepTheirMeaning) {
  KernelClassifier k;
  ASSERT_TRUE(KernelClassifier::Create({{"transform", R"(^My_Shuffle\D$)"}}, &k).ok());
  EXPECT_EQ(k.Classify("my_shufflex"), KernelClass::kTransform);
  EXPECT_EQ(k.Classify("MY_SHUFFLEX"), KernelClass::kTransform);
  EXPECT_EQ(k.Classify("my_shuffle7"), KernelClass::kOther);  // \D is still "not a digit"
}

TEST(KernelClass, BadOverridesAreInvalidInputNamingTheProblem) {
  KernelClassifier k;
  Status s = KernelClassifier::Create({{"softmax", "softmax"}}, &k);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.message().find("unknown kernel class 'softmax'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("communication, attention, conv"), std::string::npos) << s.message();
  s = KernelClassifier::Create({{"other", "x"}}, &k);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  s = KernelClassifier::Create({{"gemm", "gemm("}}, &k);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.message().find("'gemm('"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("kernel class 'gemm'"), std::string::npos) << s.message();
}

TEST(KernelClass, ClassifyKernelsDemanglesAndGivesEveryRowItsClass) {
  Trace t;
  testing::AddKernel(t, "_ZN2at6native12_GLOBAL__N_124RowwiseMomentsCUDAKernelIffEEvlT0_PKT_PS4_S7_", 0, 10);
  testing::AddKernel(t, "ampere_sgemm_128x64_nn", 10, 20);
  testing::AddKernel(t, "_ZN2at6native12_GLOBAL__N_124RowwiseMomentsCUDAKernelIffEEvlT0_PKT_PS4_S7_", 20, 30);
  testing::AddKernel(t, "mystery", 30, 40);
  std::vector<KernelClass> c = ClassifyKernels(t, Defaults());
  EXPECT_EQ(c, (std::vector<KernelClass>{KernelClass::kNormalization, KernelClass::kGemm, KernelClass::kNormalization,
                                         KernelClass::kOther}));
}

TEST(KernelClass, ShortNameDropsReturnTypeTemplateArgumentsAndParameters) {
  EXPECT_EQ(ShortKernelName("void at::native::foo<4, bar>(int)"), "at::native::foo");
  EXPECT_EQ(ShortKernelName("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
                            "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
                            "at::detail::Array<char*, 3>)"),
            "at::native::vectorized_elementwise_kernel");
  EXPECT_EQ(ShortKernelName("void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10, "
                            "false, false>(float*, float const*, int, int, int, bool const*, int, bool)"),
            "at::native::(anonymous namespace)::softmax_warp_forward");
  EXPECT_EQ(ShortKernelName("unsigned int ns::count<(bool)1>(int) const"), "ns::count");
  EXPECT_EQ(ShortKernelName("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>("
                            "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)"),
            "cutlass::Kernel");
  EXPECT_EQ(ShortKernelName("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  EXPECT_EQ(ShortKernelName("add_relu_fused(float const*, float const*, float*, int)"), "add_relu_fused");
  // Nsight Systems spells the anonymous namespace "<unnamed>".
  EXPECT_EQ(ShortKernelName("void at::native::<unnamed>::vectorized_layer_norm_kernel<float, float, (bool)0>(int, "
                            "T2, const T1 *, const T1 *, const T1 *, T2 *, T2 *, T1 *)"),
            "at::native::<unnamed>::vectorized_layer_norm_kernel");
}

TEST(KernelClass, ShortNameLeavesNamesThatAreNotCppAlone) {
  EXPECT_EQ(ShortKernelName("triton_poi_fused_add_relu_0"), "triton_poi_fused_add_relu_0");
  EXPECT_EQ(ShortKernelName("ampere_sgemm_128x64_nn"), "ampere_sgemm_128x64_nn");
  EXPECT_EQ(ShortKernelName("weird>name"), "weird>name");
  EXPECT_EQ(ShortKernelName("unclosed<name"), "unclosed<name");
  EXPECT_EQ(ShortKernelName(""), "");
}

}  // namespace
}  // namespace tg
