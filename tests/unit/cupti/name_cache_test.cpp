// The converter's name caches: kernel names by CUPTI's name pointer (checked against the text, as
// CUPTI may reuse the memory of an unloaded module's names), API names by callback id, and the
// ids a name has in the batch being converted.
#include <gtest/gtest.h>

#include <cstring>
#include <new>
#include <string>

#include "convert.h"

namespace tg::cupti {
namespace {

constexpr int64_t kPid = 4242;

template <typename Record>
Record Zeroed(CUpti_ActivityKind kind) {
  Record r;
  std::memset(&r, 0, sizeof r);
  r.kind = kind;
  return r;
}

template <typename Record>
void Feed(ActivityConverter& c, const Record& r, Trace& batch) {
  c.Convert(reinterpret_cast<const CUpti_Activity&>(r), batch);
}

void FeedKernel(ActivityConverter& c, const char* name, Trace& batch) {
  auto r = Zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  r.name = name;
  r.start = 10;
  r.end = 20;
  Feed(c, r, batch);
}

void FeedApi(ActivityConverter& c, CUpti_ActivityKind kind, uint32_t cbid, Trace& batch) {
  auto r = Zeroed<CUpti_ActivityAPI>(kind);
  r.cbid = cbid;
  r.start = 10;
  r.end = 20;
  Feed(c, r, batch);
}

// The name of every kernel row of `batch`, in order.
std::vector<std::string> KernelNames(const Trace& batch) {
  std::vector<std::string> out;
  for (size_t i = 0; i < batch.kernels.size(); ++i) out.emplace_back(batch.Name(batch.kernels.name[i]));
  return out;
}

ActivityConverter MakeConverter(int* lookups = nullptr) {
  return ActivityConverter(kPid, [lookups](ApiKind kind, uint32_t cbid) -> std::string {
    if (lookups) ++*lookups;
    if (kind == ApiKind::kRuntime && cbid == 211) return "cudaLaunchKernel_v7000";
    if (kind == ApiKind::kDriver && cbid == 211) return "cuMemcpyHtoD_v2";
    if (kind == ApiKind::kDriver && cbid == 307) return "cuLaunchKernel";
    return "";
  });
}

TEST(CuptiNameCache, OnePointerTwoRecordsOneName) {
  ActivityConverter c = MakeConverter();
  const std::string name = "_Z3addPfS_";
  Trace batch;
  FeedKernel(c, name.c_str(), batch);
  FeedKernel(c, name.c_str(), batch);
  ASSERT_EQ(batch.kernels.size(), 2u);
  EXPECT_EQ(batch.kernels.name[0], batch.kernels.name[1]);
  EXPECT_EQ(KernelNames(batch), (std::vector<std::string>{"add(float*, float*)", "add(float*, float*)"}));
}

TEST(CuptiNameCache, TwoPointersWithEqualTextGiveOneName) {
  ActivityConverter c = MakeConverter();
  const std::string a = "_Z3addPfS_", b = "_Z3addPfS_";  // one kernel in two modules
  ASSERT_NE(a.c_str(), b.c_str());
  Trace batch;
  FeedKernel(c, a.c_str(), batch);
  FeedKernel(c, b.c_str(), batch);
  FeedKernel(c, a.c_str(), batch);
  EXPECT_EQ(batch.kernels.name[0], batch.kernels.name[1]);
  EXPECT_EQ(batch.kernels.name[0], batch.kernels.name[2]);
  EXPECT_EQ(batch.strings.size(), 2u);  // "" and the one name
}

// A module unloaded and another loaded: CUPTI's name string of a kernel of the first may be freed
// and the memory reused for a kernel of the second, even with a name of the same length.
TEST(CuptiNameCache, APointerReusedForOtherTextGivesTheNewName) {
  ActivityConverter c = MakeConverter();
  char reused[32];
  std::strcpy(reused, "_Z3addPfS_");
  Trace batch;
  FeedKernel(c, reused, batch);
  std::strcpy(reused, "_Z3subPfS_");  // same length, same address
  FeedKernel(c, reused, batch);
  std::strcpy(reused, "_Z5scalePfif");  // longer
  FeedKernel(c, reused, batch);
  std::strcpy(reused, "_Z3addPfS_");  // back to the first text: the first entry again
  FeedKernel(c, reused, batch);
  EXPECT_EQ(KernelNames(batch), (std::vector<std::string>{"add(float*, float*)", "sub(float*, float*)",
                                                          "scale(float*, int, float)", "add(float*, float*)"}));
  EXPECT_EQ(batch.kernels.name[0], batch.kernels.name[3]);
  EXPECT_EQ(batch.strings.size(), 4u);
}

// Ids are per batch (each has its own string table): a name met in an earlier batch is interned
// into the new one, whatever order the names come in.
TEST(CuptiNameCache, EachBatchGetsItsOwnIds) {
  ActivityConverter c = MakeConverter();
  const std::string add = "_Z3addPfS_", sub = "_Z3subPfS_";
  Trace first;
  FeedKernel(c, add.c_str(), first);
  FeedKernel(c, sub.c_str(), first);
  FeedApi(c, CUPTI_ACTIVITY_KIND_RUNTIME, 211, first);
  Trace second;
  FeedApi(c, CUPTI_ACTIVITY_KIND_RUNTIME, 211, second);
  FeedKernel(c, sub.c_str(), second);
  FeedKernel(c, add.c_str(), second);
  EXPECT_EQ(KernelNames(second), (std::vector<std::string>{"sub(float*, float*)", "add(float*, float*)"}));
  EXPECT_EQ(second.Name(second.api_calls.name[0]), "cudaLaunchKernel_v7000");
  EXPECT_EQ(KernelNames(first), (std::vector<std::string>{"add(float*, float*)", "sub(float*, float*)"}));
}

// The collector's batch lives on the stack of the buffer-completed callback, so each buffer's
// Trace may sit at the address of the last one.
TEST(CuptiNameCache, ANewBatchAtTheAddressOfTheLastIsANewBatch) {
  ActivityConverter c = MakeConverter();
  const std::string add = "_Z3addPfS_", sub = "_Z3subPfS_";
  alignas(Trace) unsigned char storage[sizeof(Trace)];
  // Noticed by Convert itself: the new table is smaller than the last one was.
  Trace* batch = new (storage) Trace;
  FeedKernel(c, add.c_str(), *batch);
  FeedKernel(c, sub.c_str(), *batch);
  batch->~Trace();
  batch = new (storage) Trace;
  FeedKernel(c, sub.c_str(), *batch);
  EXPECT_EQ(KernelNames(*batch), (std::vector<std::string>{"sub(float*, float*)"}));
  batch->~Trace();
  // Told by BeginBatch: a new table that happens to hold as many strings as the last one.
  batch = new (storage) Trace;
  batch->strings.Intern("x");
  batch->strings.Intern("y");
  c.BeginBatch(*batch);
  FeedKernel(c, sub.c_str(), *batch);
  EXPECT_EQ(KernelNames(*batch), (std::vector<std::string>{"sub(float*, float*)"}));
  batch->~Trace();
}

TEST(CuptiNameCache, ApiNamesByKindAndCallbackIdLookedUpOnce) {
  int lookups = 0;
  ActivityConverter c = MakeConverter(&lookups);
  Trace batch;
  for (int i = 0; i < 3; ++i) {
    FeedApi(c, CUPTI_ACTIVITY_KIND_RUNTIME, 211, batch);
    FeedApi(c, CUPTI_ACTIVITY_KIND_DRIVER, 211, batch);  // the same id means another function
    FeedApi(c, CUPTI_ACTIVITY_KIND_DRIVER, 0, batch);
  }
  ASSERT_EQ(batch.api_calls.size(), 9u);
  EXPECT_EQ(batch.Name(batch.api_calls.name[0]), "cudaLaunchKernel_v7000");
  EXPECT_EQ(batch.Name(batch.api_calls.name[1]), "cuMemcpyHtoD_v2");
  EXPECT_EQ(batch.Name(batch.api_calls.name[2]), "driver API 0");
  EXPECT_EQ(batch.api_calls.name[0], batch.api_calls.name[6]);
  EXPECT_EQ(lookups, 3);
}

TEST(CuptiNameCache, HugeCallbackIdsStillNamed) {
  int lookups = 0;
  ActivityConverter c = MakeConverter(&lookups);
  Trace batch;
  FeedApi(c, CUPTI_ACTIVITY_KIND_RUNTIME, 4'000'000'000u, batch);
  FeedApi(c, CUPTI_ACTIVITY_KIND_DRIVER, 70'000, batch);
  EXPECT_EQ(batch.Name(batch.api_calls.name[0]), "runtime API 4000000000");
  EXPECT_EQ(batch.Name(batch.api_calls.name[1]), "driver API 70000");
}

}  // namespace
}  // namespace tg::cupti
