// Must not compile: a forall body larger than max_loop_body_bytes (32).
#include <shoal/forall.hpp>

void f() {
  struct big {
    char bytes[40];
  } b{};
  shoal::forall(0, 10, [b](std::int64_t) { (void)b.bytes[0]; });
}
