// shoal: the one configuration object.
//
// Defaults, `SHOAL_*` environment variables and command-line flags are parsed
// here and nowhere else. Precedence: flag > environment > default. Every value
// is validated (range and cross-field consistency) before the runtime starts;
// a bad value is reported with the flag's name and its accepted range.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace shoal {

/// Thrown by `config` parsing and validation; the message names the flag
/// (e.g. "--cores"), the value received and the accepted range.
class config_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// How processes of a job reach each other (--transport).
enum class transport_kind : int {
  automatic = 0,  // mpi when launched by mpirun/srun with more than one rank, else local
  local = 1,      // one process, no MPI
  mpi = 2,        // MPI (OpenMPI or MPICH), even for one rank
};

/// How one-sided operations (one_sided.hpp) reach their target (--one-sided).
enum class one_sided_kind : int {
  automatic = 0,  // direct in a job of one process, am in a job of several
  direct = 1,     // plain loads, stores and atomic_ref; a job of one process only
  shm = 2,        // the global heap in node-shared memory, same direct path; one node only
  rma = 3,        // MPI-3 RMA passive target on every access (needs the mpi transport)
  am = 4,         // delegates (active messages) on every access
  node = 5,       // shm when every process is on one node and /dev/shm holds the heaps, else am
};

/// How a core with nothing to run waits for work (--idle).
enum class idle_kind : int {
  automatic = 0,  // sleep when this node is oversubscribed (see resolve_idle), else mixed
  spin = 1,       // poll without pause: lowest latency, one CPU per core all the time
  yield = 2,      // poll, offering the CPU with sched_yield between polls; never sleep
  sleep = 3,      // poll, then sleep 50 us doubling to 1 ms between polls
};

/// How messages between processes of one node travel (--node-messages).
enum class node_messages_kind : int {
  shm = 0,  // through shared memory, read in place by the receiver (MPI when it cannot be mapped)
  mpi = 1,  // through MPI, as between nodes
};

/// Whether shoal may widen a launcher's CPU binding (--bind;
/// src/runtime/cpu_binding.hpp).
enum class bind_kind : int {
  automatic = 0,  // widen a mask with fewer CPUs than cores when the node has room
  keep = 1,       // never change the affinity
};

/// Runtime configuration of one process. All cores of the process share it.
struct config {
  /// --cores [1, 4096]: OS threads; 0 (auto) until resolve() sets the
  /// hardware thread count.
  int cores = 0;
  /// --stack-kb [16, 1048576], a multiple of 4: worker stack size in KiB.
  int stack_kb = 64;
  /// --max-workers-per-core [1, 1000000]: most workers (stacks) alive on one core.
  int max_workers_per_core = 8192;
  /// --aggregation-bytes [256, 67108864]: size of one aggregation buffer.
  std::int64_t aggregation_bytes = 16384;
  /// --flush-us [0, 10000000]: the oldest staged message is sent after this age.
  std::int64_t flush_us = 50;
  /// --buffers-per-core [4, 1000000]: aggregation buffer pool per core.
  int buffers_per_core = 64;
  /// --network-bytes [4096, 67108864]: size of one network buffer between
  /// processes (aggregation buffers of all cores for one destination process
  /// are combined into it); at least --aggregation-bytes rounded up to 64.
  std::int64_t network_bytes = 65536;
  /// --heap-mb [1, 16777216]: global heap per process (lazily committed).
  std::int64_t heap_mb = 1024;
  /// --block-bytes [8, 1048576], a power of two: block size of linear global arrays.
  std::int64_t block_bytes = 64;
  /// --watchdog-s, in [0, 86400]: when positive, a job whose cores are all
  /// idle without progress (no task run, no switch, no message handled) for
  /// this many seconds is ended with a report of what every core waits on
  /// (e.g. "future #3", "barrier", "delegate::call to core #2"). A core that
  /// computes is never idle, so a long computation never trips it. 0 = off.
  int watchdog_s = 60;
  /// --join-s, in [1, 86400]: how long a rank of a job of several processes
  /// waits for the others at start-up (MPI_Init and the start-up checks) and
  /// at exit (every rank leaves together) before it ends the job, naming the
  /// ranks that did not come.
  int join_s = 30;
  /// --stats: print runtime counters at finalize.
  bool stats = false;
  /// --verbose: print the effective configuration at init.
  bool verbose = false;
  /// --progress-thread: in a job of several processes, one extra OS thread
  /// drives MPI continuously (for machines with a core to spare); by default
  /// the cores take turns driving it when they poll.
  bool progress_thread = false;
  /// --transport auto|local|mpi: see transport_kind.
  transport_kind transport = transport_kind::automatic;
  /// --one-sided auto|direct|shm|rma|am: see one_sided_kind.
  one_sided_kind one_sided = one_sided_kind::automatic;
  /// --idle auto|spin|yield|sleep: see idle_kind. auto (the default) spins
  /// 50 us, yields until 20 ms and then sleeps (200 us at most at a time)
  /// when every core has a CPU of its own, and sleeps at once (up to 1 ms)
  /// when the node is oversubscribed.
  idle_kind idle = idle_kind::automatic;
  /// --node-messages shm|mpi: see node_messages_kind.
  node_messages_kind node_messages = node_messages_kind::shm;
  /// --bind auto|keep: see bind_kind. auto gives each rank a CPU per core
  /// when its launcher bound it to fewer and the node has enough.
  bind_kind bind = bind_kind::automatic;

  /// Parses `SHOAL_*` variables from `envp` (a null-terminated array of
  /// "NAME=value" strings, like `environ`; may be null), then the flags in
  /// argv[1..argc). Recognised shoal flags (both `--flag value` and
  /// `--flag=value` forms; booleans take no value, or `=0|1|true|false`) are
  /// removed from argv and argc is updated; everything else is left in order
  /// for the application. `--help-shoal` is not handled here.
  /// Throws config_error on a malformed or out-of-range value; the result is
  /// resolved and validated.
  ///
  /// Details: only exact names are shoal flags (`--cores3` and `--stats-file`
  /// belong to the application); `--` ends parsing and stays in argv with all
  /// that follows; a repeated flag keeps its last value; an integer flag at
  /// the end of argv without its value is an error ("--cores: missing
  /// value"). A malformed `SHOAL_*` variable is an error even when a flag
  /// overrides it; unknown `SHOAL_*` names are ignored (see unknown_env). On a throw, argc and
  /// argv are left unchanged; when flags are removed, the new argv[argc] is
  /// set to null, as main() guarantees for the original.
  /// Who: the process's main thread, before the runtime starts. Cost: local,
  /// no messages.
  static config parse(int& argc, char** argv, char** envp);

  /// One warning per `SHOAL_*` variable of `envp` that names no option
  /// (e.g. a misspelling), with the closest known name. init() prints them.
  static std::vector<std::string> unknown_env(char** envp);

  /// Replaces 0 (auto) fields by their effective values (cores = hardware
  /// threads, at least 1 and at most 4096). Idempotent.
  config& resolve();

  /// Checks every field's range and cross-field consistency; throws
  /// config_error naming the flag(s) and the accepted range. An unresolved
  /// field (cores == 0) is checked as resolve() would set it. Cross-field
  /// rules: heap_mb MiB / cores >= block_bytes; buffers_per_core *
  /// aggregation_bytes <= 1 GiB; network_bytes >= aggregation_bytes rounded
  /// up to 64; stack_kb * max_workers_per_core <= 64 TiB.
  void validate() const;

  /// One line per field, flag name padded then value ("  --cores  ...  2"),
  /// in declaration order, each ending in '\n'; for --verbose.
  std::string describe() const;

  /// The word that value `value` of the word-valued option `option` (its
  /// flag name without "--", e.g. "one-sided") stands for, as --help lists
  /// them; throws config_error for an option that takes no words or a value
  /// out of its range.
  static std::string word(std::string_view option, int value);

  /// Help text listing every flag, its environment variable, default and range.
  static std::string help();
};

}  // namespace shoal
