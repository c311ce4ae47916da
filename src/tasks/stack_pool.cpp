#include "tasks/stack_pool.hpp"

#include "shoal/detail/check.hpp"
#include "shoal/detail/core_state.hpp"
#include "shoal/detail/process_info.hpp"
#include "shoal/exit_status.hpp"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

namespace shoal::detail {
namespace {

std::size_t page_size() {
  static const auto p = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

std::size_t round_up(std::size_t n, std::size_t m) { return (n + m - 1) / m * m; }

// Guard pages: prefer kernel guard regions (no VMA split), fall back to mprotect.
void install_guard(char* lo, std::size_t bytes) {
  // Shared by every core thread; relaxed: a stale true only costs one failed madvise.
  static std::atomic<bool> use_madvise{true};
  if (use_madvise.load(std::memory_order_relaxed) && madvise(lo, bytes, MADV_GUARD_INSTALL) == 0)
    return;
  use_madvise.store(false, std::memory_order_relaxed);
  if (mprotect(lo, bytes, PROT_NONE) == 0) return;
  std::size_t max_maps = 0;
  if (FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
    if (std::fscanf(f, "%zu", &max_maps) != 1) max_maps = 0;
    std::fclose(f);
  }
  fatal_user(fmt::format(
      "cannot protect a worker stack guard page ({}); the kernel's mapping limit "
      "vm.max_map_count = {} is probably reached: lower --max-workers-per-core or raise "
      "vm.max_map_count",
      std::strerror(errno), max_maps));
}

std::size_t g_stack_bytes = 0;
thread_local char* t_alt_stack = nullptr;
constexpr std::size_t alt_stack_bytes = 64 * 1024;

void append_number(char*& p, std::size_t v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) *p++ = digits[--n];
}

void append_text(char*& p, const char* s) {
  while (*s != '\0') *p++ = *s++;
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    default:
      return "a crash signal";
  }
}

void append_hex(char*& p, std::uintptr_t v) {
  append_text(p, "0x");
  char digits[2 * sizeof v];
  int n = 0;
  do {
    digits[n++] = "0123456789abcdef"[v % 16];
    v /= 16;
  } while (v != 0);
  while (n > 0) *p++ = digits[--n];
}

// Async-signal-safe: no allocation, no stdio. A worker's overflow into its
// guard page is named as such; any other crash signal (a fault, or one sent
// with kill) is named with the rank, then the default action ends the
// process, so that the launcher ends the job with a non-zero status.
void on_crash(int sig, siginfo_t* info, void* /*ucontext*/) {
  const core_state* s = tls_core_state;
  const worker_record* w = s != nullptr ? record_of(s->current) : nullptr;
  const auto* addr = static_cast<const char*>(info->si_addr);
  char msg[200];
  char* p = msg;
  append_text(p, "shoal: fatal on rank ");
  append_number(p, static_cast<std::size_t>(g_info.rank));
  if (sig == SIGSEGV && w != nullptr && addr < w->stack_lo &&
      addr >= w->stack_lo - stack_pool::guard_bytes) {
    append_text(p, ": worker stack overflow on core ");
    append_number(p, static_cast<std::size_t>(w->core));
    append_text(p, " (stack ");
    append_number(p, g_stack_bytes / 1024);
    append_text(p, " KiB; raise --stack-kb)\n");
    ssize_t ignored = write(STDERR_FILENO, msg, static_cast<std::size_t>(p - msg));
    (void)ignored;
    _exit(exit_status::fatal);
  }
  append_text(p, ": signal ");
  append_text(p, signal_name(sig));
  if (info->si_code <= 0) {  // SI_USER, SI_QUEUE, SI_TKILL: sent, not a fault
    append_text(p, " sent by process ");
    append_number(p, static_cast<std::size_t>(info->si_pid));
  } else {
    append_text(p, " at address ");
    append_hex(p, reinterpret_cast<std::uintptr_t>(addr));
  }
  append_text(p, "\n");
  ssize_t ignored = write(STDERR_FILENO, msg, static_cast<std::size_t>(p - msg));
  (void)ignored;
  // Raised again with the default action: the process ends by this signal
  // when the handler returns (a sent signal would otherwise be swallowed).
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

stack_pool::stack_pool(int core, std::size_t stack_bytes)
    : core_(core),
      stack_bytes_(round_up(stack_bytes, page_size())),
      slot_bytes_(guard_bytes + round_up(stack_bytes, page_size())) {
  // About 16 MiB of address space per slab, at least 4 stacks.
  slots_per_slab_ = std::max<std::size_t>(4, (std::size_t{16} << 20) / slot_bytes_);
  // Room up front, so the first workers a core creates (possibly late, when it
  // first steals) do not allocate in a steady state.
  slabs_.reserve(64);
  workers_.reserve(1024);
}

stack_pool::~stack_pool() {
  for (worker_record* w : workers_) {
    fiber_destroyed(w->context.marks);
    // Parked frames' poison must not outlive the mapping (only used slots: cheap).
    fiber_stack_unused(w->stack_lo, w->stack_lo + stack_bytes_);
  }
  for (const slab& s : slabs_) munmap(s.base, s.bytes);
}

void stack_pool::add_slab() {
  const std::size_t bytes = slots_per_slab_ * slot_bytes_;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    fatal_user(
        fmt::format("cannot map {} MiB for worker stacks on core {} ({}); lower "
                    "--max-workers-per-core or --stack-kb",
                    bytes >> 20, core_, std::strerror(errno)));
  }
  slabs_.push_back({static_cast<char*>(p), bytes});
  next_slot_ = 0;
}

char* map_lone_stack(std::size_t bytes, int core) {
  const std::size_t guard = stack_pool::guard_bytes;
  void* p = mmap(nullptr, guard + bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    fatal_user(fmt::format("cannot map the {} KiB service stack of core {} ({})", bytes >> 10, core,
                           std::strerror(errno)));
  install_guard(static_cast<char*>(p), guard);
  return static_cast<char*>(p) + guard;
}

void unmap_lone_stack(char* lo, std::size_t bytes) {
  fiber_stack_unused(lo, lo + bytes);  // frames' poison must not outlive the mapping
  munmap(lo - stack_pool::guard_bytes, stack_pool::guard_bytes + bytes);
}

worker_record* stack_pool::create() {
  if (slabs_.empty() || next_slot_ == slots_per_slab_) add_slab();
  char* slot = slabs_.back().base + next_slot_++ * slot_bytes_;
  install_guard(slot, guard_bytes);
  char* lo = slot + guard_bytes;
  fiber_stack_unused(lo, lo + stack_bytes_);  // stale if the range held frames before
  // Stagger the top of each stack by a different number of cache lines, so
  // that the hot lines of many workers (record, saved registers, innermost
  // frames) do not all fall into the same cache sets.
  const std::size_t colour = (created_++ % 16) * 64;
  char* hi = lo + stack_bytes_ - colour;
  // The worker record sits at the top of its stack.
  auto* rec = reinterpret_cast<worker_record*>(hi - round_up(sizeof(worker_record), 64));
  auto* w = new (rec) worker_record;
  w->stack_lo = lo;
  w->stack_bytes = static_cast<std::size_t>(reinterpret_cast<char*>(rec) - lo);
  w->core = core_;
  {
    lock_guard lock(workers_mu_);
    workers_.push_back(w);
  }
  return w;
}

void install_overflow_handler(std::size_t stack_bytes) {
  g_stack_bytes = round_up(stack_bytes, page_size());
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_crash;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) sigaction(sig, &sa, nullptr);
}

void install_alt_stack() {
  if (t_alt_stack != nullptr) return;
  t_alt_stack = static_cast<char*>(std::malloc(alt_stack_bytes));
  stack_t ss;
  ss.ss_sp = t_alt_stack;
  ss.ss_size = alt_stack_bytes;
  ss.ss_flags = 0;
  sigaltstack(&ss, nullptr);
}

void remove_alt_stack() {
  if (t_alt_stack == nullptr) return;
  stack_t ss;
  std::memset(&ss, 0, sizeof ss);
  ss.ss_flags = SS_DISABLE;
  sigaltstack(&ss, nullptr);
  std::free(t_alt_stack);
  t_alt_stack = nullptr;
}

}  // namespace shoal::detail
