// shoal: parsing and validation of the one configuration object.
//
// Every option is one row of a table (name, range, extra rule, meaning,
// field accessors); parsing, validation, describe() and help() all walk the
// same table, so a new option is one row here plus its field in config.hpp.
#include "shoal/config.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <limits>
#include <optional>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace shoal {
namespace {

constexpr std::int64_t max_cores = 4096;
constexpr std::int64_t bytes_per_mib = std::int64_t{1} << 20;
constexpr std::int64_t max_buffer_bytes_per_core = std::int64_t{1} << 30;  // 1 GiB
constexpr std::int64_t max_stack_reserve_kib = std::int64_t{1} << 36;      // 64 TiB

/// A constraint some integer options add to their range.
enum class rule { none, multiple_of_4, power_of_two };

struct int_option {
  std::string_view name;  // flag without the leading "--"
  std::int64_t min;
  std::int64_t max;
  rule extra;
  std::string_view meaning;
  std::int64_t (*get)(const config&);
  void (*set)(config&, std::int64_t);
};

struct bool_option {
  std::string_view name;
  std::string_view meaning;
  bool config::*member;
};

template <auto Member>
std::int64_t get_field(const config& c) {
  return c.*Member;
}

template <auto Member>
void set_field(config& c, std::int64_t value) {
  using field = std::remove_cvref_t<decltype(c.*Member)>;
  // Only range-checked values arrive here and make_int_option proved that
  // every such value fits the field, so the cast never truncates.
  c.*Member = static_cast<field>(value);
}

template <auto Member, std::int64_t Min, std::int64_t Max>
constexpr int_option make_int_option(std::string_view name, rule extra, std::string_view meaning) {
  using field = std::remove_cvref_t<decltype(std::declval<config&>().*Member)>;
  static_assert(Min <= Max && Max <= std::numeric_limits<field>::max(),
                "an option's range must fit its field");
  return {name, Min, Max, extra, meaning, &get_field<Member>, &set_field<Member>};
}

constexpr std::array int_options{
    make_int_option<&config::cores, 1, max_cores>(
        "cores", rule::none, "OS threads (cores) that run workers in this process"),
    // 32 KiB at least: the apps' tasks were seen to overflow 16 KiB (gups).
    make_int_option<&config::stack_kb, 32, 1048576>("stack-kb", rule::multiple_of_4,
                                                    "stack size of one worker in KiB"),
    make_int_option<&config::max_workers_per_core, 1, 1000000>(
        "max-workers-per-core", rule::none, "most workers (stacks) alive on one core"),
    make_int_option<&config::aggregation_bytes, 256, 67108864>(
        "aggregation-bytes", rule::none, "size of one message aggregation buffer in bytes"),
    make_int_option<&config::flush_us, 0, 10000000>(
        "flush-us", rule::none, "a staged message is sent at the latest after this many us"),
    make_int_option<&config::buffers_per_core, 4, 1000000>(
        "buffers-per-core", rule::none, "aggregation buffers in each core's pool"),
    make_int_option<&config::network_bytes, 4096, 67108864>(
        "network-bytes", rule::none, "size of one network buffer between processes in bytes"),
    make_int_option<&config::heap_mb, 1, 16777216>(
        "heap-mb", rule::none, "global heap of this process in MiB (committed lazily)"),
    make_int_option<&config::block_bytes, 8, 1048576>(
        "block-bytes", rule::power_of_two, "block size of linear global arrays in bytes"),
    make_int_option<&config::watchdog_s, 0, 86400>(
        "watchdog-s", rule::none,
        "end a job whose cores all wait without progress for this many s, naming each "
        "core's wait (0 = off); in a job of several processes also how long a silent "
        "rank (stopped, unreachable) may go unheard"),
    make_int_option<&config::join_s, 1, 86400>(
        "join-s", rule::none,
        "how long a rank waits for the others at start-up and at exit before it ends the job "
        "naming the missing ranks"),
};

constexpr std::array bool_options{
    bool_option{"stats", "print runtime counters at finalize", &config::stats},
    bool_option{"verbose", "print the effective configuration at init", &config::verbose},
    bool_option{"progress-thread", "drive MPI from a dedicated thread (jobs of several processes)",
                &config::progress_thread},
};

/// An option that takes one of a few words (stored as an int-backed enum).
struct choice_option {
  std::string_view name;
  std::string_view meaning;
  std::vector<std::string_view> words;  // index = enum value
  int (*get)(const config&);
  void (*set)(config&, int);
};

const std::array choice_options{
    choice_option{"transport",
                  "how processes reach each other: auto (mpi when launched by mpirun/srun "
                  "with several ranks), local, mpi",
                  {"auto", "local", "mpi"},
                  [](const config& c) { return static_cast<int>(c.transport); },
                  [](config& c, int v) { c.transport = static_cast<transport_kind>(v); }},
    choice_option{"one-sided",
                  "how rget/rput and remote atomics reach their target: auto (direct for one "
                  "process, am for several), direct, shm, rma, am, node (shm when all "
                  "processes share one node and /dev/shm holds their heaps, else am; the "
                  "heap then has no transparent huge pages)",
                  {"auto", "direct", "shm", "rma", "am", "node"},
                  [](const config& c) { return static_cast<int>(c.one_sided); },
                  [](config& c, int v) { c.one_sided = static_cast<one_sided_kind>(v); }},
    choice_option{"idle",
                  "how a core with nothing to run waits: auto (sleep when the node is "
                  "oversubscribed: ranks on the node x cores > CPUs, else spin 50 us, yield, "
                  "then sleep), spin, yield, sleep",
                  {"auto", "spin", "yield", "sleep"},
                  [](const config& c) { return static_cast<int>(c.idle); },
                  [](config& c, int v) { c.idle = static_cast<idle_kind>(v); }},
    choice_option{"node-messages",
                  "how messages between processes of one node travel (jobs of several "
                  "processes): shm (through /dev/shm, read in place by the receiver; mpi when "
                  "a rank of the node cannot map it), mpi (through MPI, as between nodes)",
                  {"shm", "mpi"},
                  [](const config& c) { return static_cast<int>(c.node_messages); },
                  [](config& c, int v) { c.node_messages = static_cast<node_messages_kind>(v); }},
    choice_option{"bind",
                  "CPUs of this rank's cores: auto (when the launcher bound the rank to fewer "
                  "CPUs than --cores and the node has one per core of every rank, run on this "
                  "rank's own block of them), keep (never change the binding)",
                  {"auto", "keep"},
                  [](const config& c) { return static_cast<int>(c.bind); },
                  [](config& c, int v) { c.bind = static_cast<bind_kind>(v); }},
};

std::string flag_name(std::string_view name) { return fmt::format("--{}", name); }

std::string env_name(std::string_view name) {
  std::string out = "SHOAL_";
  // Option names are lower-case ASCII and '-', so no locale is involved.
  for (char ch : name) out += ch == '-' ? '_' : static_cast<char>(ch - 'a' + 'A');
  return out;
}

std::string env_source(std::string_view name) {
  return fmt::format("{} (environment)", env_name(name));
}

/// The set of values an option accepts, e.g. "a power of two in [8, 1048576]".
std::string accepted(const int_option& option) {
  std::string_view kind = "an integer";
  if (option.extra == rule::multiple_of_4) kind = "a multiple of 4";
  if (option.extra == rule::power_of_two) kind = "a power of two";
  return fmt::format("{} in [{}, {}]", kind, option.min, option.max);
}

[[noreturn]] void fail(std::string_view source, std::string_view problem) {
  throw config_error(fmt::format("{}: {}", source, problem));
}

/// The whole of `text` as a decimal integer; nullopt on anything else,
/// including an empty string, a sign alone, a trailing character or overflow.
std::optional<std::int64_t> parse_decimal(std::string_view text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value, 10);
  if (error != std::errc{} || stop != end) return std::nullopt;
  return value;
}

bool satisfies(rule extra, std::int64_t value) {
  switch (extra) {
    case rule::multiple_of_4:
      return value % 4 == 0;
    case rule::power_of_two:
      return value > 0 && std::has_single_bit(static_cast<std::uint64_t>(value));
    case rule::none:
      break;
  }
  return true;
}

/// Throws unless `value` (spelled `text` by its `source`) is accepted.
void check_int(const int_option& option, std::string_view source, std::string_view text,
               std::optional<std::int64_t> value) {
  if (!value || *value < option.min || *value > option.max) {
    fail(source, fmt::format("expected {}, got '{}'", accepted(option), text));
  }
  if (!satisfies(option.extra, *value)) {
    fail(source, fmt::format("must be {}, got '{}'", accepted(option), text));
  }
}

std::int64_t read_int(const int_option& option, std::string_view source, std::string_view text) {
  const auto value = parse_decimal(text);
  check_int(option, source, text, value);
  return *value;
}

bool read_bool(std::string_view source, std::string_view text) {
  if (text == "1" || text == "true") return true;
  if (text == "0" || text == "false") return false;
  fail(source, fmt::format("expected 0, 1, true or false, got '{}'", text));
}

/// The value of the first `name=value` entry of `envp`, as getenv() finds it.
std::optional<std::string_view> find_env(char** envp, std::string_view name) {
  for (char** entry = envp; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text = *entry;
    if (text.size() > name.size() && text.starts_with(name) && text[name.size()] == '=') {
      return text.substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

std::string words_of(const choice_option& option) {
  return fmt::format("{}", fmt::join(option.words, ", "));
}

int read_choice(const choice_option& option, std::string_view source, std::string_view text) {
  for (std::size_t i = 0; i < option.words.size(); ++i)
    if (option.words[i] == text) return static_cast<int>(i);
  fail(source, fmt::format("expected one of {}, got '{}'", words_of(option), text));
}

void apply_env(config& c, char** envp) {
  for (const auto& option : choice_options) {
    if (const auto text = find_env(envp, env_name(option.name))) {
      option.set(c, read_choice(option, env_source(option.name), *text));
    }
  }
  for (const auto& option : int_options) {
    if (const auto text = find_env(envp, env_name(option.name))) {
      option.set(c, read_int(option, env_source(option.name), *text));
    }
  }
  for (const auto& option : bool_options) {
    if (const auto text = find_env(envp, env_name(option.name))) {
      c.*option.member = read_bool(env_source(option.name), *text);
    }
  }
}

/// Edit distance between two short names (for "did you mean").
std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::vector<std::string> known_env_names() {
  std::vector<std::string> names;
  for (const auto& option : int_options) names.push_back(env_name(option.name));
  for (const auto& option : bool_options) names.push_back(env_name(option.name));
  for (const auto& option : choice_options) names.push_back(env_name(option.name));
  names.insert(names.end(), {"SHOAL_BCL_PATH", "SHOAL_BCL_CALIBRATION"});  // bcl/path.hpp
  names.emplace_back("SHOAL_SHM_FREE_MB");  // memory/one_sided.cpp: --one-sided auto's room test
  // transport/mpi_transport.cpp: slots of the node's message segments, and
  // a simulated failure to map them.
  names.insert(names.end(), {"SHOAL_NODE_SLOTS", "SHOAL_NODE_MESSAGES_FAIL"});
  names.emplace_back("SHOAL_SHM_MAP_FAIL");  // memory/one_sided.cpp: a simulated failed mapping
  return names;
}

/// One "--name" or "--name=value" argument.
struct flag {
  std::string_view name;
  std::optional<std::string_view> value;
};

std::optional<flag> split_flag(std::string_view arg) {
  if (!arg.starts_with("--")) return std::nullopt;
  arg.remove_prefix(2);
  const auto equals = arg.find('=');
  if (equals == std::string_view::npos) return flag{arg, std::nullopt};
  return flag{arg.substr(0, equals), arg.substr(equals + 1)};
}

template <class Options>
const auto* find_option(const Options& options, std::string_view name) {
  const auto found = std::ranges::find(options, name, &Options::value_type::name);
  return found == options.end() ? nullptr : &*found;
}

/// The argument after argv[i], which becomes the current one.
std::string_view next_value(std::string_view source, int argc, char** argv, int& i) {
  if (i + 1 >= argc) fail(source, "missing value");
  return argv[++i];
}

/// Applies `f` to `c` if it names a shoal option; a separate value moves `i`
/// past it. Returns false for a flag that belongs to the application.
bool apply_flag(config& c, const flag& f, int argc, char** argv, int& i) {
  if (const auto* option = find_option(bool_options, f.name)) {
    c.*option->member = f.value ? read_bool(flag_name(option->name), *f.value) : true;
    return true;
  }
  if (const auto* choice = find_option(choice_options, f.name)) {
    const std::string source = flag_name(choice->name);
    const std::string_view text = f.value ? *f.value : next_value(source, argc, argv, i);
    choice->set(c, read_choice(*choice, source, text));
    return true;
  }
  const auto* option = find_option(int_options, f.name);
  if (option == nullptr) return false;
  const std::string source = flag_name(option->name);
  const std::string_view text = f.value ? *f.value : next_value(source, argc, argv, i);
  option->set(c, read_int(*option, source, text));
  return true;
}

/// Applies the shoal flags of argv[1..argc) and returns the arguments left
/// for the application, argv[0] first. argv itself is not written, so that a
/// throw leaves the caller's arguments as they were.
std::vector<char*> apply_flags(config& c, int argc, char** argv) {
  std::vector<char*> kept{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") {
      kept.insert(kept.end(), argv + i, argv + argc);
      break;
    }
    const auto f = split_flag(arg);
    if (!f || !apply_flag(c, *f, argc, argv, i)) kept.push_back(argv[i]);
  }
  return kept;
}

void compact(int& argc, char** argv, const std::vector<char*>& kept) {
  std::ranges::copy(kept, argv);
  const int count = static_cast<int>(kept.size());
  // argv[argc] is null as in main(); the new end gets a null as well. Nothing
  // is written when nothing was removed, in case a caller's array has no
  // argv[argc] slot.
  if (count < argc) argv[count] = nullptr;
  argc = count;
}

void check_heap(const config& c) {
  // Each core owns an equal slice of the heap; a slice smaller than a block
  // could hold no block of a linear global array.
  if (c.heap_mb * bytes_per_mib / c.cores >= c.block_bytes) return;
  fail("--heap-mb",
       fmt::format("{} MiB gives each of the {} cores less than one block of {} bytes; "
                   "raise --heap-mb or lower --cores",
                   c.heap_mb, c.cores, c.block_bytes));
}

void check_buffer_pool(const config& c) {
  // The pool is allocated and touched at start-up on every core.
  const std::int64_t bytes = c.buffers_per_core * c.aggregation_bytes;
  if (bytes <= max_buffer_bytes_per_core) return;
  fail("--buffers-per-core x --aggregation-bytes",
       fmt::format("{} x {} bytes = {} bytes exceeds 1 GiB per core", c.buffers_per_core,
                   c.aggregation_bytes, bytes));
}

void check_network_buffer(const config& c) {
  // A core's aggregation buffer (header included, 64-byte stride) travels
  // whole inside one network buffer.
  const std::int64_t stride = (c.aggregation_bytes + 63) / 64 * 64;
  if (c.network_bytes >= stride) return;
  // Checked on one process too, where no network buffer is used: the same
  // flags must work when the program is later started under mpirun.
  fail("--network-bytes",
       fmt::format("{} bytes cannot hold one aggregation buffer of {} bytes (--aggregation-bytes "
                   "{} rounded up to 64); raise --network-bytes or lower --aggregation-bytes "
                   "(checked on one process too, so that the same flags work under mpirun)",
                   c.network_bytes, stride, c.aggregation_bytes));
}

void check_stack_reserve(const config& c) {
  // Stacks are address space reserved up front; 64 TiB is half of the user
  // address space of x86-64 with 4-level paging.
  const std::int64_t kib = std::int64_t{c.stack_kb} * c.max_workers_per_core;
  if (kib <= max_stack_reserve_kib) return;
  fail("--stack-kb x --max-workers-per-core",
       fmt::format("{} KiB x {} workers = {} KiB of stack reserve exceeds 64 TiB per core",
                   c.stack_kb, c.max_workers_per_core, kib));
}

std::string describe_line(std::string_view name, std::string_view value) {
  return fmt::format("  {:<24} {}\n", flag_name(name), value);
}

std::string help_entry(std::string_view flag_text, std::string_view name,
                       std::string_view default_and_range, std::string_view meaning) {
  return fmt::format("  {:<26}{:<28}default {}\n      {}\n", flag_text, env_name(name),
                     default_and_range, meaning);
}

}  // namespace

config config::parse(int& argc, char** argv, char** envp) {
  config c;
  apply_env(c, envp);
  std::vector<char*> kept;
  if (argv != nullptr && argc > 1) kept = apply_flags(c, argc, argv);
  c.resolve();
  c.validate();
  if (!kept.empty()) compact(argc, argv, kept);
  return c;
}

std::vector<std::string> config::unknown_env(char** envp) {
  const std::vector<std::string> known = known_env_names();
  std::vector<std::string> warnings;
  for (char** entry = envp; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text = *entry;
    const std::string_view name = text.substr(0, text.find('='));
    if (!name.starts_with("SHOAL_") || std::ranges::find(known, name) != known.end()) continue;
    const auto closest = std::ranges::min_element(
        known, {}, [name](const std::string& k) { return distance(name, k); });
    warnings.push_back(
        fmt::format("unknown environment variable {} ignored (closest known: {}; see --help-shoal)",
                    name.substr(0, 64), *closest));
  }
  return warnings;
}

config& config::resolve() {
  if (cores == 0) {
    const auto hardware = static_cast<std::int64_t>(std::thread::hardware_concurrency());
    cores = static_cast<int>(std::clamp<std::int64_t>(hardware, 1, max_cores));
  }
  return *this;
}

void config::validate() const {
  config effective = *this;
  effective.resolve();
  for (const auto& option : int_options) {
    const std::int64_t value = option.get(effective);
    check_int(option, flag_name(option.name), fmt::to_string(value), value);
  }
  // The cross-field checks rely on the ranges: cores >= 1 and no overflow.
  check_heap(effective);
  check_buffer_pool(effective);
  check_network_buffer(effective);
  check_stack_reserve(effective);
}

std::string config::word(std::string_view option, int value) {
  for (const auto& o : choice_options) {
    if (o.name != option) continue;
    if (value < 0 || static_cast<std::size_t>(value) >= o.words.size())
      throw config_error(fmt::format("{}: no word for value {} (0 to {})", flag_name(option), value,
                                     o.words.size() - 1));
    return std::string(o.words[static_cast<std::size_t>(value)]);
  }
  throw config_error(fmt::format("{}: not an option that takes a word", flag_name(option)));
}

std::string config::describe() const {
  std::string out;
  for (const auto& option : int_options) {
    out += describe_line(option.name, fmt::to_string(option.get(*this)));
  }
  for (const auto& option : bool_options) {
    out += describe_line(option.name, this->*option.member ? "true" : "false");
  }
  for (const auto& option : choice_options) {
    out += describe_line(option.name, option.words[static_cast<std::size_t>(option.get(*this))]);
  }
  return out;
}

std::string config::help() {
  const config defaults;
  std::string out =
      "shoal options (a flag overrides its SHOAL_* variable, which overrides the default):\n";
  for (const auto& option : int_options) {
    const std::int64_t value = option.get(defaults);
    // Only --cores means "hardware threads" by 0; another option's 0 is a value.
    const bool hardware = option.name == "cores" && value == 0;
    const std::string shown = hardware ? "hardware threads" : fmt::to_string(value);
    out += help_entry(flag_name(option.name) + " N", option.name,
                      fmt::format("{}; {}", shown, accepted(option)), option.meaning);
  }
  for (const auto& option : bool_options) {
    const std::string shown = defaults.*option.member ? "true" : "false";
    out += help_entry(flag_name(option.name) + "[=0|1]", option.name,
                      shown + "; 0, 1, true or false", option.meaning);
  }
  for (const auto& option : choice_options) {
    out += help_entry(
        flag_name(option.name) + " WORD", option.name,
        fmt::format("{}; one of {}", option.words[static_cast<std::size_t>(option.get(defaults))],
                    words_of(option)),
        option.meaning);
  }
  return out;
}

}  // namespace shoal
