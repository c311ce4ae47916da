// Must not compile: a channel handler whose argument type does not match.
#include <shoal/channel.hpp>

#include <string>

void f() {
  auto ch = shoal::make_channel<int>([](const std::string&) {});
  (void)ch;
}
