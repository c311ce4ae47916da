// completion_misuse: misuse of job-wide completion across processes, each
// ending the job with a message that names it (run by tests/CMakeLists.txt
// through run_expect.cmake, which checks the exit status and the message).
//
//   mpirun -np 2 completion_misuse --cores 2 --make-in-handler
//       a global_completion_event made by a handler on rank 1 (its id needs
//       a blocking round trip to rank 0): fatal, named.
//   mpirun -np 3 completion_misuse --cores 2 --never-complete --watchdog-s 2
//       a unit enrolled and never completed: wait() runs waves forever, which
//       are not progress, so the watchdog ends the job and names the wait.
#include <shoal/shoal.hpp>

#include <cstdio>
#include <cstring>

namespace {

bool has_flag(int argc, char** argv, const char* name) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const bool in_handler = has_flag(argc, argv, "--make-in-handler");
  const bool never = has_flag(argc, argv, "--never-complete");
  shoal::init(argc, argv);
  shoal::run([in_handler, never] {
    if (in_handler) {
      shoal::send(shoal::cores() - 1, [] { shoal::global_completion_event e; });
    }
    if (never) {
      shoal::global_completion_event e;
      e.enroll();
      e.wait();
    }
  });
  shoal::finalize();
  std::puts("completion_misuse: nothing went wrong");
  return 0;
}
