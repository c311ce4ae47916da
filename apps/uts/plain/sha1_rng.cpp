// SHA-1 through OpenSSL's low-level interface. OpenSSL 3 marks it deprecated
// in favour of EVP, but EVP costs 110 ns per 24-byte digest here and the
// one-shot SHA1() 430 ns (it fetches the algorithm on every call), against
// 70 ns for one compression: the generator is the whole cost of a node.
#define OPENSSL_SUPPRESS_DEPRECATED  // NOLINT(readability-identifier-naming): OpenSSL's own switch
#include "uts/plain/sha1_rng.hpp"

#include <cstring>

#include <openssl/sha.h>

namespace shoal_apps::uts {
namespace {

void put_be32(std::uint8_t* out, std::uint32_t v) {
  out[0] = static_cast<std::uint8_t>(v >> 24);
  out[1] = static_cast<std::uint8_t>(v >> 16);
  out[2] = static_cast<std::uint8_t>(v >> 8);
  out[3] = static_cast<std::uint8_t>(v);
}

// A child's message (20-byte state, 4-byte index) fits one 64-byte block, so
// its padding is constant: 0x80 after the message, the bit length (192) in
// the last 8 bytes. One compression of that block from the initial hash
// values is exactly SHA1 of the 24-byte message.
constexpr std::size_t message_bytes = 24;
constexpr std::size_t block_bytes = 64;

}  // namespace

rng_state root_state(std::uint32_t seed) {
  std::uint8_t message[20] = {};
  put_be32(message + 16, seed);
  rng_state s;
  SHA1(message, sizeof message, s.bytes.data());
  return s;
}

rng_state child_state(const rng_state& parent, std::uint32_t i) {
  std::uint8_t block[block_bytes] = {};
  std::memcpy(block, parent.bytes.data(), parent.bytes.size());
  put_be32(block + 20, i);
  block[message_bytes] = 0x80;
  block[block_bytes - 1] = static_cast<std::uint8_t>(message_bytes * 8);
  SHA_CTX ctx;
  SHA1_Init(&ctx);
  SHA1_Transform(&ctx, block);
  rng_state s;
  put_be32(s.bytes.data() + 0, ctx.h0);
  put_be32(s.bytes.data() + 4, ctx.h1);
  put_be32(s.bytes.data() + 8, ctx.h2);
  put_be32(s.bytes.data() + 12, ctx.h3);
  put_be32(s.bytes.data() + 16, ctx.h4);
  return s;
}

}  // namespace shoal_apps::uts
