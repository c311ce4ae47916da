// A fuzz input as a file for readers that take a path: an in-memory file
// (memfd), named through /proc/self/fd, so a run does no disk I/O and
// leaves nothing behind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

namespace shoal_fuzz {

class input_file {
 public:
  input_file(const std::uint8_t* data, std::size_t size) {
    fd_ = memfd_create("shoal-fuzz-input", MFD_CLOEXEC);
    if (fd_ < 0) die("memfd_create");
    for (std::size_t done = 0; done < size;) {
      const ssize_t n = ::write(fd_, data + done, size - done);
      if (n <= 0) die("write");
      done += static_cast<std::size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~input_file() { ::close(fd_); }
  input_file(const input_file&) = delete;
  input_file& operator=(const input_file&) = delete;

  const std::string& path() const noexcept { return path_; }

 private:
  // A harness failure, not a finding: stop loudly rather than fuzz nothing.
  [[noreturn]] static void die(const char* what) {
    std::perror(what);
    std::abort();
  }

  int fd_ = -1;
  std::string path_;
};

}  // namespace shoal_fuzz
