// Fuzz target: the graph-file reader (--graph FILE) on any bytes. Inputs
// that start with the Matrix Market banner take that reader's path; the
// corpus seeds edge lists. A malformed file must be refused with
// input_error; anything else escaping, or a sanitizer report, is a finding.
#include <cstddef>
#include <cstdint>

#include "common/plain/graph.hpp"
#include "common/plain/input_error.hpp"
#include "input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const shoal_fuzz::input_file file(data, size);
  try {
    (void)shoal_apps::read_graph_file(file.path());
  } catch (const shoal_apps::input_error&) {
    // Refused with a message: the wanted outcome for bad input.
  }
  return 0;
}
