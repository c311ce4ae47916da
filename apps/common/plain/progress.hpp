// Progress of a long run on stderr, only when stderr is a terminal (so logs
// and JSON consumers never see it): "bfs: roots 12/64".
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include <unistd.h>

namespace shoal_apps {

class progress {
 public:
  /// `what` names the unit counted, e.g. "bfs: roots". Call from one thread.
  progress(std::string what, std::int64_t total)
      : what_(std::move(what)), total_(total), on_(isatty(2) == 1) {}
  progress(const progress&) = delete;
  progress& operator=(const progress&) = delete;
  ~progress() {
    if (on_ && shown_) std::fputs("\r\033[K", stderr);
  }

  /// Reports that `done` of `total` units are finished.
  void update(std::int64_t done) {
    if (!on_) return;
    shown_ = true;
    std::fprintf(stderr, "\r%s %lld/%lld", what_.c_str(), static_cast<long long>(done),
                 static_cast<long long>(total_));
    std::fflush(stderr);
  }

 private:
  std::string what_;
  std::int64_t total_;
  bool on_;
  bool shown_ = false;
};

}  // namespace shoal_apps
