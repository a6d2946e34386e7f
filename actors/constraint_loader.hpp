// constraint_loader: a one-shot actor that reads one .r1cs (job_spec::r1cs)
// and answers with its constraints or the error naming the file, then quits.
// The read takes about a second per million constraints, so the job registry
// spawns it detached (its own thread), one per path being read.
#pragma once

#include <caf/fwd.hpp>
#include <caf/typed_actor.hpp>

#include <string>

#include "actors/detail/prover_ops.hpp"
#include "messages/interfaces.hpp"

namespace proofline {

using constraint_loader_actor = caf::typed_actor<
    /// Loads the constraints at `path`; blocking, so it runs detached.
    caf::replies_to<load_atom, std::string>::with<constraints_load_result>>;

/// Spawns a constraint loader that answers one load request with `load`,
/// then quits; detached unless `detached` is false.
constraint_loader_actor spawn_constraint_loader(caf::actor_system& sys,
                                                decltype(prover_ops::load_constraints) load,
                                                bool detached = true);

}  // namespace proofline
