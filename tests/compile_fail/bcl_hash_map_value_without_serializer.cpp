// Must not compile: a BCL hash_map whose value type is neither trivially
// copyable nor has a shoal::serializer (bcl/object.hpp).
#include <shoal/bcl/hash_map.hpp>

#include <memory>

void f() {
  auto m = shoal::bcl::hash_map<int, std::unique_ptr<int>>::make(8);
  m.find(1);
}
