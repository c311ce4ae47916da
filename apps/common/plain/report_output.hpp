// Where the driver writes its results: standard output, or the file named by
// --output (written by rank 0 only). Why a file: under mpirun a rank's
// standard output is a pipe to the launcher, so a write always succeeds in
// the rank and a full disk or a closed terminal behind mpirun is seen (and
// ignored) by the launcher alone; `--json > /dev/full` exits 0 there with
// the output lost. A file the rank writes itself has its errors checked
// here: the job then ends non-zero with a message instead.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace shoal_apps {

class report_output {
 public:
  /// Standard output when `path` is empty, else `path` opened for writing
  /// (created or truncated). Throws input_error naming --output, the file
  /// and the system's reason when it cannot be opened. Set-up only, on the
  /// rank that writes.
  explicit report_output(const std::string& path);
  /// Closes the file; a write error at that point is lost: call finish().
  ~report_output();
  report_output(const report_output&) = delete;
  report_output& operator=(const report_output&) = delete;

  /// The stream to write the results to.
  std::FILE* stream() const noexcept { return stream_; }

  /// Writes `text`, then flushes (and closes a file) and checks for a write
  /// error, naming `what` (e.g. "the gups report"). On one prints
  /// "<program>: error: cannot write <what> to <where>: <reason>" on stderr
  /// and returns false: the caller must exit non-zero (status 3), or the
  /// results are lost without a sign. Once only.
  [[nodiscard]] bool write(std::string_view text, std::string_view what);

 private:
  std::string path_;
  std::FILE* stream_ = stdout;
};

}  // namespace shoal_apps
