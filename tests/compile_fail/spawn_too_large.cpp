// Must not compile: a task closure of more than 64 bytes.
#include <shoal/task.hpp>

void f() {
  struct big {
    char bytes[100];
  } b{};
  shoal::spawn([b] { (void)b.bytes[0]; });
}
