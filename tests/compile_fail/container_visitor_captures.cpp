// Must not compile: a visitor that captures a reference (it would run on the
// owner's core, where the reference means nothing).
#include <shoal/containers/map.hpp>

void f(shoal::map<int, int> m) {
  int total = 0;
  m.async_visit(1, [&total](const int&, int& v) { total += v; });
}
