// Fuzz target: the FASTA/FASTQ reader (`shoal kmer --reads FILE`) on any
// bytes. The corpus seeds both formats and the refused cases of
// tests/apps/seq_file_test.cpp. A malformed file must be refused with
// input_error; anything else escaping, or a sanitizer report, is a finding.
#include <cstddef>
#include <cstdint>

#include "common/plain/input_error.hpp"
#include "common/plain/seq_file.hpp"
#include "input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const shoal_fuzz::input_file file(data, size);
  try {
    (void)shoal_apps::read_seq_file("--reads", file.path());
  } catch (const shoal_apps::input_error&) {
    // Refused with a message: the wanted outcome for bad input.
  }
  return 0;
}
