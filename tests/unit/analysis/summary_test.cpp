#include "tracegate/analyzer/summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "trace_builder.h"
#include "tracegate/analyzer/model.h"

namespace tg {
namespace {

using testing::AddCopy;
using testing::AddKernel;
using testing::AddMemset;

const DeviceSummary& OnlyDevice(const Summary& s) {
  EXPECT_EQ(s.devices.size(), 1u);
  return s.devices.at(0);
}

// SummarizeInto says once when the busy union and the kernels by start are final (RunAnalysis
// reads them from then on, on another thread): what they hold then is what they hold at the end,
// on two devices (merged) and on a trace without device activity.
TEST(Summary, BusyKnownOnceWithTheFinalBusyUnionAndKernelOrder) {
  Trace two;
  AddKernel(two, "gemm", 300, 400, 1, 7);
  AddKernel(two, "relu", 0, 100, 0, 7);
  AddKernel(two, "gemm", 150, 250, 0, 8);
  AddKernel(two, "relu", 90, 160, 1, 9);
  AddCopy(two, CopyKind::kHtoD, 64, 500, 600);
  Trace none;
  for (const Trace* t : {&two, &none}) {
    Summary s;
    int calls = 0;
    std::vector<std::pair<TimeNs, TimeNs>> busy_then;
    std::vector<uint32_t> order_then;
    const std::function<void()> known = [&] {
      ++calls;
      busy_then = s.GpuBusy();
      order_then = s.kernels_by_start;
    };
    SummarizeInto(*t, {}, nullptr, nullptr, nullptr, nullptr, nullptr, &known, &s);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(busy_then, s.GpuBusy());
    EXPECT_EQ(order_then, s.kernels_by_start);
    const Summary plain = Summarize(*t, {});
    EXPECT_EQ(plain.GpuBusy(), s.GpuBusy());
    EXPECT_EQ(plain.kernels_by_start, s.kernels_by_start);
  }
  const Summary s = Summarize(two, {});
  EXPECT_EQ(s.kernels_by_start, (std::vector<uint32_t>{1, 3, 2, 0}));
  EXPECT_EQ(s.GpuBusy(), (std::vector<std::pair<TimeNs, TimeNs>>{{0, 250}, {300, 400}, {500, 600}}));
}

TEST(Summary, IdleRatioIsExactAndGapsHaveNeighbours) {
  Trace t;
  AddKernel(t, "gemm", 0, 100);
  AddKernel(t, "relu", 125, 200);
  AddKernel(t, "gemm", 200, 300);  // touches the previous kernel: no gap
  AddKernel(t, "relu", 375, 400);
  Summary s = Summarize(t, {});
  const DeviceSummary& d = OnlyDevice(s);
  EXPECT_EQ(d.device, 0);
  EXPECT_EQ(d.kernels, 4u);
  EXPECT_EQ(d.first_start_ns, 0);
  EXPECT_EQ(d.last_end_ns, 400);
  EXPECT_EQ(d.active_ns, 400);
  EXPECT_EQ(d.busy_ns, 300);
  ASSERT_TRUE(d.has_idle_ratio);
  EXPECT_EQ(d.idle_ratio, 0.25);  // exact: 1 - 300/400
  EXPECT_EQ(d.gap_count, 2u);
  EXPECT_EQ(d.gap_total_ns, 100);
  EXPECT_EQ(d.gap_histogram[0], 2u);
  EXPECT_EQ(d.gap_histogram_ns[0], 100);
  for (size_t b = 1; b < kGapBucketCount; ++b) EXPECT_EQ(d.gap_histogram[b], 0u);
  ASSERT_EQ(d.largest_gaps.size(), 2u);
  EXPECT_EQ(d.largest_gaps[0].start_ns, 300);
  EXPECT_EQ(d.largest_gaps[0].duration_ns, 75);
  EXPECT_EQ(d.largest_gaps[0].previous, "gemm");
  EXPECT_EQ(d.largest_gaps[0].next, "relu");
  EXPECT_EQ(d.largest_gaps[1].start_ns, 100);
  EXPECT_EQ(d.largest_gaps[1].duration_ns, 25);
  ASSERT_EQ(s.streams.size(), 1u);
  EXPECT_EQ(s.streams[0].busy_ns, 300);
  EXPECT_EQ(s.streams[0].device_busy_share, 1.0);
}

TEST(Summary, OverlappingWorkOnSeveralStreamsCountsOnce) {
  Trace t;
  AddKernel(t, "a", 0, 100, 0, 7);
  AddKernel(t, "b", 50, 150, 0, 8);
  AddCopy(t, CopyKind::kHtoD, 4096, 140, 160, MemKind::kPinned, MemKind::kDevice, 0, 8);
  AddKernel(t, "c", 200, 210, 0, 9);
  Summary s = Summarize(t, {});
  const DeviceSummary& d = OnlyDevice(s);
  EXPECT_EQ(d.busy_ns, 170);  // [0,160) + [200,210)
  EXPECT_EQ(d.active_ns, 210);
  EXPECT_EQ(d.gap_count, 1u);
  EXPECT_EQ(d.gap_total_ns, 40);
  ASSERT_EQ(d.largest_gaps.size(), 1u);
  EXPECT_EQ(d.largest_gaps[0].previous, "Memcpy HtoD");  // the activity that ends last before the gap
  EXPECT_EQ(d.largest_gaps[0].next, "c");
  EXPECT_EQ(d.kernels, 3u);
  EXPECT_EQ(d.memcpys, 1u);

  ASSERT_EQ(s.streams.size(), 3u);
  EXPECT_EQ(s.streams[0].stream, 7);
  EXPECT_EQ(s.streams[0].busy_ns, 100);
  EXPECT_EQ(s.streams[1].stream, 8);
  EXPECT_EQ(s.streams[1].busy_ns, 110);  // [50,160): kernel and copy overlap on the same stream
  EXPECT_EQ(s.streams[1].kernels, 1u);
  EXPECT_EQ(s.streams[1].memcpys, 1u);
  EXPECT_EQ(s.streams[1].first_start_ns, 50);
  EXPECT_EQ(s.streams[1].last_end_ns, 160);
  EXPECT_DOUBLE_EQ(s.streams[1].device_busy_share, 110.0 / 170.0);
  EXPECT_EQ(s.streams[2].stream, 9);
}

// Work that takes more streams in turn than the lanes' small cache holds (Lanes::Of), on two
// devices, rows out of time order: each stream and device still gets exactly its own work.
TEST(Summary, ManyStreamsInTurnOnTwoDevices) {
  Trace t;
  constexpr int kStreams = 11;
  for (int round = 4; round >= 0; --round)  // the later rounds first
    for (int st = 0; st < kStreams; ++st)
      for (int32_t device : {1, 0}) AddKernel(t, "k", 100 * round + st, 100 * round + st + 10, device, 20 + st);
  Summary s = Summarize(t, {});
  ASSERT_EQ(s.devices.size(), 2u);
  ASSERT_EQ(s.streams.size(), 2u * kStreams);
  for (size_t i = 0; i < s.streams.size(); ++i) {
    const StreamSummary& st = s.streams[i];
    EXPECT_EQ(st.device, static_cast<int32_t>(i / kStreams));
    EXPECT_EQ(st.stream, 20 + static_cast<int64_t>(i % kStreams));
    EXPECT_EQ(st.kernels, 5u);
    EXPECT_EQ(st.busy_ns, 50);
    EXPECT_EQ(st.first_start_ns, static_cast<TimeNs>(i % kStreams));
    EXPECT_EQ(st.last_end_ns, 400 + static_cast<TimeNs>(i % kStreams) + 10);
  }
  for (const DeviceSummary& d : s.devices) {
    EXPECT_EQ(d.kernels, 5u * kStreams);
    EXPECT_EQ(d.busy_ns, 5 * 20);  // [100 r, 100 r + 20) each round
    EXPECT_EQ(d.gap_count, 4u);
  }
  ASSERT_EQ(s.kernels_by_start.size(), t.kernels.size());
  for (size_t i = 1; i < s.kernels_by_start.size(); ++i) {
    const uint32_t a = s.kernels_by_start[i - 1], b = s.kernels_by_start[i];
    EXPECT_TRUE(t.kernels.start[a] < t.kernels.start[b] || (t.kernels.start[a] == t.kernels.start[b] && a < b));
  }
}

TEST(Summary, DevicesAreSeparateAndNamedFromTraceDevices) {
  Trace t;
  t.devices.push_back(Device{1, "NVIDIA H200", 132, 0, 0, 9, 0});
  AddKernel(t, "x", 0, 10, 1, 3);
  AddKernel(t, "x", 0, 10, 0, 3);
  AddKernel(t, "x", 100, 110, 0, 3);
  AddKernel(t, "x", 5, 6, -1, kUnknownId);
  Summary s = Summarize(t, {});
  ASSERT_EQ(s.devices.size(), 3u);
  EXPECT_EQ(s.devices[0].device, -1);
  EXPECT_FALSE(s.devices[0].known);
  EXPECT_EQ(s.devices[1].device, 0);
  EXPECT_EQ(s.devices[1].busy_ns, 20);
  EXPECT_EQ(s.devices[1].gap_count, 1u);
  EXPECT_EQ(s.devices[2].device, 1);
  EXPECT_TRUE(s.devices[2].known);
  EXPECT_EQ(s.devices[2].name, "NVIDIA H200");
  EXPECT_EQ(s.devices[2].gap_count, 0u);
  EXPECT_EQ(s.devices[2].idle_ratio, 0.0);
}

TEST(Summary, GapHistogramUsesFixedBucketsAndKeepsLargest) {
  Trace t;
  // Gaps of 5 us, 50 us, 500 us, 5 ms and 50 ms: one per bucket.
  TimeNs at = 0;
  for (TimeNs gap : {TimeNs{5'000}, TimeNs{50'000}, TimeNs{500'000}, TimeNs{5'000'000}, TimeNs{50'000'000}}) {
    AddKernel(t, "k", at, at + 1'000);
    at += 1'000 + gap;
  }
  AddKernel(t, "last", at, at + 1'000);
  AnalyzeOptions options;
  options.largest_gaps = 2;
  Summary s = Summarize(t, options);
  const DeviceSummary& d = OnlyDevice(s);
  EXPECT_EQ(d.gap_count, 5u);
  for (size_t b = 0; b < kGapBucketCount; ++b) EXPECT_EQ(d.gap_histogram[b], 1u) << "bucket " << b;
  EXPECT_EQ(d.gap_histogram_ns[4], 50'000'000);
  ASSERT_EQ(d.largest_gaps.size(), 2u);
  EXPECT_EQ(d.largest_gaps[0].duration_ns, 50'000'000);
  EXPECT_EQ(d.largest_gaps[0].next, "last");
  EXPECT_EQ(d.largest_gaps[1].duration_ns, 5'000'000);
  // Bucket edges: the lower bound is inclusive.
  EXPECT_EQ(GapBucketOf(9'999), 0u);
  EXPECT_EQ(GapBucketOf(10'000), 1u);
  EXPECT_EQ(GapBucketOf(1'000'000), 3u);
  EXPECT_EQ(GapBucketOf(10'000'000), 4u);
}

TEST(Summary, ZeroLengthWorkSplitsGapsButAddsNoBusyTime) {
  Trace t;
  AddKernel(t, "a", 0, 100);
  AddKernel(t, "marker", 150, 150);
  AddKernel(t, "b", 200, 300);
  Summary s = Summarize(t, {});
  const DeviceSummary& d = OnlyDevice(s);
  EXPECT_EQ(d.busy_ns, 200);
  EXPECT_EQ(d.gap_count, 2u);
  EXPECT_EQ(d.busy_ns + d.gap_total_ns, d.active_ns);
}

TEST(Summary, TopKernelsUseNearestRankPercentiles) {
  Trace t;
  for (int i = 1; i <= 20; ++i) AddKernel(t, "_Z4gemmPfi", i * 1000, i * 1000 + i * 10);  // 10..200 ns
  AddKernel(t, "big", 100'000, 105'000);
  AddKernel(t, "four", 200'000, 200'010);
  AddKernel(t, "four", 201'000, 201'020);
  AddKernel(t, "four", 202'000, 202'030);
  AddKernel(t, "four", 203'000, 203'040);
  Summary s = Summarize(t, {});
  EXPECT_EQ(s.distinct_kernels, 3u);
  EXPECT_EQ(s.total_kernel_ns, 2100 + 5000 + 100);
  ASSERT_EQ(s.top_kernels.size(), 3u);
  EXPECT_EQ(s.top_kernels[0].display_name, "big");
  EXPECT_DOUBLE_EQ(s.top_kernels[0].share, 5000.0 / 7200.0);
  const KernelStat& g = s.top_kernels[1];
  EXPECT_EQ(g.display_name, "gemm(float*, int)");  // demangled
  EXPECT_EQ(g.count, 20u);
  EXPECT_EQ(g.total_ns, 2100);
  EXPECT_DOUBLE_EQ(g.mean_ns, 105.0);
  EXPECT_EQ(g.min_ns, 10);
  EXPECT_EQ(g.max_ns, 200);
  EXPECT_EQ(g.p50_ns, 100);  // rank ceil(0.50 * 20) = 10
  EXPECT_EQ(g.p95_ns, 190);  // rank ceil(0.95 * 20) = 19
  const KernelStat& f = s.top_kernels[2];
  EXPECT_EQ(f.p50_ns, 20);  // {10,20,30,40}: rank 2
  EXPECT_EQ(f.p95_ns, 40);  // rank ceil(3.8) = 4

  AnalyzeOptions one;
  one.top_k = 1;
  Summary top1 = Summarize(t, one);
  ASSERT_EQ(top1.top_kernels.size(), 1u);
  EXPECT_EQ(top1.distinct_kernels, 3u);
}

TEST(Summary, KernelsGroupByDemangledName) {
  Trace t;
  AddKernel(t, "_Z4gemmPfi", 0, 10);
  AddKernel(t, "gemm(float*, int)", 20, 30);  // a source that already demangled
  Summary s = Summarize(t, {});
  EXPECT_EQ(s.distinct_kernels, 1u);
  ASSERT_EQ(s.top_kernels.size(), 1u);
  EXPECT_EQ(s.top_kernels[0].count, 2u);
  EXPECT_EQ(s.top_kernels[0].share, 1.0);
}

TEST(Summary, CopiesByDirection) {
  Trace t;
  AddCopy(t, CopyKind::kHtoD, 1'000'000, 0, 1'000, MemKind::kPageable, MemKind::kDevice);
  AddCopy(t, CopyKind::kHtoD, 1'000, 2'000, 2'100, MemKind::kPinned, MemKind::kDevice);
  AddCopy(t, CopyKind::kDtoH, 65'536, 3'000, 3'064, MemKind::kDevice, MemKind::kPageable);
  AddCopy(t, CopyKind::kDtoD, 10, 4'000, 4'000, MemKind::kDevice, MemKind::kDevice);
  AddCopy(t, CopyKind::kHtoH, 10, 5'000, 5'010, MemKind::kPinned, MemKind::kPinned);
  Memset ms;
  ms.start = 6'000;
  ms.end = 6'050;
  ms.bytes = 4096;
  ms.device = 0;
  ms.stream = 7;
  t.memsets.Add(ms);
  Summary s = Summarize(t, {});
  const CopyStat& h2d = s.copies[static_cast<size_t>(CopyDirection::kHtoD)];
  EXPECT_EQ(h2d.count, 2u);
  EXPECT_EQ(h2d.bytes, 1'001'000);
  EXPECT_EQ(h2d.time_ns, 1'100);
  ASSERT_TRUE(h2d.has_gbs);
  EXPECT_DOUBLE_EQ(h2d.gbs, 910.0);  // 1,001,000 B / 1,100 ns
  EXPECT_EQ(h2d.pageable, 1u);
  EXPECT_DOUBLE_EQ(h2d.pageable_share, 0.5);
  EXPECT_EQ(h2d.small, 1u);
  const CopyStat& d2h = s.copies[static_cast<size_t>(CopyDirection::kDtoH)];
  EXPECT_EQ(d2h.pageable_share, 1.0);
  EXPECT_EQ(d2h.small, 0u);  // 64 KiB is not under 64 KiB
  EXPECT_DOUBLE_EQ(d2h.gbs, 1024.0);
  const CopyStat& d2d = s.copies[static_cast<size_t>(CopyDirection::kDtoD)];
  EXPECT_EQ(d2d.count, 1u);
  EXPECT_FALSE(d2d.has_gbs);  // zero time
  EXPECT_EQ(s.copies[static_cast<size_t>(CopyDirection::kOther)].count, 1u);
  EXPECT_EQ(s.copies[static_cast<size_t>(CopyDirection::kPtoP)].count, 0u);
  EXPECT_EQ(s.memsets.count, 1u);
  EXPECT_EQ(s.memsets.bytes, 4096);
  EXPECT_EQ(s.memsets.time_ns, 50);

  AnalyzeOptions small;
  small.small_copy_bytes = 1;
  EXPECT_EQ(Summarize(t, small).copies[0].small, 0u);
}

TEST(Summary, EmptyTraceGivesZerosAndNoRatios) {
  Trace t;
  Summary s = Summarize(t, {});
  EXPECT_EQ(s.counts.kernels, 0u);
  EXPECT_EQ(s.start_ns, 0);
  EXPECT_EQ(s.duration_ns, 0);
  EXPECT_TRUE(s.devices.empty());
  EXPECT_TRUE(s.streams.empty());
  EXPECT_TRUE(s.top_kernels.empty());
  EXPECT_EQ(s.distinct_kernels, 0u);
  for (const CopyStat& c : s.copies) {
    EXPECT_EQ(c.count, 0u);
    EXPECT_FALSE(c.has_gbs);
  }
  EXPECT_FALSE(s.has_errors);
  EXPECT_EQ(s.quality.size(), kQualityInfo.size());
}

TEST(Summary, TraceWithOnlyApiCalls) {
  Trace t;
  t.api_calls.Add(ApiCall{1'000, 1'500, t.strings.Intern("cudaMalloc"), ApiKind::kRuntime, 1, 1, 5, 0});
  t.api_calls.Add(ApiCall{2'000, 2'100, t.strings.Intern("cudaFree"), ApiKind::kRuntime, 1, 1, 6, 0});
  t.api_calls.Add(ApiCall{3'000, 3'300, t.strings.Intern("cuMemAlloc"), ApiKind::kDriver, 1, 1, 7, 0});
  Summary s = Summarize(t, {});
  EXPECT_EQ(s.counts.runtime_calls, 2u);
  EXPECT_EQ(s.counts.driver_calls, 1u);
  EXPECT_EQ(s.start_ns, 1'000);
  EXPECT_EQ(s.end_ns, 3'300);
  EXPECT_EQ(s.duration_ns, 2'300);
  EXPECT_TRUE(s.devices.empty());
  EXPECT_EQ(s.total_kernel_ns, 0);
}

TEST(Summary, DeviceWithOnlyZeroLengthWorkHasNoIdleRatio) {
  Trace t;
  AddKernel(t, "instant", 50, 50);
  Summary s = Summarize(t, {});
  const DeviceSummary& d = OnlyDevice(s);
  EXPECT_EQ(d.active_ns, 0);
  EXPECT_FALSE(d.has_idle_ratio);
}

// Each device's busy union (what the report's overview bins) against a plain sort-and-join of
// that device's kernels, copies and memsets of positive length, on random rows over three devices
// and five streams, with rows of zero length and rows that end before they start; the window
// (first start, last end) against the rows too.
TEST(Summary, EachDeviceKeepsTheUnionOfItsWork) {
  std::mt19937 rng(11);
  for (int round = 0; round < 40; ++round) {
    Trace t;
    std::map<int32_t, std::vector<std::pair<TimeNs, TimeNs>>> rows;
    std::map<int32_t, std::pair<TimeNs, TimeNs>> window;
    for (size_t i = 0, n = rng() % 200; i < n; ++i) {
      const auto device = static_cast<int32_t>(rng() % 3);
      const auto stream = static_cast<int64_t>(rng() % 5);
      const auto start = static_cast<TimeNs>(rng() % 5000);
      const auto length = static_cast<TimeNs>(rng() % 80) - 10;  // some empty, some negative
      const TimeNs end = start + length;
      switch (rng() % 3) {
        case 0: AddKernel(t, "k", start, end, device, stream); break;
        case 1: AddCopy(t, CopyKind::kHtoD, 64, start, end, MemKind::kPinned, MemKind::kDevice, device, stream); break;
        default: AddMemset(t, 64, start, end, device, stream); break;
      }
      if (end > start) rows[device].emplace_back(start, end);
      auto [it, fresh] = window.try_emplace(device, start, std::max(start, end));
      if (!fresh) it->second = {std::min(it->second.first, start), std::max({it->second.second, start, end})};
    }
    const Summary s = Summarize(t, {});
    ASSERT_EQ(s.devices.size(), window.size()) << round;
    for (const DeviceSummary& d : s.devices) {
      std::vector<std::pair<TimeNs, TimeNs>> v = rows[d.device], want;
      std::sort(v.begin(), v.end());
      for (const auto& [a, b] : v) {
        if (!want.empty() && a <= want.back().second) want.back().second = std::max(want.back().second, b);
        else want.emplace_back(a, b);
      }
      EXPECT_EQ(d.busy, want) << "round " << round << " device " << d.device;
      TimeNs length = 0;
      for (const auto& [a, b] : want) length += b - a;
      EXPECT_EQ(d.busy_ns, length);
      EXPECT_EQ(d.first_start_ns, window[d.device].first);
      EXPECT_EQ(d.last_end_ns, window[d.device].second);
    }
  }
}

// The overview's bins against each bin's overlap with each busy piece, counted bin by bin (the
// last bin takes what lies past n * bin_ns), on random unions, windows that iterations widen,
// bin counts that do not divide the window, and a window across nearly all of int64.
TEST(Summary, BinBusyCountsEachBinsOverlap) {
  __extension__ typedef unsigned __int128 U128;  // sums past 2^64 stay exact
  std::mt19937_64 rng(3);
  auto check = [](const Summary& s, const std::vector<std::pair<TimeNs, TimeNs>>& spans, size_t bins) {
    const BusyOverview o = BinBusy(s, spans, bins);
    size_t devices = 0;
    for (const DeviceSummary& d : s.devices) {
      if (d.busy.empty()) continue;
      ASSERT_LT(devices, o.devices.size());
      const auto& [device, got] = o.devices[devices++];
      EXPECT_EQ(device, d.device);
      const size_t n = got.size();
      ASSERT_GT(n, 0u);
      EXPECT_LE(n, std::max<size_t>(bins, 1));
      EXPECT_GE(static_cast<U128>(n) * o.bin_ns, o.duration_ns);
      for (size_t b = 0; b < n; ++b) {
        const U128 lo = static_cast<U128>(b) * o.bin_ns;
        const U128 hi = b + 1 == n ? ~static_cast<U128>(0) : lo + o.bin_ns;
        U128 want = 0;
        for (const auto& [a, e] : d.busy) {
          const U128 pa = static_cast<uint64_t>(a) - static_cast<uint64_t>(o.start_ns);
          const U128 pe = static_cast<uint64_t>(e) - static_cast<uint64_t>(o.start_ns);
          const U128 x = std::max(pa, lo), y = std::min(pe, hi);
          if (x < y) want += y - x;
        }
        EXPECT_EQ(static_cast<U128>(got[b]), want) << "bin " << b;
      }
    }
    EXPECT_EQ(devices, o.devices.size());
  };
  for (int round = 0; round < 30; ++round) {
    Summary s;
    for (int32_t device = 0; device < 3; ++device) {
      DeviceSummary d;
      d.device = device;
      TimeNs t = static_cast<TimeNs>(rng() % 1000);
      d.first_start_ns = t;
      for (size_t i = 0, n = rng() % 50; i < n; ++i) {
        const TimeNs a = t + 1 + static_cast<TimeNs>(rng() % 300);
        t = a + 1 + static_cast<TimeNs>(rng() % 300);
        d.busy.emplace_back(a, t);
      }
      d.last_end_ns = t + static_cast<TimeNs>(rng() % 5);
      s.devices.push_back(std::move(d));
    }
    std::vector<std::pair<TimeNs, TimeNs>> spans;
    if (round % 2) spans.emplace_back(static_cast<TimeNs>(rng() % 500), 20000 + static_cast<TimeNs>(rng() % 500));
    check(s, spans, 1 + rng() % 450);
  }
  Summary wide;
  DeviceSummary d;
  d.first_start_ns = 0;
  d.last_end_ns = INT64_MAX;
  d.busy = {{5, 1000}, {INT64_MAX / 3, INT64_MAX / 2}, {INT64_MAX - 7, INT64_MAX}};
  wide.devices.push_back(d);
  check(wide, {}, kOverviewBins);
  check(Summary{}, {}, kOverviewBins);
  EXPECT_TRUE(BinBusy(Summary{}, {}, kOverviewBins).devices.empty());
}

TEST(Summary, QualityCountersListedInDeclarationOrder) {
  Trace t;
  t.quality.Add(Quality::kUnmatchedCorrelation, 3);
  Summary s = Summarize(t, {});
  EXPECT_FALSE(s.has_errors);
  ASSERT_EQ(s.quality.size(), kQualityInfo.size());
  for (size_t i = 0; i < s.quality.size(); ++i) EXPECT_EQ(s.quality[i].key, kQualityInfo[i].key);
  EXPECT_EQ(s.quality[static_cast<size_t>(Quality::kUnmatchedCorrelation)].count, 3u);
  EXPECT_EQ(s.quality[static_cast<size_t>(Quality::kUnmatchedCorrelation)].severity, Severity::kWarning);
  t.quality.Add(Quality::kSourceDroppedRecords);
  EXPECT_TRUE(Summarize(t, {}).has_errors);
}

}  // namespace
}  // namespace tg
