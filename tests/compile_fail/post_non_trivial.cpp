// Must not compile: a fire-and-forget delegate capturing a std::vector.
#include <shoal/delegate.hpp>

#include <vector>

void f() {
  std::vector<int> v(4);
  shoal::delegate::post(1, [v] { (void)v.size(); });
}
