// Serialization of values that travel in messages: the customisation point
// shoal::serializer<T>, and the byte writer and reader it works with.
//
// Channels (channel.hpp) and closures carry trivially copyable values as
// bytes, at no cost. Values with copy logic (std::string, std::vector, user
// types holding either) travel on an object_channel (object_channel.hpp) and
// in the containers (containers/), which write each value into the message
// with serializer<T>::write and rebuild it on the receiver with read. Only
// code that uses them pays for them: the typed channel's path is unchanged.
//
// A specialisation provides three static functions:
//
//   template <> struct shoal::serializer<point3> {
//     static std::size_t size(const point3& p);            // bytes write() will add
//     static void write(shoal::byte_writer& w, const point3& p);
//     static point3 read(shoal::byte_reader& r);          // the inverse of write
//   };
//
// write must add exactly size(v) bytes (checked when a record is sent);
// read must consume exactly what write added (checked when it is parsed).
// Built in:
//   - every trivially copyable T: its bytes (sizeof(T)); pointers among them
//     travel too, but mean nothing on another process;
//   - std::string: a 32-bit length, then the characters;
//   - std::vector<T> of serializable T: a 32-bit count, then the elements
//     (one copy of count * sizeof(T) bytes when T is trivially copyable);
//   - std::pair<A, B> and std::tuple<Ts...> of serializable types: the
//     members in order.
// A full specialisation for one type beats the built-ins.
//
// Wire format: host byte order and layout (every process of a job runs the
// same binary on the same kind of machine); no alignment (read copies out
// with memcpy). Errors: a reader that would read past its record ends the
// job with a message naming the type being read and the record's size.
#pragma once

#include "shoal/detail/check.hpp"

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace shoal {

/// Appends bytes at a position of a message (no bounds: the sender sized the
/// record with serializer<T>::size first).
class byte_writer {
 public:
  explicit byte_writer(char* at) noexcept : at_(at) {}
  void put(const void* data, std::size_t n) noexcept {
    if (n != 0) std::memcpy(at_, data, n);
    at_ += n;
  }
  template <class T>
  requires std::is_trivially_copyable_v<T>
  void put(const T& v) noexcept { put(&v, sizeof(T)); }
  char* position() const noexcept { return at_; }
  /// Moves past n bytes the caller wrote at position() itself.
  void skip(std::size_t n) noexcept { at_ += n; }

 private:
  char* at_;
};

/// Reads bytes of one record, checking each read against the record's end.
class byte_reader {
 public:
  byte_reader(const char* at, const char* end) noexcept : at_(at), end_(end) {}
  /// Copies n bytes out; reading past the record's end is a fatal error
  /// naming `what` (the type being read).
  void get(void* out, std::size_t n, const char* what) {
    if (static_cast<std::size_t>(end_ - at_) < n) fatal_short(n, what);
    if (n != 0) std::memcpy(out, at_, n);
    at_ += n;
  }
  /// Points at n bytes of the record and skips them (checked like get()).
  const char* skip(std::size_t n, const char* what) {
    if (static_cast<std::size_t>(end_ - at_) < n) fatal_short(n, what);
    const char* p = at_;
    at_ += n;
    return p;
  }
  template <class T>
  requires std::is_trivially_copyable_v<T> T get(const char* what = "a trivially copyable value") {
    T v;
    get(&v, sizeof(T), what);
    return v;
  }
  std::size_t left() const noexcept { return static_cast<std::size_t>(end_ - at_); }
  const char* position() const noexcept { return at_; }

 private:
  [[noreturn, gnu::cold, gnu::noinline]] void fatal_short(std::size_t n, const char* what) const {
    detail::fatal_user(fmt::format(
        "shoal::serializer: reading {} needs {} more bytes, but its record has only {} left "
        "(write() and read() of a serializer disagree, or size() is wrong)",
        what, n, left()));
  }
  const char* at_;
  const char* end_;
};

/// The customisation point: specialise for your type (see the header
/// comment). The primary template is left undefined on purpose.
template <class T>
struct serializer;

/// A type with a usable serializer<T>.
template <class T>
concept serializable = requires(const T& v, byte_writer& w, byte_reader& r) {
  { serializer<T>::size(v) } -> std::convertible_to<std::size_t>;
  serializer<T>::write(w, v);
  { serializer<T>::read(r) } -> std::same_as<T>;
};

/// Bytes of v on the wire.
template <serializable T>
std::size_t serialized_size(const T& v) {
  return serializer<T>::size(v);
}

// ---- Built-ins.

template <class T>
requires std::is_trivially_copyable_v<T>
struct serializer<T> {
  static constexpr std::size_t size(const T&) noexcept { return sizeof(T); }
  static void write(byte_writer& w, const T& v) noexcept { w.put(&v, sizeof(T)); }
  static T read(byte_reader& r) {
    T v;
    r.get(&v, sizeof(T), "a trivially copyable value");
    return v;
  }
};

namespace detail {
/// A length that must fit the 32-bit prefix.
inline std::uint32_t length_prefix(std::size_t n, const char* what) {
  if (n > std::numeric_limits<std::uint32_t>::max())
    fatal_user(
        fmt::format("shoal::serializer<{}>: {} elements do not fit a 32-bit length", what, n));
  return static_cast<std::uint32_t>(n);
}
}  // namespace detail

template <>
struct serializer<std::string> {
  static std::size_t size(const std::string& s) noexcept { return 4 + s.size(); }
  static void write(byte_writer& w, const std::string& s) {
    w.put(detail::length_prefix(s.size(), "std::string"));
    w.put(s.data(), s.size());
  }
  static std::string read(byte_reader& r) {
    const auto n = r.get<std::uint32_t>("std::string's length");
    const char* p = r.skip(n, "std::string's characters");
    return std::string(p, n);
  }
};

template <serializable T, class A>
struct serializer<std::vector<T, A>> {
  static std::size_t size(const std::vector<T, A>& v) {
    if constexpr (std::is_trivially_copyable_v<T>) {
      return 4 + v.size() * sizeof(T);
    } else {
      std::size_t n = 4;
      for (const T& x : v) n += serializer<T>::size(x);
      return n;
    }
  }
  static void write(byte_writer& w, const std::vector<T, A>& v) {
    w.put(detail::length_prefix(v.size(), "std::vector"));
    if constexpr (std::is_trivially_copyable_v<T>) {
      w.put(v.data(), v.size() * sizeof(T));
    } else {
      for (const T& x : v) serializer<T>::write(w, x);
    }
  }
  static std::vector<T, A> read(byte_reader& r) {
    const auto n = r.get<std::uint32_t>("std::vector's count");
    std::vector<T, A> v;
    if constexpr (std::is_trivially_copyable_v<T>) {
      // Check the length before allocating: a bad count must not ask for gigabytes.
      const char* p = r.skip(std::size_t{n} * sizeof(T), "std::vector's elements");
      v.resize(n);
      if (n != 0) std::memcpy(v.data(), p, std::size_t{n} * sizeof(T));
    } else {
      v.reserve(std::min<std::size_t>(n, r.left()));
      for (std::uint32_t i = 0; i < n; ++i) v.push_back(serializer<T>::read(r));
    }
    return v;
  }
};

template <serializable A, serializable B>
requires(!std::is_trivially_copyable_v<std::pair<A, B>>) struct serializer<std::pair<A, B>> {
  static std::size_t size(const std::pair<A, B>& p) {
    return serializer<A>::size(p.first) + serializer<B>::size(p.second);
  }
  static void write(byte_writer& w, const std::pair<A, B>& p) {
    serializer<A>::write(w, p.first);
    serializer<B>::write(w, p.second);
  }
  static std::pair<A, B> read(byte_reader& r) {
    A a = serializer<A>::read(r);  // members in order: sequenced, unlike a braced call's arguments
    B b = serializer<B>::read(r);
    return {std::move(a), std::move(b)};
  }
};

template <serializable... Ts>
requires(!std::is_trivially_copyable_v<std::tuple<Ts...>>) struct serializer<std::tuple<Ts...>> {
  static std::size_t size(const std::tuple<Ts...>& t) {
    return std::apply(
        [](const Ts&... x) { return (std::size_t{0} + ... + serializer<Ts>::size(x)); }, t);
  }
  static void write(byte_writer& w, const std::tuple<Ts...>& t) {
    std::apply([&w](const Ts&... x) { (serializer<Ts>::write(w, x), ...); }, t);
  }
  static std::tuple<Ts...> read(byte_reader& r) {
    // A braced list evaluates left to right, so the members are read in order.
    return std::tuple<Ts...>{serializer<Ts>::read(r)...};
  }
};

}  // namespace shoal
