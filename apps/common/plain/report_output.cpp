#include "common/plain/report_output.hpp"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/plain/input_error.hpp"
#include "common/plain/text_input.hpp"

namespace shoal_apps {

report_output::report_output(const std::string& path) : path_(path) {
  if (path_.empty()) return;
  // Opened before the run, so that a bad path is refused at once rather
  // than after a long job whose results would then be lost.
  stream_ = std::fopen(path_.c_str(), "w");
  if (stream_ == nullptr) {
    const int err = errno;
    stream_ = stdout;
    throw input_error(fmt::format("--output: cannot open '{}' for writing: {}",
                                  printable(path_, 256), std::strerror(err)));
  }
}

report_output::~report_output() {
  if (stream_ != stdout && stream_ != nullptr) std::fclose(stream_);
}

bool report_output::write(std::string_view text, std::string_view what) {
  errno = 0;
  std::fwrite(text.data(), 1, text.size(), stream_);
  // A full disk shows only at the flush, the close (a file system that
  // writes back late) or in the error flag; errno then tells why.
  bool ok = std::fflush(stream_) == 0 && std::ferror(stream_) == 0;
  int err = errno;
  if (stream_ != stdout) {
    const bool closed = std::fclose(stream_) == 0;
    if (ok && !closed) err = errno;
    ok = ok && closed;
    stream_ = nullptr;
  }
  if (ok) return true;
  const std::string where =
      path_.empty() ? std::string("standard output") : fmt::format("'{}'", printable(path_, 256));
  std::fprintf(stderr, "%s: error: cannot write %.*s to %s: %s\n", program_invocation_short_name,
               static_cast<int>(what.size()), what.data(), where.c_str(),
               err != 0 ? std::strerror(err) : "write error");
  return false;
}

}  // namespace shoal_apps
