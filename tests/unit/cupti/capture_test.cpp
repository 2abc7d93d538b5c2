// `record --capture-range nvtx:NAME --iterations K:N`: which NVTX calls open and close the
// recording window, from the window's own calls and from CUPTI's NVTX callback data filled by hand.
#include "capture.h"

#include <cupti.h>
#include <generated_nvtx_meta.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace tg::cupti {
namespace {

using A = CaptureWindow::Action;

TEST(CaptureWindow, EveryOutermostRangeOfTheNameIsAWindow) {
  CaptureWindow w("step", 0, 0);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(w.Push(1, "step"), A::kStart);
    EXPECT_TRUE(w.open());
    EXPECT_EQ(w.Push(1, "forward"), A::kNone);
    EXPECT_EQ(w.Push(1, "step"), A::kNone);  // nested: not a window, not counted
    EXPECT_EQ(w.Pop(1), A::kNone);
    EXPECT_EQ(w.Pop(1), A::kNone);
    EXPECT_EQ(w.Pop(1), A::kStop);
    EXPECT_FALSE(w.open());
    EXPECT_EQ(w.Push(1, "data"), A::kNone);
    EXPECT_EQ(w.Pop(1), A::kNone);
  }
  EXPECT_EQ(w.seen(), 3);
  EXPECT_EQ(w.windows(), 3);
}

TEST(CaptureWindow, IterationsSkipKThenRecordN) {
  CaptureWindow w("step", 2, 3);
  std::vector<A> opened;
  for (int i = 0; i < 8; ++i) {
    opened.push_back(w.Push(7, "step"));
    EXPECT_EQ(w.Pop(7), opened.back() == A::kStart ? A::kStop : A::kNone);
  }
  EXPECT_EQ(opened, (std::vector<A>{A::kNone, A::kNone, A::kStart, A::kStart, A::kStart, A::kNone, A::kNone, A::kNone}));
  EXPECT_EQ(w.seen(), 8);
  EXPECT_EQ(w.windows(), 3);
}

TEST(CaptureWindow, OneWindowAtATimeAcrossThreads) {
  CaptureWindow w("step", 0, 0);
  EXPECT_EQ(w.Push(1, "step"), A::kStart);
  EXPECT_EQ(w.Push(2, "step"), A::kNone);  // counted, but the window is open already
  EXPECT_EQ(w.Pop(2), A::kNone);
  EXPECT_EQ(w.Pop(1), A::kStop);
  EXPECT_EQ(w.Pop(1), A::kNone);  // a pop without its push
  EXPECT_EQ(w.seen(), 2);
  EXPECT_EQ(w.windows(), 1);
}

TEST(CaptureWindow, StartEndRangesById) {
  CaptureWindow w("load", 1, 1);
  EXPECT_EQ(w.Start(10, "load"), A::kNone);  // skipped
  EXPECT_EQ(w.Start(11, "other"), A::kNone);
  EXPECT_EQ(w.End(10), A::kNone);
  EXPECT_EQ(w.Start(12, "load"), A::kStart);
  EXPECT_EQ(w.End(11), A::kNone);
  EXPECT_EQ(w.End(12), A::kStop);
  EXPECT_EQ(w.End(12), A::kNone);
  EXPECT_EQ(w.Start(13, "load"), A::kNone);  // N reached
  EXPECT_EQ(w.windows(), 1);
}

TEST(CaptureWindow, ManyThreadsOneWindowPerOccurrence) {
  CaptureWindow w("step", 0, 0);
  std::atomic<int> starts{0}, stops{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        starts += w.Push(t, "step") == A::kStart;
        stops += w.Pop(t) == A::kStop;
      }
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(starts.load(), stops.load());
  EXPECT_EQ(w.windows(), starts.load());
  EXPECT_EQ(w.seen(), 2000);
  EXPECT_FALSE(w.open());
}

// CUPTI's NVTX callback data, as CUPTI passes it (generated_nvtx_meta.h parameter structs).
TEST(CaptureWindow, DecodesCuptiNvtxCallbacks) {
  CaptureWindow w("step", 0, 0);
  nvtxRangePushA_params push{"step"};
  CUpti_NvtxData d{"nvtxRangePushA", &push, nullptr};
  EXPECT_EQ(w.OnNvtxCallback(CUPTI_CBID_NVTX_nvtxRangePushA, &d, 3), A::kStart);
  CUpti_NvtxData pop{"nvtxRangePop", &push, nullptr};  // params unused by a pop
  EXPECT_EQ(w.OnNvtxCallback(CUPTI_CBID_NVTX_nvtxRangePop, &pop, 3), A::kStop);

  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attr.message.ascii = "step";
  nvtxDomainRangePushEx_params dpush{nullptr, {&attr}};
  CUpti_NvtxData dd{"nvtxDomainRangePushEx", &dpush, nullptr};
  EXPECT_EQ(w.OnNvtxCallback(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, &dd, 4), A::kStart);
  nvtxDomainRangePop_params dpop{nullptr};
  CUpti_NvtxData dp{"nvtxDomainRangePop", &dpop, nullptr};
  EXPECT_EQ(w.OnNvtxCallback(CUPTI_CBID_NVTX_nvtxDomainRangePop, &dp, 4), A::kStop);

  nvtxRangeStartA_params start{"step"};
  nvtxRangeId_t id = 42;
  CUpti_NvtxData s{"nvtxRangeStartA", &start, &id};
  EXPECT_EQ(w.OnNvtxCallback(CUPTI_CBID_NVTX_nvtxRangeStartA, &s, 5), A::kStart);
  nvtxRangeEnd_params end{42};
  CUpti_NvtxData e{"nvtxRangeEnd", &end, nullptr};
  EXPECT_EQ(w.OnNvtxCallback(CUPTI_CBID_NVTX_nvtxRangeEnd, &e, 6), A::kStop);

  // Not ASCII, no parameters, or a mark: nothing.
  attr.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  EXPECT_EQ(w.OnNvtxCallback(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, &dd, 4), A::kNone);
  CUpti_NvtxData empty{"nvtxRangePushA", nullptr, nullptr};
  EXPECT_EQ(w.OnNvtxCallback(CUPTI_CBID_NVTX_nvtxRangePushA, &empty, 3), A::kNone);
  EXPECT_EQ(w.OnNvtxCallback(CUPTI_CBID_NVTX_nvtxMarkA, &d, 3), A::kNone);
  EXPECT_EQ(w.windows(), 3);
}

}  // namespace
}  // namespace tg::cupti
