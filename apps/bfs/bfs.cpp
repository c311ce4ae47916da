// Placeholder until the app lands.
#include "common/app.hpp"

namespace shoal_apps {
app_spec bfs_app() {
  return {"bfs", "bfs (not implemented yet)", {"default"}, [](CLI::App&) -> runner {
            return [](run_context&) { throw input_error("bfs is not implemented yet"); };
          }};
}
}  // namespace shoal_apps
