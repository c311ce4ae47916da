// Must not compile: a message closure capturing a std::string by value.
#include <shoal/message.hpp>

#include <string>

void f() {
  std::string s = "not copyable as bytes";
  shoal::send(1, [s] { (void)s.size(); });
}
