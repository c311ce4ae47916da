// Must not compile: a map whose key type has no std::hash (and no Hash given).
#include <shoal/containers/map.hpp>

struct point {
  int x;
  int y;
  bool operator==(const point&) const = default;
};

void f() {
  auto m = shoal::map<point, int>::create();
  m.async_insert(point{1, 2}, 3);
}
