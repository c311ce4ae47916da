// Must not compile: a BCL hash_map keyed by std::string (keys are stored
// inline and compared by their bytes; bcl/hash_map.hpp).
#include <shoal/bcl/hash_map.hpp>

#include <string>

void f() {
  auto m = shoal::bcl::hash_map<std::string, int>::make(8);
  m.insert("key", 1);
}
