// `shoal pointerchase --chasers C` (chase_many.cpp): many chasers on a
// random successor function over targets, on the library's target
// channels, routed (--routing) and reduced (--reduce) between processes.
#pragma once

#include <shoal/routing.hpp>

#include <cstdint>

#include "common/app.hpp"
#include "pointerchase/plain/chasers.hpp"

namespace shoal_apps::pointerchase {

/// How the chasers' messages travel.
struct chase_many_options {
  chasers_problem problem;
  shoal::named_routing routing{};
  std::string routing_name = "direct";
  std::string reduce = "none";  ///< none, dedup or min
  std::uint32_t cache_slots = 4096;
  bool inject_fault = false;  ///< test hook: chaser 0's first step goes astray
};

/// Runs the chasers (inside shoal::run, from the root task) and fills the
/// report. Blocking.
void run_chase_many(chase_many_options o, report& out);

}  // namespace shoal_apps::pointerchase
