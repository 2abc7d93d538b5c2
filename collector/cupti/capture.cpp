// The NVTX capture window; see capture.h.
#include "capture.h"

#include <cupti.h>
#include <generated_nvtx_meta.h>

#include <algorithm>
#include <utility>

namespace tg::cupti {

CaptureWindow::CaptureWindow(std::string name, int64_t skip, int64_t count)
    : name_(std::move(name)), skip_(std::max<int64_t>(0, skip)), count_(std::max<int64_t>(0, count)) {}

CaptureWindow::Entry CaptureWindow::Occurrence(bool matches, bool nested) {
  if (!matches || nested) return Entry::kOther;
  const int64_t index = seen_++;
  const bool wanted = index >= skip_ && (count_ == 0 || index < skip_ + count_);
  if (!wanted || open_) return Entry::kCounted;
  open_ = true;
  windows_++;
  return Entry::kWindow;
}

CaptureWindow::Action CaptureWindow::Push(int64_t tid, std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Entry>& stack = stacks_[tid];
  const bool nested = std::any_of(stack.begin(), stack.end(), [](Entry e) { return e != Entry::kOther; });
  Entry e = Occurrence(name == name_, nested);
  stack.push_back(e);
  return e == Entry::kWindow ? Action::kStart : Action::kNone;
}

CaptureWindow::Action CaptureWindow::Pop(int64_t tid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = stacks_.find(tid);
  if (it == stacks_.end() || it->second.empty()) return Action::kNone;  // a pop without its push
  Entry e = it->second.back();
  it->second.pop_back();
  if (it->second.empty()) stacks_.erase(it);
  if (e != Entry::kWindow) return Action::kNone;
  open_ = false;
  return Action::kStop;
}

CaptureWindow::Action CaptureWindow::Start(uint64_t id, std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry e = Occurrence(name == name_, false);
  if (e != Entry::kOther) started_[id] = e;
  return e == Entry::kWindow ? Action::kStart : Action::kNone;
}

CaptureWindow::Action CaptureWindow::End(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = started_.find(id);
  if (it == started_.end()) return Action::kNone;
  Entry e = it->second;
  started_.erase(it);
  if (e != Entry::kWindow) return Action::kNone;
  open_ = false;
  return Action::kStop;
}

namespace {

// The name of an NVTX range push or start, ASCII only ("" otherwise).
const char* NvtxName(const nvtxEventAttributes_t* a) {
  return a && a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii ? a->message.ascii : "";
}

const char* Or(const char* s) { return s ? s : ""; }

}  // namespace

CaptureWindow::Action CaptureWindow::OnNvtxCallback(uint32_t cbid, const void* data, int64_t tid) {
  const auto* d = static_cast<const CUpti_NvtxData*>(data);
  const void* p = d ? d->functionParams : nullptr;
  if (!p) return Action::kNone;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      return Push(tid, Or(static_cast<const nvtxRangePushA_params*>(p)->message));
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      return Push(tid, NvtxName(static_cast<const nvtxRangePushEx_params*>(p)->eventAttrib));
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
      return Push(tid, NvtxName(static_cast<const nvtxDomainRangePushEx_params*>(p)->core.eventAttrib));
    case CUPTI_CBID_NVTX_nvtxRangePop:
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      return Pop(tid);
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
      if (!d->functionReturnValue) return Action::kNone;  // the id is the start's return value
      const auto id = *static_cast<const nvtxRangeId_t*>(d->functionReturnValue);
      const char* name = cbid == CUPTI_CBID_NVTX_nvtxRangeStartA
                             ? Or(static_cast<const nvtxRangeStartA_params*>(p)->message)
                         : cbid == CUPTI_CBID_NVTX_nvtxRangeStartEx
                             ? NvtxName(static_cast<const nvtxRangeStartEx_params*>(p)->eventAttrib)
                             : NvtxName(static_cast<const nvtxDomainRangeStartEx_params*>(p)->core.eventAttrib);
      return Start(id, name);
    }
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      return End(static_cast<const nvtxRangeEnd_params*>(p)->id);
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
      return End(static_cast<const nvtxDomainRangeEnd_params*>(p)->core.id);
    default:
      return Action::kNone;
  }
}

int64_t CaptureWindow::seen() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_;
}

int64_t CaptureWindow::windows() const {
  std::lock_guard<std::mutex> lock(mu_);
  return windows_;
}

bool CaptureWindow::open() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

}  // namespace tg::cupti
