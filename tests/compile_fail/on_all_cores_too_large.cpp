// Must not compile: an on_all_cores closure larger than max_on_all_cores_bytes (48).
#include <shoal/parallel.hpp>

void f() {
  struct big {
    char bytes[56];
  } b{};
  shoal::on_all_cores([b] { (void)b.bytes[0]; });
}
