// The per-process tree of search_context.hpp.
#include "uts/search_context.hpp"

#include <optional>

namespace shoal_apps::uts {
namespace {

// One per process; set by the runner on every rank before any core reads it.
std::optional<tree_rules> g_tree;

}  // namespace

void set_process_tree(const tree_params& p) { g_tree.emplace(p); }

const tree_rules& process_tree() { return *g_tree; }

}  // namespace shoal_apps::uts
