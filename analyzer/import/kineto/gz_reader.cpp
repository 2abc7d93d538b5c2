#include "analyzer/import/kineto/gz_reader.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>

namespace tg::internal {

namespace {
// zlib's own input buffer; large enough that inflate is not starved by small reads.
constexpr unsigned kZlibBuffer = 256 * 1024;
}  // namespace

// The read-ahead: two chunks, one being inflated while the other is read.
struct GzReader::Ahead {
  static constexpr size_t kChunk = size_t{4} << 20;
  struct Chunk {
    std::unique_ptr<char[]> data{new char[kChunk]};
    size_t got = 0;
    Status status;
    bool full = false;
  };
  std::mutex mu;
  std::condition_variable cv;
  Chunk chunks[2];
  bool stop = false;
  std::thread thread;
  // Reader side.
  int current = 0;
  size_t pos = 0;          // in chunks[current]
  uint64_t delivered = 0;  // bytes returned by Read so far
  bool direct = false;     // after an inflate error: plain reads from then on

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    cv.notify_all();
    if (thread.joinable()) thread.join();
  }
};

GzReader::GzReader() = default;

GzReader::~GzReader() {
  if (ahead_) ahead_->Stop();
  if (gz_) gzclose(gz_);
}

void GzReader::ReadAhead() {
  if (!gzipped_ || ahead_) return;
  ahead_ = std::make_unique<Ahead>();
  try {
    StartInflater();
  } catch (const std::system_error&) {
    ahead_.reset();  // no thread to be had: plain reads
  }
}

void GzReader::StartInflater() {
  ahead_->thread = std::thread([this] {
    Ahead& a = *ahead_;
    for (int k = 0;; k ^= 1) {
      Ahead::Chunk& c = a.chunks[k];
      {
        std::unique_lock<std::mutex> lock(a.mu);
        a.cv.wait(lock, [&] { return !c.full || a.stop; });
        if (a.stop) return;
      }
      size_t got = 0;
      Status s = ReadDirect(c.data.get(), Ahead::kChunk, got);
      {
        std::lock_guard<std::mutex> lock(a.mu);
        c.got = got;
        c.status = s;
        c.full = true;
      }
      a.cv.notify_all();
      if (!s.ok() || got == 0) return;
    }
  });
}

Status GzReader::Read(char* dst, size_t n, size_t& got) {
  if (!ahead_ || ahead_->direct) return ReadDirect(dst, n, got);
  return ReadBuffered(dst, n, got);
}

Status GzReader::ReadBuffered(char* dst, size_t n, size_t& got) {
  Ahead& a = *ahead_;
  got = 0;
  while (got < n) {
    Ahead::Chunk& c = a.chunks[a.current];
    {
      std::unique_lock<std::mutex> lock(a.mu);
      a.cv.wait(lock, [&] { return c.full; });
    }
    if (!c.status.ok()) {
      // Somewhere in this chunk zlib failed. Read again from the start of this call, as a reader
      // without read-ahead would, so the same call reports the same error.
      a.Stop();
      a.direct = true;
      TG_RETURN_IF_ERROR(Reopen(a.delivered));
      return ReadDirect(dst, n, got);
    }
    if (c.got == 0) break;  // the end of the data
    size_t take = std::min(n - got, c.got - a.pos);
    std::memcpy(dst + got, c.data.get() + a.pos, take);
    got += take;
    a.pos += take;
    if (a.pos == c.got) {
      {
        std::lock_guard<std::mutex> lock(a.mu);
        c.full = false;
      }
      a.cv.notify_all();
      a.current ^= 1;
      a.pos = 0;
    }
  }
  a.delivered += got;
  return Status::Ok();
}

Status GzReader::Reopen(uint64_t skip) {
  gzclose(gz_);
  gz_ = gzopen(path_.c_str(), "rb");
  if (!gz_) return IoError(std::string("cannot open again: ") + (errno ? std::strerror(errno) : "out of memory"));
  gzbuffer(gz_, kZlibBuffer);
  std::unique_ptr<char[]> scratch(new char[1 << 20]);
  while (skip > 0) {
    size_t got = 0;
    TG_RETURN_IF_ERROR(ReadDirect(scratch.get(), std::min<uint64_t>(skip, 1 << 20), got));
    if (got == 0) return InvalidInput("the gzip data changed while it was read");
    skip -= got;
  }
  return Status::Ok();
}

std::string GzReader::ZlibMessage(const char* msg) const {
  std::string m = msg && *msg ? msg : "unknown error";
  if (m.compare(0, path_.size() + 2, path_ + ": ") == 0) m.erase(0, path_.size() + 2);
  return m;
}

Status GzReader::Open(const std::string& path) {
  path_ = path;
  errno = 0;
  gz_ = gzopen(path.c_str(), "rb");
  if (!gz_) {
    return IoError(std::string("cannot open: ") + (errno ? std::strerror(errno) : "out of memory"));
  }
  gzbuffer(gz_, kZlibBuffer);
  // gzdirect is only meaningful after the first read has looked at the header, so peek a byte.
  int c = gzgetc(gz_);
  if (c >= 0) gzungetc(c, gz_);
  gzipped_ = gzdirect(gz_) == 0;
  int err = 0;
  const char* msg = gzerror(gz_, &err);
  if (err != Z_OK && err != Z_BUF_ERROR) {
    return InvalidInput("corrupt gzip data (" + ZlibMessage(msg) + ")");
  }
  return Status::Ok();
}

Status GzReader::ReadDirect(char* dst, size_t n, size_t& got) {
  got = 0;
  if (n > static_cast<size_t>(INT_MAX)) n = static_cast<size_t>(INT_MAX);
  int r = gzread(gz_, dst, static_cast<unsigned>(n));
  int err = 0;
  const char* msg = gzerror(gz_, &err);
  if (r < 0 || (err != Z_OK && err != Z_BUF_ERROR)) {
    if (err == Z_ERRNO) return IoError(std::string("read failed: ") + std::strerror(errno));
    return InvalidInput("corrupt gzip data (" + ZlibMessage(msg) + ")");
  }
  if (err == Z_BUF_ERROR) {
    // zlib's way of saying the compressed stream ended before its trailer.
    return InvalidInput("truncated gzip data (the compressed stream ends early)");
  }
  got = static_cast<size_t>(r);
  return Status::Ok();
}

Status GzReader::Seek(uint64_t offset) {
  if (gzipped_) return Unsupported("cannot seek in gzip data");
  // For a plain file zlib seeks the descriptor (lseek), reading nothing.
  if (gzseek(gz_, static_cast<z_off_t>(offset), SEEK_SET) < 0) {
    return IoError(std::string("seek failed: ") + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace tg::internal
