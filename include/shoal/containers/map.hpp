// shoal::map<K, V>: a distributed hash map over every core of the job
// (ygm's map, Grappa's GlobalHashMap), owner computes.
//
//   auto m = shoal::map<std::string, std::uint64_t>::create();   // one task
//   shoal::on_all_cores([m] {
//     m.async_insert("a", 1);
//     m.async_reduce("a", 1, [](std::uint64_t x, std::uint64_t y) { return x + y; });
//     m.async_visit("a", [](const std::string& k, std::uint64_t& v, int add) { v += add; }, 5);
//     shoal::barrier();                 // every operation above has been applied
//     m.for_all([](const std::string& k, std::uint64_t& v) { ... });  // this core's part
//     const std::size_t n = m.size();   // collective
//   });
//   m.destroy();                        // one task, once nothing is in flight
//
// Partition. Key k lives on core owner(k) = floor(mix(Hash{}(k)) * cores() /
// 2^64) (the mixed hash's top bits, by a multiply-high). Each core holds its
// keys in an open-addressing table when K and V are bytes-copyable
// (detail/flat_table.hpp), else in a std::unordered_map. std::string keys
// with the default hash and equality are the exception on three counts:
// they are hashed by shoal's string hash (detail/string_hash.hpp, inline;
// not std::hash's value, and already mixed: owner(k) = floor(h(k) *
// cores() / 2^64)), once, on the calling core; the hash travels with the
// key; and each core holds them in a string table (detail/string_table.hpp:
// open addressing, the hash stored, keys of up to 20 bytes inside the slot),
// so the owner neither hashes a key again nor allocates for one it has.
// Every operation runs on the owner: it travels there as one variable-length
// record ([op][key][operands], serialize.hpp) on the map's own channel,
// batched with the other messages to that core (object_channel.hpp); the
// owner applies a whole batch under one lookup of its part. With an
// open-addressing table for bytes-copyable K and V whose serializers write
// sizeof bytes (the built-in ones), insert, insert_if_missing and reduce
// travel packed (containers/detail/ops.hpp): the sender writes each such
// operation into the record of that operation it left open at the end of
// the batch for the owner, as [key][value] (12 bytes of header per
// record, not per operation), or as [key] alone while the run's operations
// all bring the same value (written once per record: a count's +1); the
// owner applies a record's operations in one pass, the table grown once,
// each key's home slot prefetched 16 operations ahead (as counting_set's
// bare keys). Only an operation that would have followed the open record
// joins it (nothing else sent to that core on the channel since, batch not
// yet sent), so the order below is kept. An operation
// on a key the calling core owns is applied at once, with no message (or,
// while that core's part is busy with a for_all or another operation,
// queued behind it), while the core's part holds under 2^15 elements;
// from then until clear(), every operation of the core on its own keys
// travels through its own aggregation buffer like a remote one, so that
// the batch loop prefetches them too (flat and string tables; a part
// larger than the cache waited on memory once per direct operation).
//
// Operations (any task or handler, any core; each returns at once, but a
// task may be suspended: under back-pressure like channel::send, and once
// every 64 remote operations, when it yields so that its core handles what
// the others send it):
//   async_insert(k, v)            insert, or assign if k is there;
//   async_insert_if_missing(k, v) insert only if k is not there;
//   async_erase(k)                remove k if present;
//   async_reduce(k, v, op)        v if k is absent, else op(old, v);
//   async_visit(k, f, args...)    f(const K&, V&, args...) on the owner, with a
//                                 default V inserted first if k is absent;
//   async_visit_if_exists(k, f, args...)  the same, only if k is present;
//   async_contains(k, f, args...) f(const K&, bool present, args...) on the
//                                 owner, k neither inserted nor changed (a
//                                 lookup whose answer f sends on).
// op and f must capture nothing (a compile-time error otherwise: they run
// on the owner's core, where a captured reference means nothing); args must
// be serializable and not pointers. A visitor runs in a handler (or in the
// calling task, for a key of its own core while its part is small, above):
// it must not wait for anything,
// and may send further messages (to this or any container, channel or
// closure), which are not ordered with anything.
// Order: operations from one core on one key are applied in the order they
// were made (one owner, one stream; operations of a core on its own keys
// are applied or queued in call order); between cores there is no order.
//
// Completion: an operation is applied once shoal::barrier() (SPMD, every
// core) or shoal::drain_messages() (one task, global view) returns after
// it, including the operations that visitors sent in turn. size(), clear(),
// gather() and gather_all() begin with shoal::barrier() themselves.
//
// Collective calls (one task per core, SPMD, in the same order everywhere):
//   size()        every operation applied, then the total element count;
//   clear()       every operation applied, then every part emptied; returns
//                 once every core has emptied its part (the map is usable);
//   gather(root)  every element, sorted by key when K has <, on core root
//                 (others get an empty vector); gather_all(): on every core.
// Each is a snapshot: it holds every operation made before the call on any
// core and none made after it (a barrier, then every part copied before
// any core leaves: one more arrival barrier for gather(root)).
// Local calls (the calling core's part only): for_all(f) runs
// f(const K&, V&) over this core's elements (f may suspend and may capture
// anything: operations arriving meanwhile wait until it ends); local_size().
// The key and value references a visitor or for_all's f receives are good
// for that call only (std::string keys: the key is a copy of the table's
// characters, reused for the next element).
//
// Creation and destruction: create() from one task (it opens the map's
// channel on every process, blocking like make_channel; storage is made on
// each core at first use). destroy() from one task, once no operation is in
// flight or to come: drains, closes the channel, frees every part. The
// handle is 16 bytes and trivially copyable: capture it in closures.
//
// Errors (each ends the job naming "shoal::map #<id>"): a handle used
// after destroy() or in a later job, or default-constructed; a record
// larger than an aggregation buffer; an exhausted heap while applying an
// operation (the core, the part's size); gather to a core that does not
// exist. A key type without a hash, a type without a serializer and a
// visitor with captures are compile-time errors with a message.
//
// Costs: per remote operation 4 + 4 + the serialized key and operands on
// the wire (std::string keys: 8 + 4 + the characters, the hash included),
// but packed operations (above) sizeof(K) + sizeof(V), or sizeof(K) in a
// run of one value, plus 12 (and the value) per record; one hash lookup on
// the owner. map<std::string, std::uint64_t>'s async_reduce of 16-byte
// keys (bench-containers, 1 x 2, callgrind): ~277 instructions per
// operation end to end, ~100 of them the benchmark's own key making (was
// ~640 with std::unordered_map and std::hash: bench/results/containers.md).
// map<uint64_t, uint64_t>'s async_reduce by +1 (map_u64_reduce, 1 x 1,
// callgrind): ~171 instructions per operation end to end, ~40 of them the
// benchmark's (counting_set_u64: ~156; ~184 with a 24-byte record per
// operation, ~230 applying each record by itself), 8 bytes per operation on
// the wire. size(): a barrier and an allreduce; gather: a barrier and a
// gatherv of every element's bytes.
#pragma once

#include "shoal/containers/detail/keyed.hpp"

#include <functional>

namespace shoal {

namespace containers_detail {
struct map_tag {
  static constexpr const char* name = "shoal::map";
  static constexpr const char* create_name = "shoal::map::create";
  static constexpr const char* destroy_name = "shoal::map::destroy";
  static constexpr const char* insert_name = "shoal::map::async_insert";
  static constexpr const char* erase_name = "shoal::map::async_erase";
  static constexpr const char* reduce_name = "shoal::map::async_reduce";
  static constexpr const char* visit_name = "shoal::map::async_visit";
};
}  // namespace containers_detail

template <class K, class V, class Hash = std::hash<K>, class Eq = std::equal_to<K>>
using map = containers_detail::keyed<K, V, Hash, Eq, containers_detail::map_tag>;

}  // namespace shoal
