// Object channels (include/shoal/object_channel.hpp) end to end, shared by
// tests/test_serialize.cpp (one process, 1 x 2 cores) and
// tests/mpi/dist_serialize.cpp (1 x 2, 2 x 2, 3 x 2 processes x cores).
//
// Every core sends `per_pair` records to every core (itself included) on
// one object channel of a tuple holding a string and a vector, and on one
// of a user type with its own serializer. String lengths cycle through 0, 1,
// 1000 and 10000 bytes (the last most of a 16 KiB aggregation buffer, so
// records straddle batches), vector lengths through 0..4. The receiver
// rebuilds each value's expected contents from (source, seq) and checks it,
// and checks that each source's records arrive in send order.
#pragma once

#include "shoal/object_channel.hpp"
#include "shoal/shoal.hpp"

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

namespace object_scenarios {

/// A user type with a serializer of its own (not trivially copyable).
struct labelled_point {
  std::string label;
  double x = 0;
  double y = 0;
  std::vector<std::int32_t> tags;
  bool operator==(const labelled_point&) const = default;
};

}  // namespace object_scenarios

template <>
struct shoal::serializer<object_scenarios::labelled_point> {
  using T = object_scenarios::labelled_point;
  static std::size_t size(const T& p) {
    return serializer<std::string>::size(p.label) + 2 * sizeof(double) +
           serializer<std::vector<std::int32_t>>::size(p.tags);
  }
  static void write(byte_writer& w, const T& p) {
    serializer<std::string>::write(w, p.label);
    w.put(p.x);
    w.put(p.y);
    serializer<std::vector<std::int32_t>>::write(w, p.tags);
  }
  static T read(byte_reader& r) {
    T p;
    p.label = serializer<std::string>::read(r);
    p.x = r.get<double>("labelled_point::x");
    p.y = r.get<double>("labelled_point::y");
    p.tags = serializer<std::vector<std::int32_t>>::read(r);
    return p;
  }
};

namespace object_scenarios {

using record = std::tuple<std::int32_t, std::int32_t, std::string, std::vector<std::uint64_t>>;

inline std::size_t string_length(int seq) {
  constexpr std::size_t lengths[] = {0, 1, 1000, 10000};
  return lengths[seq % 4];
}

inline std::string expected_text(int source, int seq) {
  std::string s(string_length(seq), ' ');
  for (std::size_t i = 0; i < s.size(); ++i)
    s[i] = static_cast<char>('a' + (static_cast<std::size_t>(source * 7 + seq) + i) % 26);
  return s;
}

inline std::vector<std::uint64_t> expected_numbers(int source, int seq) {
  std::vector<std::uint64_t> v(static_cast<std::size_t>(seq % 5));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] =
        static_cast<std::uint64_t>(source) * 1000003U + static_cast<std::uint64_t>(seq) * 31U + i;
  return v;
}

inline labelled_point expected_point(int source, int seq) {
  labelled_point p;
  p.label = fmt::format("p{}/{}", source, seq);
  p.x = source + 0.5;
  p.y = seq * 0.25;
  for (int i = 0; i < seq % 3; ++i) p.tags.push_back(source * 100 + i);
  return p;
}

/// What a core received: good and bad records, and each source's last seq
/// (records of one source must arrive in send order).
struct tally {
  std::int64_t good = 0;
  std::int64_t bad = 0;
  std::int64_t out_of_order = 0;
  std::vector<std::int32_t> last_seq;
  std::vector<std::int32_t> last_point_seq;
};
inline shoal::per_core<tally> g_tally;

inline void note_order(std::vector<std::int32_t>& last, int source, int seq, tally& t) {
  if (last.empty()) last.assign(static_cast<std::size_t>(shoal::cores()), -1);
  if (seq <= last[static_cast<std::size_t>(source)]) ++t.out_of_order;
  last[static_cast<std::size_t>(source)] = seq;
}

struct on_record {
  void operator()(const record& r) const {
    tally& t = g_tally.local();
    const auto& [source, seq, text, numbers] = r;
    const bool ok = text == expected_text(source, seq) && numbers == expected_numbers(source, seq);
    ++(ok ? t.good : t.bad);
    note_order(t.last_seq, source, seq, t);
  }
};

struct on_point {
  void operator()(const labelled_point& p) const {
    tally& t = g_tally.local();
    // The label names the source and seq: "p<source>/<seq>".
    const auto slash = p.label.find('/');
    const int source = std::stoi(p.label.substr(1, slash - 1));
    const int seq = std::stoi(p.label.substr(slash + 1));
    ++(p == expected_point(source, seq) ? t.good : t.bad);
    note_order(t.last_point_seq, source, seq, t);
  }
};

struct totals {
  std::int64_t good = 0;
  std::int64_t bad = 0;
  std::int64_t out_of_order = 0;
};
inline totals g_totals;  // set by core 0

/// Root task: the exchange, ended by shoal::barrier() on every core.
inline void exchange(int per_pair) {
  auto records = shoal::make_object_channel<record>(on_record{});
  auto points = shoal::make_object_channel<labelled_point>(on_point{});
  shoal::on_all_cores([records, points, per_pair] {
    g_tally.local() = tally{};
    shoal::barrier();
    const int me = shoal::mycore();
    for (int seq = 0; seq < per_pair; ++seq) {
      for (int c = 0; c < shoal::cores(); ++c) {
        records.send(c, record{me, seq, expected_text(me, seq), expected_numbers(me, seq)});
        points.send(c, expected_point(me, seq));
      }
    }
    shoal::barrier();
    const tally& t = g_tally.local();
    const totals all = shoal::allreduce(
        totals{t.good, t.bad, t.out_of_order}, [](const totals& a, const totals& b) {
          return totals{a.good + b.good, a.bad + b.bad, a.out_of_order + b.out_of_order};
        });
    if (me == 0) g_totals = all;
  });
  records.close();
  points.close();
}

}  // namespace object_scenarios
