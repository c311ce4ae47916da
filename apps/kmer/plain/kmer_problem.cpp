// K-mer counting's problem, generator, reference and check (kmer_problem.hpp).
#include "kmer/plain/kmer_problem.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "common/plain/cli_checks.hpp"
#include "common/plain/hidden_option.hpp"
#include "common/plain/input_error.hpp"
#include "common/plain/memory.hpp"
#include "common/plain/mix.hpp"
#include "common/plain/seq_file.hpp"

namespace shoal_apps::kmer {

namespace {

constexpr std::uint64_t max_k = 31;  // 2 bits a base in a 64-bit word, one bit spare
constexpr std::uint64_t max_genome = std::uint64_t{1} << 36;
constexpr std::uint64_t max_reads = std::uint64_t{1} << 36;
constexpr std::uint64_t max_read_length = std::uint64_t{1} << 20;
// Streams of keyed_random: genome, read start, strand, errors.
constexpr std::uint64_t genome_stream = 0x6b6d6572'67656eULL;
constexpr std::uint64_t start_stream = 0x6b6d6572'706f73ULL;
constexpr std::uint64_t strand_stream = 0x6b6d6572'737472ULL;
constexpr std::uint64_t error_stream = 0x6b6d6572'657272ULL;
constexpr char base_of[4] = {'A', 'C', 'G', 'T'};

}  // namespace

void add_options(CLI::App& cmd, kmer_options& o) {
  cmd.add_option("--k", o.k, "k-mer length, 1 .. 31")
      ->check(unsigned_64_check())
      ->capture_default_str();
  cmd.add_option("--reads", o.reads,
                 "count the reads of this FASTA or FASTQ file (default: generated reads)")
      ->check(file_name_check());
  o.generator_flags.push_back(cmd.add_option("--genome-length", o.genome_length,
                                             "generated reads: bases of the random genome")
                                  ->check(unsigned_64_check())
                                  ->capture_default_str());
  o.generator_flags.push_back(
      cmd.add_option("--read-count", o.read_count, "generated reads: how many")
          ->check(unsigned_64_check())
          ->capture_default_str());
  o.generator_flags.push_back(
      cmd.add_option("--read-length", o.read_length, "generated reads: bases each")
          ->check(unsigned_64_check())
          ->capture_default_str());
  o.generator_flags.push_back(
      cmd.add_option("--error-rate", o.error_rate,
                     "generated reads: probability that a base is replaced by another (0 .. 1)")
          ->capture_default_str());
  o.generator_flags.push_back(cmd.add_option("--seed", o.seed, "generated reads: seed")
                                  ->check(unsigned_64_check())
                                  ->capture_default_str());
  // For the tests: spoils one count, to prove the check fails.
  hide_from_help(cmd, cmd.add_option("--inject-fault", o.fault, "spoil a count (tests)")
                          ->check(CLI::IsMember({"none", "count"})));
}

std::uint64_t entry_hash(kmer_t kmer, std::uint64_t count) noexcept {
  return mix64(mix64(kmer ^ 0x6b6d6572ULL) + count);
}

int kmer_owner(kmer_t kmer, int parts) noexcept {
  return static_cast<int>(mix64(kmer) % static_cast<std::uint64_t>(parts));
}

kmer_tally operator+(kmer_tally a, const kmer_tally& b) noexcept {
  a.occurrences += b.occurrences;
  a.solid += b.solid;
  a.checksum += b.checksum;
  a.singletons += b.singletons;
  a.zero += b.zero;
  a.full += b.full;
  return a;
}

void tally_entry(kmer_tally& t, kmer_t kmer, std::uint64_t count) noexcept {
  if (count >= 2) {
    ++t.solid;
    t.checksum += entry_hash(kmer, count);
  } else if (count == 1) {
    ++t.singletons;
  } else {
    ++t.zero;
  }
}

kmer_problem::kmer_problem(const kmer_options& o) : options_(o), k_(0) {
  if (o.k < 1 || o.k > max_k)
    throw input_error(
        fmt::format("--k {}: out of range; expected 1 .. {} (2 bits a base in a "
                    "64-bit word)",
                    o.k, max_k));
  k_ = static_cast<int>(o.k);
  const auto k = o.k;
  if (!o.reads.empty()) {
    for (const CLI::Option* f : o.generator_flags)
      if (f->count() > 0)
        throw input_error(fmt::format("{} is for generated reads; it cannot go with --reads {}",
                                      f->get_name(), printable(o.reads, 200)));
    file_reads_ = read_seq_file("--reads", o.reads);
    read_count_ = file_reads_.size();
    for (const std::string& r : file_reads_)
      if (r.size() >= k) windows_ += r.size() - k + 1;
    if (windows_ == 0)
      throw input_error(fmt::format("--reads {}: no read has {} bases or more (--k {}): no k-mers",
                                    printable(o.reads, 200), k, k));
    return;
  }
  if (o.genome_length < 1 || o.genome_length > max_genome)
    throw input_error(fmt::format("--genome-length {}: out of range; expected 1 .. {}",
                                  o.genome_length, max_genome));
  if (o.read_count < 1 || o.read_count > max_reads)
    throw input_error(
        fmt::format("--read-count {}: out of range; expected 1 .. {}", o.read_count, max_reads));
  if (o.read_length < k || o.read_length > std::min(max_read_length, o.genome_length))
    throw input_error(fmt::format(
        "--read-length {}: out of range; expected --k ({}) .. min(--genome-length {}, {})",
        o.read_length, k, o.genome_length, max_read_length));
  if (!(o.error_rate >= 0.0 && o.error_rate <= 1.0))
    throw input_error(fmt::format("--error-rate {}: out of range; expected 0 .. 1", o.error_rate));
  read_count_ = o.read_count;
  windows_ = o.read_count * (o.read_length - k + 1);
  // The largest buffers (the sequential impl's vector of every k-mer, the
  // reference's hash map) on one rank, next to every other rank's share.
  const double need = 8.0 * static_cast<double>(windows_) * 4.0;
  check_memory(need, 0.8,
               fmt::format("--read-count {} --read-length {}: the count needs {}", o.read_count,
                           o.read_length, human_bytes(need)),
               "lower --read-count");
}

std::string kmer_problem::make_read(std::uint64_t r) const {
  const kmer_options& o = options_;
  const std::uint64_t length = o.read_length;
  const std::uint64_t start =
      keyed_random(o.seed, start_stream, r) % (o.genome_length - length + 1);
  std::string read(length, 'A');
  // One random word holds 32 bases of the genome: draw it once per 32.
  std::uint64_t word = keyed_random(o.seed, genome_stream, start / 32);
  for (std::uint64_t j = 0; j < length; ++j) {
    const std::uint64_t i = start + j;
    if (i % 32 == 0) word = keyed_random(o.seed, genome_stream, i / 32);
    read[j] = base_of[(word >> (2 * (i % 32))) & 3];
  }
  if (keyed_random(o.seed, strand_stream, r) & 1) {
    std::reverse(read.begin(), read.end());
    for (char& c : read) c = base_of[3 - (c == 'A' ? 0 : c == 'C' ? 1 : c == 'G' ? 2 : 3)];
  }
  if (o.error_rate > 0)
    for (std::uint64_t j = 0; j < length; ++j) {
      const std::uint64_t u = keyed_random(o.seed, error_stream, r * length + j);
      if (static_cast<double>(u >> 11) * 0x1.0p-53 < o.error_rate) {
        const int b = read[j] == 'A' ? 0 : read[j] == 'C' ? 1 : read[j] == 'G' ? 2 : 3;
        read[j] = base_of[(b + 1 + static_cast<int>(u % 3)) % 4];
      }
    }
  return read;
}

void kmer_problem::for_each_read(std::uint64_t first, std::uint64_t last,
                                 const std::function<void(std::string_view)>& fn) const {
  for (std::uint64_t r = first; r < last; ++r) {
    if (!file_reads_.empty())
      fn(file_reads_[static_cast<std::size_t>(r)]);
    else
      fn(make_read(r));
  }
}

std::string kmer_problem::describe() const {
  const kmer_options& o = options_;
  if (!o.reads.empty())
    return fmt::format("{} reads of {}, k = {}", read_count_, printable(o.reads, 60), k_);
  return fmt::format(
      "{} generated reads of {} bases (genome of {} bases, error rate {}, seed {}), k = {}",
      read_count_, o.read_length, o.genome_length, o.error_rate, o.seed, k_);
}

kmer_tally kmer_problem::reference(std::uint64_t& distinct) const {
  std::unordered_map<kmer_t, std::uint64_t> counts;
  counts.reserve(static_cast<std::size_t>(windows_ / 2 + 16));
  kmer_tally t;
  for_each_read(0, read_count_, [&](std::string_view read) {
    for_each_kmer(read, k_, [&](kmer_t x) {
      ++counts[x];
      ++t.occurrences;
    });
  });
  distinct = counts.size();
  for (const auto& [x, n] : counts)
    if (n >= 2) tally_entry(t, x, n);
  return t;
}

std::uint64_t kmer_problem::digest() const noexcept {
  std::uint64_t h = mix64(file_reads_.size());
  for (const std::string& read : file_reads_) {
    h = mix64(h ^ read.size());
    for (std::size_t at = 0; at < read.size(); at += 8) {  // 8 bases a step
      std::uint64_t word = 0;
      std::memcpy(&word, read.data() + at, std::min<std::size_t>(8, read.size() - at));
      h = mix64(h ^ word);
    }
  }
  return h;
}

kmer_tally kmer_problem::count_by_sort() const {
  std::vector<kmer_t> all;
  all.reserve(static_cast<std::size_t>(windows_));
  for_each_read(0, read_count_, [&](std::string_view read) {
    for_each_kmer(read, k_, [&](kmer_t x) { all.push_back(x); });
  });
  std::sort(all.begin(), all.end());
  kmer_tally t;
  t.occurrences = all.size();
  bool spoiled = false;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i + 1;
    while (j < all.size() && all[j] == all[i]) ++j;
    std::uint64_t n = j - i;
    spoil_count(fault(), spoiled, n);
    if (n >= 2) tally_entry(t, all[i], n);
    i = j;
  }
  return t;
}

void fill_report(report& out, const kmer_problem& p, double seconds, const kmer_tally& t,
                 const kmer_tally& ref, std::uint64_t distinct) {
  const double rate = seconds > 0 ? static_cast<double>(t.occurrences) / seconds / 1e6 : 0;
  out.set_problem(p.describe());
  out.set_time(seconds);
  out.set_rate(rate, "Mkmers/s");
  out.set("k", p.k(), false);
  out.set("reads", p.read_count(), false);
  out.set("kmers", t.occurrences);
  out.set("distinct_kmers", distinct);
  out.set("solid_kmers", t.solid);
  out.set("bloom_false_positives", t.singletons);
  out.set("solid_checksum", fmt::format("{:016x}", t.checksum));
  const bool ok = t.occurrences == ref.occurrences && t.solid == ref.solid &&
                  t.checksum == ref.checksum && t.zero == 0 && t.full == 0;
  out.set("exact", ok);
  std::string detail = fmt::format(
      "{} k-mers read (reference {}); {} k-mers seen at least twice (reference {}), their counts "
      "{}the reference's",
      t.occurrences, ref.occurrences, t.solid, ref.solid, t.checksum == ref.checksum ? "" : "NOT ");
  if (t.zero > 0) detail += fmt::format("; {} kept k-mers with no count", t.zero);
  if (t.full > 0) detail += fmt::format("; {} k-mers found the table full", t.full);
  out.set_validated(ok, detail);
}

}  // namespace shoal_apps::kmer
