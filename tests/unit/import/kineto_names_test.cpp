#include <gtest/gtest.h>

#include "analyzer/vocab/kineto_names.h"

namespace tg::internal {
namespace {

TEST(KinetoNames, EveryKindRoundTripsThroughItsKinetoSpelling) {
  for (int k = 0; k < static_cast<int>(MemKind::kUnknown); ++k) {
    auto kind = static_cast<MemKind>(k);
    EXPECT_EQ(MemKindFromKineto(KinetoMemKindName(kind)), kind);
  }
  for (int k = 1; k <= static_cast<int>(SyncKind::kContextSync); ++k) {
    auto kind = static_cast<SyncKind>(k);
    EXPECT_EQ(SyncKindFromKineto(KinetoSyncKindName(kind)), kind);
  }
  for (int k = 1; k <= static_cast<int>(CopyKind::kPtoP); ++k) {
    auto kind = static_cast<CopyKind>(k);
    EXPECT_EQ(CopyKindFromName(CopyKindName(kind)), kind);
  }
}

TEST(KinetoNames, BuildsNamesAsKinetoWritesThem) {
  EXPECT_EQ(KinetoMemcpyName(CopyKind::kHtoD, MemKind::kPageable, MemKind::kDevice),
            "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(KinetoMemsetName(MemKind::kDevice), "Memset (Device)");
  EXPECT_EQ(KinetoSyncKindName(SyncKind::kStreamWaitEvent), "Stream Wait Event");
  EXPECT_EQ(MemKindFromKineto("Something"), MemKind::kUnknown);
}

}  // namespace
}  // namespace tg::internal
