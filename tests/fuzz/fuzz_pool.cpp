// Fuzz target: chma's pool reader (--pool FILE) and the checks make_problem
// runs on what it read (string lengths and characters, the interleaving
// rule). Small --tasks/--length keep the size checks cheap.
#include <cstddef>
#include <cstdint>

#include "chma/plain/chma_problem.hpp"
#include "common/plain/input_error.hpp"
#include "input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const shoal_fuzz::input_file file(data, size);
  shoal_apps::chma::chma_options o;
  o.pool_file = file.path();
  o.tasks = 4;
  o.length = 4;
  try {
    (void)shoal_apps::chma::make_problem(o, 2);
  } catch (const shoal_apps::input_error&) {
    // Refused with a message: the wanted outcome for bad input.
  }
  return 0;
}
