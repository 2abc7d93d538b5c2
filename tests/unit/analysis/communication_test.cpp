// Collectives: the one classification (metadata, else the name), message sizes and NCCL's
// bandwidth factors, and the rank's communication figures, on small traces with known answers.
#include "tracegate/analyzer/communication.h"

#include <gtest/gtest.h>

#include "analysis_test_util.h"
#include "tracegate/analyzer/kernel_class.h"

namespace tg {
namespace {

struct Meta {
  const char* collective;
  const char* dtype;
  int64_t in, out;
  int32_t group;
  int64_t seq;
};

void AddKernel(Trace& t, const char* name, TimeNs start, TimeNs end, int32_t device = 0, const Meta* m = nullptr) {
  Kernel k;
  k.start = start;
  k.end = end;
  k.name = t.strings.Intern(name);
  k.device = device;
  k.stream = 7;
  if (m) {
    k.collective = t.strings.Intern(m->collective);
    k.coll_dtype = t.strings.Intern(m->dtype);
    k.coll_in_nelems = m->in;
    k.coll_out_nelems = m->out;
    k.coll_group_size = m->group;
    k.coll_group = t.strings.Intern("0");
    k.coll_seq = m->seq;
  }
  t.kernels.Add(k);
}

IterationAnalysis Spans(std::initializer_list<std::pair<TimeNs, TimeNs>> spans) {
  IterationAnalysis it;
  for (auto [s, e] : spans) {
    Iteration i;
    i.start = s;
    i.end = e;
    it.iterations.push_back(i);
  }
  return it;
}

std::vector<KernelClass> Classes(const Trace& t) {
  KernelClassifier c;
  EXPECT_TRUE(KernelClassifier::Create({}, &c).ok());
  return ClassifyKernels(t, c);
}

TEST(Collectives, OldAndNewNcclNamesAndMetadataAreCollectives) {
  Trace t;
  AddKernel(t, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", 0, 10);
  AddKernel(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 10, 20);
  AddKernel(t, "rcclKernel_Broadcast", 20, 30);
  const Meta m{"allreduce", "Float", 4, 4, 2, 1};
  AddKernel(t, "my_custom_comm_kernel", 30, 40, 0, &m);  // no NCCL name: the metadata decides
  AddKernel(t, "my_custom_comm_kernel", 40, 50);         // the same name without metadata
  AddKernel(t, "ampere_sgemm_128x64_nn", 50, 60);
  const std::vector<KernelClass> cls = Classes(t);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(cls[i], KernelClass::kCommunication) << i;
  EXPECT_NE(cls[4], KernelClass::kCommunication);
  EXPECT_EQ(cls[5], KernelClass::kGemm);
}

TEST(Collectives, DtypeSizesAndBusFactors) {
  EXPECT_EQ(DtypeBytes("Float"), 4);
  EXPECT_EQ(DtypeBytes("BFloat16"), 2);
  EXPECT_EQ(DtypeBytes("Long"), 8);
  EXPECT_EQ(DtypeBytes("Byte"), 1);
  EXPECT_EQ(DtypeBytes("ComplexDouble"), 16);
  EXPECT_EQ(DtypeBytes("float32"), 0);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("allreduce", 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("allreduce_coalesced", 2), 1.0);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("_allgather_base", 4), 0.75);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("all_gather_into_tensor", 4), 0.75);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("reduce_scatter_tensor", 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("all_to_all", 4), 0.75);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("alltoall_base", 2), 0.5);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("broadcast", 16), 1.0);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("reduce", 16), 1.0);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("send", 2), 1.0);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("recv", 2), 1.0);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("allreduce", 1), 0.0);  // one rank moves nothing
  EXPECT_FALSE(BusBandwidthFactor("gather", 4));
  EXPECT_FALSE(BusBandwidthFactor("barrier", 4));
  EXPECT_FALSE(BusBandwidthFactor("allreduce", 0));
}

TEST(Collectives, TableSizesAndBandwidths) {
  Trace t;
  const Meta ar{"allreduce", "Float", 1000, 1000, 4, 0};
  const Meta ag{"_allgather_base", "BFloat16", 250, 1000, 4, 1};
  const Meta odd{"allreduce", "Float8_e9m9", 10, 10, 4, 2};
  AddKernel(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 0, 1000, 0, &ar);
  AddKernel(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 2000, 5000, 0, &ar);
  AddKernel(t, "ncclDevKernel_AllGather_RING_LL", 6000, 6500, 0, &ag);
  AddKernel(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 7000, 7100, 0, &odd);
  AddKernel(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 8000, 8200);
  const CommunicationAnalysis c = AnalyzeCommunication(t, Spans({{0, 10000}}), Classes(t), {});
  EXPECT_EQ(c.collective_kernels, 5u);
  EXPECT_EQ(c.with_metadata, 4u);
  ASSERT_EQ(c.collectives.size(), 4u);
  // By total time: all-reduce (4000 ns), all-gather (500), the name-only kernel (200), odd dtype (100).
  const CollectiveStat& a = c.collectives[0];
  EXPECT_EQ(a.collective, "allreduce");
  EXPECT_EQ(a.count, 2u);
  EXPECT_EQ(a.total_ns, 4000);
  EXPECT_EQ(*a.bytes, 4000);                          // 1000 x 4
  EXPECT_DOUBLE_EQ(*a.algbw_gbs, 4000.0 * 2 / 4000);  // bytes x count / ns = GB/s
  EXPECT_DOUBLE_EQ(*a.busbw_gbs, 2.0 * 1.5);          // x 2(n-1)/n
  const CollectiveStat& g = c.collectives[1];
  EXPECT_EQ(*g.bytes, 2000);  // max(in, out) = the gathered output, 1000 x 2
  EXPECT_DOUBLE_EQ(*g.algbw_gbs, 4.0);
  EXPECT_DOUBLE_EQ(*g.busbw_gbs, 3.0);
  const CollectiveStat& n = c.collectives[2];
  EXPECT_EQ(n.collective, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  EXPECT_FALSE(n.bytes);
  EXPECT_FALSE(n.algbw_gbs);
  EXPECT_NE(n.bytes_reason.find("no collective metadata"), std::string::npos);
  const CollectiveStat& o = c.collectives[3];
  EXPECT_FALSE(o.bytes);
  EXPECT_EQ(o.bytes_reason, "unknown dtype 'Float8_e9m9'");
  // The calls, in time order, carry what the cross-rank analysis matches on.
  ASSERT_EQ(c.rank.calls.size(), 5u);
  EXPECT_EQ(c.rank.calls[2].name, "_allgather_base");
  EXPECT_EQ(c.rank.calls[2].group, "0");
  EXPECT_EQ(c.rank.calls[2].seq, 1);
  EXPECT_EQ(*c.rank.calls[2].bytes, 2000);
  EXPECT_EQ(c.rank.calls[4].seq, kUnknownId);
  EXPECT_FALSE(c.rank.calls[4].bytes);
}

TEST(Collectives, CommComputeAndOverlapPerDeviceInsideIterations) {
  Trace t;
  t.metadata["rank"] = "3";
  const Meta ar{"allreduce", "Float", 1, 1, 2, kUnknownId};
  // Iterations [0, 1000) and [2000, 3000). Device 0: communication [100, 400) and [300, 500)
  // (union 400), compute [0, 200) and [450, 460) beside it (overlap 100 + 10), communication
  // [900, 1100) half outside; device 1: compute [100, 500), which is not device 0's overlap.
  AddKernel(t, "nccl_a", 100, 400, 0, &ar);
  AddKernel(t, "nccl_b", 300, 500, 0, &ar);
  AddKernel(t, "gemm", 0, 200);
  AddKernel(t, "add_kernel", 450, 460);
  AddKernel(t, "nccl_c", 900, 1100, 0, &ar);
  AddKernel(t, "gemm", 100, 500, 1);
  AddKernel(t, "gemm", 2000, 2500);
  AddKernel(t, "gemm", 1200, 1300);  // between the iterations: not counted
  const CommunicationAnalysis c = AnalyzeCommunication(t, Spans({{0, 1000}, {2000, 3000}}), Classes(t), {});
  EXPECT_EQ(*c.rank.rank, 3);
  // communication: 400 + 100 (clipped) = 500 ns over 2 iterations
  EXPECT_DOUBLE_EQ(*c.rank.comm_ms, 500.0 / 1e6 / 2);
  // compute: device 0 [0, 200) + [450, 460) + [2000, 2500) = 710, device 1 400
  EXPECT_DOUBLE_EQ(*c.rank.compute_ms, 1110.0 / 1e6 / 2);
  EXPECT_DOUBLE_EQ(*c.rank.overlap_ratio, 110.0 / 500.0);

  Trace none;
  AddKernel(none, "gemm", 0, 100);
  const CommunicationAnalysis n = AnalyzeCommunication(none, Spans({{0, 1000}}), Classes(none), {});
  EXPECT_FALSE(n.rank.rank);
  EXPECT_EQ(n.rank.rank_reason, "no distributedInfo.rank in the trace");
  EXPECT_DOUBLE_EQ(*n.rank.comm_ms, 0.0);
  EXPECT_DOUBLE_EQ(*n.rank.compute_ms, 100.0 / 1e6);
  EXPECT_FALSE(n.rank.overlap_ratio);
  EXPECT_EQ(n.rank.overlap_reason, "no communication kernels inside the iterations");
  const CommunicationAnalysis z = AnalyzeCommunication(none, IterationAnalysis{}, Classes(none), {});
  EXPECT_FALSE(z.rank.comm_ms);
  EXPECT_EQ(z.rank.comm_reason, "no iterations");
}

// The idle causes ask the same classes: a gap next to a kernel that only its metadata makes a
// collective is a communication gap.
TEST(Collectives, IdleCausesUseTheMetadata) {
  Trace t;
  const Meta ar{"allreduce", "Float", 1, 1, 2, 0};
  AddKernel(t, "gemm", 0, 100'000);
  AddKernel(t, "custom_transport_kernel", 200'000, 300'000, 0, &ar);
  AddKernel(t, "gemm", 400'000, 500'000);
  const Analysis a = testing::AnalyzeOk(t);
  ASSERT_EQ(a.summary.devices.size(), 1u);
  const IdleCauses& causes = a.summary.devices[0].idle_causes;
  ASSERT_TRUE(causes.attributed);
  EXPECT_EQ(causes.gaps[static_cast<size_t>(IdleCause::kCommunication)], 2u);
  EXPECT_EQ(a.communication.collective_kernels, 1u);
}

}  // namespace
}  // namespace tg
