// The result of one application run, printed as a human summary or as one
// JSON object. Shared by the shoal driver and the plain-MPI baselines, so it
// depends on nothing of shoal.
//
// Every report carries the fields the driver promises (app, impl, validated,
// time_s, rate, rate_unit, ranks, cores, stats) plus the app's own fields.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace shoal_apps {

class report {
 public:
  report(std::string app, std::string impl);

  /// One line describing the problem, e.g. "2^20 words, 4194304 updates".
  void set_problem(std::string text) { problem_ = std::move(text); }
  void set_shape(int ranks, int cores);
  /// The timed phase and its rate (`unit` says what per second, e.g. "GUPS").
  void set_time(double seconds) { time_s_ = seconds; }
  void set_rate(double rate, std::string unit);
  /// The validation verdict and a short reason printed next to it.
  void set_validated(bool ok, std::string detail);
  /// An app field: goes to JSON under `key`; also printed in the summary
  /// unless `in_summary` is false (for long lists such as per-root records).
  void set(const std::string& key, nlohmann::json value, bool in_summary = true);
  /// Runtime counters (shoal::stats_fields() for shoal, {} for baselines).
  void set_stats(nlohmann::json stats) { stats_ = std::move(stats); }

  bool validated() const noexcept { return validated_; }
  double rate() const noexcept { return rate_; }
  double time_s() const noexcept { return time_s_; }
  const std::string& problem() const noexcept { return problem_; }
  const std::string& rate_unit() const noexcept { return rate_unit_; }
  const std::string& app() const noexcept { return app_; }
  const std::string& impl() const noexcept { return impl_; }

  nlohmann::json to_json() const;
  /// Several lines: problem, configuration, time, rate, fields, verdict.
  std::string summary() const;

 private:
  std::string app_;
  std::string impl_;
  std::string problem_;
  int ranks_ = 1;
  int cores_ = 1;
  double time_s_ = 0;
  double rate_ = 0;
  std::string rate_unit_;
  bool validated_ = false;
  std::string validation_detail_ = "not validated";
  nlohmann::json fields_ = nlohmann::json::object();
  std::vector<std::string> summary_keys_;
  nlohmann::json stats_ = nlohmann::json::object();
};

/// Prints `r` on stdout: its JSON object (one line) when `json`, else its
/// summary. Returns false, after a message on stderr, when the output could
/// not be written (a full disk, a closed pipe): the caller must then exit
/// non-zero, or the report is lost without a sign.
[[nodiscard]] bool print_report(const report& r, bool json);

/// Flushes stdout and checks it for a write error (clear errno before writing
/// for the reason to be right); on one prints
/// "<program>: error: cannot write <what> to standard output: <reason>" on
/// stderr and returns false.
[[nodiscard]] bool stdout_written(std::string_view what);

/// Median of `v` (0 for an empty vector).
double median(std::vector<double> v);
/// Harmonic mean of positive values (0 for an empty vector).
double harmonic_mean(const std::vector<double>& v);

}  // namespace shoal_apps
