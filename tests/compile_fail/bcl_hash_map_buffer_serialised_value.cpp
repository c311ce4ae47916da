// Must not compile: a hash_map_buffer of std::string values (its entries
// travel by value through a fast_queue; bcl/hash_map_buffer.hpp).
#include <shoal/bcl/hash_map_buffer.hpp>

#include <string>

void f(shoal::bcl::hash_map<int, std::string> m) {
  shoal::bcl::hash_map_buffer<int, std::string> b(m, 64, 8);
  b.insert(1, "one");
}
