// The one error the apps and baselines raise for bad input (no shoal here:
// the plain-MPI baselines throw it too).
#pragma once

#include <stdexcept>

namespace shoal_apps {

/// Bad input named by the user: a flag value, a file, a line of it. The
/// driver (or a baseline's main) prints "<program>: error: <what()>" and ends
/// the whole job with status 2, so the message must name what was wrong and
/// where.
class input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace shoal_apps
