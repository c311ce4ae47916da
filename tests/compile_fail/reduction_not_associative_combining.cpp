// The dense combining mode (combine_until_flush over a block distribution,
// local_combine) refuses a non-associative reduction at compile time too.
#include "shoal/target_channel.hpp"

struct minus {
  static constexpr bool associative = false;
  int operator()(int a, int b) const { return a - b; }
};

void open() {
  shoal::block_distribution d(8, 2);
  auto ch = shoal::make_target_channel<int>(d, [](std::uint64_t, const int&) {},
                                            {.combine_until_flush = true},
                                            shoal::reduction::with(minus{}));
  ch.local_combine([](const auto& to) { to.send(1, 1); });
  ch.close();
}
