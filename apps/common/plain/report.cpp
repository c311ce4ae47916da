#include "common/plain/report.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace shoal_apps {

report::report(std::string app, std::string impl) : app_(std::move(app)), impl_(std::move(impl)) {}

void report::set_shape(int ranks, int cores) {
  ranks_ = ranks;
  cores_ = cores;
}

void report::set_rate(double rate, std::string unit) {
  rate_ = rate;
  rate_unit_ = std::move(unit);
}

void report::set_validated(bool ok, std::string detail) {
  validated_ = ok;
  validation_detail_ = std::move(detail);
}

void report::set(const std::string& key, nlohmann::json value, bool in_summary) {
  if (in_summary && !fields_.contains(key)) summary_keys_.push_back(key);
  fields_[key] = std::move(value);
}

nlohmann::json report::to_json() const {
  nlohmann::json j = fields_;
  j["app"] = app_;
  j["impl"] = impl_;
  j["problem"] = problem_;
  j["validated"] = validated_;
  j["validation"] = validation_detail_;
  j["time_s"] = time_s_;
  j["rate"] = rate_;
  j["rate_unit"] = rate_unit_;
  j["ranks"] = ranks_;
  j["cores"] = cores_;
  j["stats"] = stats_;
  return j;
}

namespace {
std::string show(const nlohmann::json& v) {
  if (v.is_number_float()) return fmt::format("{:.6g}", v.get<double>());
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}
}  // namespace

std::string report::summary() const {
  std::string s = fmt::format("{} ({})\n", app_, impl_);
  s += fmt::format("  problem     {}\n", problem_);
  const int per_rank = cores_ / std::max(ranks_, 1);
  s += fmt::format("  job         {} rank{} x {} core{} per rank\n", ranks_, ranks_ == 1 ? "" : "s",
                   per_rank, per_rank == 1 ? "" : "s");
  s += fmt::format("  time        {:.4f} s\n", time_s_);
  s += fmt::format("  rate        {:.6g} {}\n", rate_, rate_unit_);
  for (const std::string& k : summary_keys_)
    s += fmt::format("  {:<11} {}\n", k, show(fields_.at(k)));
  s += fmt::format("  validation  {} ({})\n", validated_ ? "PASSED" : "FAILED", validation_detail_);
  return s;
}

bool stdout_written(std::string_view what) {
  // A full disk or a closed pipe shows only at the flush or in the error flag
  // (errno then tells why, if the caller cleared it before writing).
  if (std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return true;
  const int err = errno;
  std::fprintf(stderr, "%s: error: cannot write %.*s to standard output: %s\n",
               program_invocation_short_name, static_cast<int>(what.size()), what.data(),
               err != 0 ? std::strerror(err) : "write error");
  return false;
}

bool print_report(const report& r, bool json) {
  const std::string text = json ? r.to_json().dump() + "\n" : r.summary();
  errno = 0;
  std::fputs(text.c_str(), stdout);
  return stdout_written(fmt::format("the {} report", r.app()));
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double harmonic_mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double inv = 0;
  for (double x : v) inv += 1.0 / x;
  return static_cast<double>(v.size()) / inv;
}

}  // namespace shoal_apps
