// A reduction that declares itself non-associative is refused at compile time.
#include "shoal/target_channel.hpp"

struct minus {
  static constexpr bool associative = false;
  int operator()(int a, int b) const { return a - b; }
};

void open() {
  shoal::cyclic_distribution d(2);
  auto ch = shoal::make_target_channel<int>(
      d, [](std::uint64_t, const int&) {}, {}, shoal::reduction::with(minus{}));
  ch.close();
}
