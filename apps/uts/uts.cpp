// Placeholder until the app lands.
#include "common/app.hpp"

namespace shoal_apps {
app_spec uts_app() {
  return {"uts", "uts (not implemented yet)", {"default"}, [](CLI::App&) -> runner {
            return [](run_context&) { throw input_error("uts is not implemented yet"); };
          }};
}
}  // namespace shoal_apps
