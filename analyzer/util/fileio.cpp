#include "analyzer/util/fileio.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace tg::internal {

namespace {
std::string DirOf(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

void FsyncDir(const std::string& path) {
  int fd = ::open(DirOf(path).c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}
}  // namespace

std::string TempPathFor(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

Status WriteFileAtomic(const std::string& path, std::string_view content) { return WriteFileAtomic(path, {content}); }

Status WriteFileAtomic(const std::string& path, std::initializer_list<std::string_view> parts) {
  std::string tmp;
  TG_RETURN_IF_ERROR(WriteTempFile(path, parts, &tmp));
  return CommitTempFile(tmp, path);
}

Status WriteTempFile(const std::string& path, std::initializer_list<std::string_view> parts, std::string* tmp_out) {
  AtomicFile file(path);
  TG_RETURN_IF_ERROR(file.Open());
  uint64_t offset = 0;
  for (std::string_view content : parts) {
    TG_RETURN_IF_ERROR(file.WriteAt(offset, content));
    offset += content.size();
  }
  return file.Close(tmp_out);
}

Status CommitTempFile(const std::string& tmp, const std::string& path) {
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return IoError(path + ": cannot rename temp file into place: " + std::strerror(err));
  }
  FsyncDir(path);
  return Status::Ok();
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

Status AtomicFile::Open() {
  tmp_ = TempPathFor(path_);
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    tmp_.clear();
    return IoError(path_ + ": cannot create: " + std::strerror(errno));
  }
  return Status::Ok();
}

Status AtomicFile::WriteAt(uint64_t offset, std::string_view content) {
  const char* p = content.data();
  size_t left = content.size();
  auto at = static_cast<off_t>(offset);
  while (left > 0) {
    const ssize_t n = ::pwrite(fd_, p, left, at);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(path_ + ": write failed: " + std::strerror(errno));
    }
    p += n;
    at += n;
    left -= static_cast<size_t>(n);
  }
  // A hint only (its failure changes nothing): Commit's fsync makes it durable.
  if (!content.empty())
    ::sync_file_range(fd_, static_cast<off_t>(offset), static_cast<off_t>(content.size()), SYNC_FILE_RANGE_WRITE);
  return Status::Ok();
}

Status AtomicFile::Close(std::string* tmp) {
  const int fd = std::exchange(fd_, -1);
  const int synced = ::fsync(fd) == 0 ? 0 : errno;
  const int closed = ::close(fd) == 0 ? 0 : errno;
  if (synced != 0 || closed != 0) return IoError(path_ + ": write failed: " + std::strerror(synced ? synced : closed));
  *tmp = std::exchange(tmp_, std::string());  // the caller's now: not removed here
  return Status::Ok();
}

Status AtomicFile::Commit() {
  std::string tmp;
  TG_RETURN_IF_ERROR(Close(&tmp));
  return CommitTempFile(tmp, path_);
}

Status CheckReadableFile(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFound(path + ": no such file");
    return IoError(path + ": cannot open: " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return InvalidInput(path + ": is a directory, expected a trace file");
  if (!S_ISREG(st.st_mode)) return InvalidInput(path + ": not a regular file");
  if (::access(path.c_str(), R_OK) != 0) return IoError(path + ": cannot read: " + std::strerror(errno));
  if (st.st_size == 0) return InvalidInput(path + ": file is empty");
  return Status::Ok();
}

}  // namespace tg::internal
