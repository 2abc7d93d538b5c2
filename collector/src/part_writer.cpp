// PartWriter: producers (CUPTI callbacks, NVTX hooks) queue batches under a short lock; one
// background thread, or a caller of Flush, moves them into the part file with an in-place
// StoreWriter, one transaction per flush holding the rows and the current state.
//
// Lock order: write_mu (one flush at a time, in submission order) before mu (the queue and the
// state). Producers only ever take mu and never wait on I/O.
#include "collector/src/part_writer.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "collector/src/parts.h"
#include "tracegate/analyzer/store.h"

namespace tg::internal {

namespace {

uint64_t EventRows(const Trace& t) {
  return t.kernels.size() + t.memcpys.size() + t.memsets.size() + t.syncs.size() + t.api_calls.size() +
         t.ranges.size() + t.samples.size();
}

// Replaces the element `same` finds, else appends.
template <class T, class Same>
void Upsert(std::vector<T>& v, const T& item, Same same) {
  auto it = std::find_if(v.begin(), v.end(), same);
  if (it == v.end()) v.push_back(item);
  else *it = item;
}

}  // namespace

struct PartWriter::Impl {
  std::string path;
  std::chrono::milliseconds interval{1000};
  std::unique_ptr<StoreWriter> store;

  std::mutex write_mu;  // held for a whole flush; taken before mu
  bool finished = false;  // guarded by write_mu
  Status result;          // first error, or Finish's result; guarded by write_mu
  bool reported = false;  // the first error has been printed; guarded by write_mu

  std::mutex mu;
  std::condition_variable wake;
  bool stopping = false;
  std::vector<Trace> queue;  // batches not yet in the file
  Trace state;               // metadata, devices, processes, quality (no event rows)
  uint64_t submitted = 0;
  bool failed = false;   // a write failed: batches are dropped from then on (guarded by mu)
  uint64_t dropped = 0;  // event rows dropped after the failure

  std::thread thread;

  void Run();
  Status FlushLocked(bool final);
  void NoteResult();
};

// Caller holds write_mu. After the first failed write (full disk, file size limit, I/O error)
// says so at once, on stderr, and stops queueing: the part keeps every flush before it (each is
// one transaction) and `record` reports the process's data as incomplete.
void PartWriter::Impl::NoteResult() {
  if (result.ok() || reported) return;
  reported = true;
  {
    std::lock_guard<std::mutex> lock(mu);
    failed = true;
    queue.clear();
  }
  std::fprintf(stderr, "tracegate: %s: recording in this process stops; what was written before stays readable\n",
               result.message().c_str());
}

PartWriter::PartWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Status PartWriter::Open(const PartWriterOptions& options, std::unique_ptr<PartWriter>* out) {
  auto impl = std::make_unique<Impl>();
  impl->path = options.path;
  impl->interval = std::chrono::milliseconds(options.flush_interval_ms > 0 ? options.flush_interval_ms : 1000);
  StoreWriterOptions store_options;
  store_options.in_place = true;
  TG_RETURN_IF_ERROR(StoreWriter::Create(options.path, store_options, &impl->store));
  out->reset(new PartWriter(std::move(impl)));
  Impl* raw = (*out)->impl_.get();
  if (options.background) raw->thread = std::thread([raw] { raw->Run(); });
  return Status::Ok();
}

PartWriter::~PartWriter() {
  bool finished;
  {
    std::lock_guard<std::mutex> w(impl_->write_mu);
    finished = impl_->finished;
  }
  // A failed write was printed when it happened; an error of the final flush is printed here
  // unless a caller of Finish saw it.
  Status s = Finish();
  if (!finished && !s.ok() && !impl_->reported) std::fprintf(stderr, "tracegate: %s\n", s.message().c_str());
}

void PartWriter::Impl::Run() {
  std::unique_lock<std::mutex> lock(mu);
  while (!stopping) {
    wake.wait_for(lock, interval, [this] { return stopping; });
    if (stopping) break;
    lock.unlock();
    {
      std::lock_guard<std::mutex> w(write_mu);
      if (!finished && result.ok()) {
        result = FlushLocked(false);
        NoteResult();
      }
    }
    lock.lock();
  }
}

// Caller holds write_mu. Takes the queue and a copy of the state under mu, writes without it.
Status PartWriter::Impl::FlushLocked(bool final) {
  std::vector<Trace> batches;
  Trace snapshot;
  {
    std::lock_guard<std::mutex> lock(mu);
    batches.swap(queue);
    snapshot.metadata = state.metadata;
    snapshot.devices = state.devices;
    snapshot.processes = state.processes;
    snapshot.quality = state.quality;
  }
  if (final) {
    // (insert_or_assign: GCC 12 warns falsely (-Wrestrict) on assigning "1" through operator[].)
    snapshot.metadata.insert_or_assign(std::string(kPartCompleteKey), std::string(1, '1'));
    TG_RETURN_IF_ERROR(store->AppendWithState(batches, snapshot));
    return store->Finish(snapshot);
  }
  return store->AppendWithState(batches, snapshot);
}

void PartWriter::Submit(Trace&& batch) {
  uint64_t rows = EventRows(batch);
  if (rows == 0) return;
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->submitted += rows;
  if (impl_->failed) {
    impl_->dropped += rows;  // nowhere to write them; memory must not grow without bound
    return;
  }
  impl_->queue.push_back(std::move(batch));
}

void PartWriter::AddQuality(Quality q, uint64_t n) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->state.quality.Add(q, n);
}

void PartWriter::SetMetadata(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->state.metadata[key] = value;
}

void PartWriter::AddDevice(const Device& device) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Upsert(impl_->state.devices, device, [&](const Device& d) { return d.id == device.id; });
}

void PartWriter::AddProcess(const Process& process) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Upsert(impl_->state.processes, process, [&](const Process& p) { return p.pid == process.pid; });
}

Status PartWriter::Flush() {
  std::lock_guard<std::mutex> w(impl_->write_mu);
  if (impl_->finished || !impl_->result.ok()) return impl_->result;
  impl_->result = impl_->FlushLocked(false);
  impl_->NoteResult();
  return impl_->result;
}

Status PartWriter::Finish() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
  std::lock_guard<std::mutex> w(impl_->write_mu);
  if (impl_->finished) return impl_->result;
  impl_->finished = true;
  if (impl_->result.ok()) impl_->result = impl_->FlushLocked(true);
  impl_->store.reset();  // closes the file
  return impl_->result;
}

uint64_t PartWriter::EventsSubmitted() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->submitted;
}

uint64_t PartWriter::EventsDropped() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->dropped;
}

}  // namespace tg::internal
