// The distributed benchmarks' own flags (bench/mpi/*.cpp), read after
// shoal::init() has taken shoal's: each word checked, each mistake named.
//
// Contract.
// - read_flags(program, argc, argv, flags, set): every word must be one of
//   `flags` followed by a value (a Google Benchmark flag, --benchmark_*,
//   passed by `make bench`, is skipped); set(value) is called for each in
//   order. An unknown word or a flag without its value ends the job.
// - value::whole(lo, hi): the value, all of it, as a whole number in
//   [lo, hi]; anything else (empty, a sign, trailing letters, out of range)
//   ends the job, naming program, flag and value. wholes(lo, hi): a
//   comma-separated list of them.
// - Ending the job: rank 0 prints "<program>: error: <what>" and the usage
//   line (for a word it does not know), then every rank finalizes and exits with status 2. Every
//   rank reads the same words, so all of them end the same way (collective).
#pragma once

#include <shoal/shoal.hpp>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace bench_args {

[[noreturn]] inline void fail(const char* program, const std::string& what,
                              std::initializer_list<const char*> flags) {
  if (shoal::myrank() == 0) {
    std::fprintf(stderr, "%s: error: %s\n", program, what.c_str());
    if (flags.size() > 0) {
      std::string usage;
      for (const char* f : flags) usage += std::string(" [") + f + " N]";
      std::fprintf(stderr, "usage: [mpirun -np R] %s [shoal flags]%s\n", program, usage.c_str());
    }
  }
  shoal::finalize();
  std::exit(2);
}

/// One flag's value as read_flags() hands it on; its checks name the
/// program and the flag.
struct value {
  const char* program;
  std::string_view flag;
  std::string text;

  /// `text`, all of it, as a whole number in [lo, hi], else the job ends.
  std::uint64_t whole(std::uint64_t lo, std::uint64_t hi) const { return whole_of(text, lo, hi); }
  /// A comma-separated list of such numbers.
  std::vector<std::uint64_t> wholes(std::uint64_t lo, std::uint64_t hi) const {
    std::vector<std::uint64_t> out;
    for (std::size_t start = 0;;) {
      const std::size_t comma = text.find(',', start);
      out.push_back(whole_of(text.substr(start, comma - start), lo, hi));
      if (comma == std::string::npos) return out;
      start = comma + 1;
    }
  }

 private:
  std::uint64_t whole_of(const std::string& word, std::uint64_t lo, std::uint64_t hi) const {
    char* end = nullptr;
    errno = 0;
    const bool digits = !word.empty() && word[0] >= '0' && word[0] <= '9';
    const unsigned long long v = digits ? std::strtoull(word.c_str(), &end, 10) : 0;
    if (!digits || *end != '\0' || errno != 0 || v < lo || v > hi)
      fail(program,
           std::string(flag) + " '" + word + "': expected a whole number in [" +
               std::to_string(lo) + ", " + std::to_string(hi) + "]",
           {});
    return v;
  }
};

template <class F>
void read_flags(const char* program, int argc, char** argv,
                std::initializer_list<const char*> flags, const F& set) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word.rfind("--benchmark_", 0) == 0) continue;
    bool known = false;
    for (const char* f : flags) known = known || word == f;
    if (!known) fail(program, "unknown argument '" + std::string(word) + "'", flags);
    if (i + 1 >= argc) fail(program, std::string(word) + " needs a value", flags);
    set(value{program, word, argv[++i]});
  }
}

}  // namespace bench_args
