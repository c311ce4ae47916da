// Smallest program against the installed shoal package (see run_consumer.cmake).
#include <shoal/shoal.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  shoal::init(argc, argv);
  shoal::run([] { std::printf("consumer ok on %d cores\n", static_cast<int>(shoal::cores())); });
  shoal::finalize();
  return 0;
}
