// Placeholder until the app lands.
#include "common/app.hpp"

namespace shoal_apps {
app_spec gups_app() {
  return {"gups", "gups (not implemented yet)", {"default"}, [](CLI::App&) -> runner {
            return [](run_context&) { throw input_error("gups is not implemented yet"); };
          }};
}
}  // namespace shoal_apps
