// MappedFile and AtomicFile over POSIX calls (open, mmap, write, fsync, rename).
#include "zerotrain/core/files.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <utility>

#include "zerotrain/core/io_error.h"

namespace zt {

namespace {
constexpr std::string_view kComponent = "io";

// Closes on scope exit (for paths that throw between open and the hand-over).
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

void fsync_directory(const std::filesystem::path& dir) {
  const std::filesystem::path d = dir.empty() ? std::filesystem::path(".") : dir;
  const int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw_errno(kComponent, "cannot open directory", d);
  FdGuard guard{fd};
  // Some file systems do not sync directories (EINVAL); the rename is then as durable as it gets.
  if (::fsync(fd) != 0 && errno != EINVAL) throw_errno(kComponent, "cannot fsync directory", d);
}

std::string non_regular_kind(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return "";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  if (S_ISDIR(st.st_mode)) return "a directory";
  return "a special file";
}

int open_read_only(const std::filesystem::path& path) {
  return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
}

MappedFile::MappedFile(const std::filesystem::path& path) : path_(path) {
  if (const std::string kind = non_regular_kind(path); !kind.empty())
    throw IoError(kComponent, str(path.string(), " is ", kind, ", not a regular file"));
  const int fd = open_read_only(path);
  if (fd < 0) throw_errno(kComponent, "cannot open", path);
  FdGuard guard{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw_errno(kComponent, "cannot stat", path);
  if (!S_ISREG(st.st_mode)) throw IoError(kComponent, str(path.string(), " is not a regular file"));
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) return;
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) throw_errno(kComponent, "cannot mmap", path);
  data_ = static_cast<const std::byte*>(p);
}

MappedFile::~MappedFile() {
  release();
}

MappedFile::MappedFile(MappedFile&& o) noexcept
    : path_(std::move(o.path_)),
      data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    release();
    path_ = std::move(o.path_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

void MappedFile::release() noexcept {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
  static std::atomic<uint64_t> counter{0};
  temp_ = target_;
  temp_ += str(".tmp-", ::getpid(), "-", counter.fetch_add(1));
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) throw_errno(kComponent, "cannot create", temp_);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_.c_str());
}

void AtomicFile::write(const void* data, size_t nbytes) {
  if (fd_ < 0) throw IoError(kComponent, str("write to ", target_.string(), " after commit"));
  const auto* p = static_cast<const char*>(data);
  while (nbytes > 0) {
    const ssize_t n = ::write(fd_, p, nbytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(kComponent, "cannot write", temp_);
    }
    p += n;
    nbytes -= static_cast<size_t>(n);
    written_ += static_cast<uint64_t>(n);
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) throw IoError(kComponent, str(target_.string(), " committed twice"));
  if (::fsync(fd_) != 0) throw_errno(kComponent, "cannot fsync", temp_);
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) throw_errno(kComponent, "cannot close", temp_);
  if (::rename(temp_.c_str(), target_.c_str()) != 0)
    throw_errno(kComponent, str("cannot rename ", temp_.string(), " to"), target_);
  committed_ = true;
  fsync_directory(target_.parent_path());
}

std::string read_text_file(const std::filesystem::path& path, std::string_view component) {
  if (const std::string kind = non_regular_kind(path); !kind.empty())
    throw IoError(component, str(path.string(), " is ", kind, ", not a regular file"));
  const int fd = open_read_only(path);
  if (fd < 0) throw_errno(component, "cannot open", path);
  FdGuard guard{fd};
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(component, "cannot read", path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

void write_file_atomic(const std::filesystem::path& path, std::string_view contents) {
  AtomicFile f(path);
  f.write(contents);
  f.commit();
}

}  // namespace zt
