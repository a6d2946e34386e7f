// `proofline tls init|issue`: creates the TLS credentials that every link
// of serve, its nodes and its clients uses (net/tls_credentials.hpp).
#pragma once

namespace proofline::app {

class cli;

/// Registers `proofline tls`.
void add_tls_command(cli& c);

}  // namespace proofline::app
