// A std::string key as the keyed containers send it: its hash, computed
// once on the sending core (which needs it for the owner anyway), and a
// view of its characters. On the wire: [u64 hash][u32 length][characters],
// so that the owner neither hashes the key again nor builds a std::string
// to look it up (string_table.hpp). A read key views its record's bytes:
// it is good while the record is.
#pragma once

#include "shoal/containers/detail/short_bytes.hpp"
#include "shoal/serialize.hpp"

#include <cstdint>
#include <cstring>
#include <string_view>

namespace shoal::containers_detail {

struct hashed_key {
  std::uint64_t h;
  std::string_view s;
};

}  // namespace shoal::containers_detail

namespace shoal {

template <>
struct serializer<containers_detail::hashed_key> {
  static std::size_t size(const containers_detail::hashed_key& k) noexcept {
    return 8 + 4 + k.s.size();
  }
  static void write(byte_writer& w, const containers_detail::hashed_key& k) {
    w.put(k.h);
    w.put(detail::length_prefix(k.s.size(), "std::string"));
    containers_detail::copy_bytes(w.position(), k.s.data(), k.s.size());
    w.skip(k.s.size());
  }
  static containers_detail::hashed_key read(byte_reader& r) {
    const char* head = r.skip(12, "a string key's hash and length");  // one check for both
    std::uint64_t h;
    std::uint32_t n;
    std::memcpy(&h, head, 8);
    std::memcpy(&n, head + 8, 4);
    return {h, {r.skip(n, "std::string's characters"), n}};
  }
};

}  // namespace shoal
