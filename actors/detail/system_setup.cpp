#include "actors/detail/system_setup.hpp"

#include <caf/atom.hpp>

#include "messages/catalogue.hpp"

namespace proofline {

void configure_actor_system(caf::actor_system_config& cfg, int scheduler_threads) {
  cfg.set("scheduler.max-threads", scheduler_threads);
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  cfg.set("logger.console-verbosity", caf::atom("quiet"));
  register_message_types(cfg);
}

}  // namespace proofline
