// Fuzz target: the Matrix Market reader (--graph FILE.mtx). The input is
// what follows "%%MatrixMarket " on the banner line (object, format,
// qualifiers, then the size line and the entries), so every run reaches
// the Matrix Market path instead of the edge list's.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/plain/graph.hpp"
#include "common/plain/input_error.hpp"
#include "input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text = "%%MatrixMarket ";
  text.append(reinterpret_cast<const char*>(data), size);
  const shoal_fuzz::input_file file(reinterpret_cast<const std::uint8_t*>(text.data()),
                                    text.size());
  try {
    (void)shoal_apps::read_graph_file(file.path());
  } catch (const shoal_apps::input_error&) {
    // Refused with a message: the wanted outcome for bad input.
  }
  return 0;
}
