#include "app/tls_command.hpp"

#include <memory>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "app/cli.hpp"
#include "net/net_common.hpp"
#include "net/tls_credentials.hpp"

namespace proofline::app {

namespace {

const char* const tls_footer = R"(Every link of `proofline serve`, its nodes and its clients uses mutual TLS:
each process presents peer.pem and accepts only peers whose certificate
chains to ca.pem. `serve` creates the default directory on its
first start, so one machine needs no step of its own.

A cluster:
  coordinator$ proofline tls init                          # or: serve once
  coordinator$ proofline tls issue --name node1 /tmp/node1-tls
  # copy /tmp/node1-tls to node1 as ~/.config/proofline/tls (or pass --tls-dir)
  node1$       proofline serve --join coordinator:7470

Keep ca.key on one machine only: whoever holds it can certify peers.)";

struct tls_command_options {
  std::string dir;     ///< init: the directory; issue: the CA's
  std::string out;     ///< issue: the new directory
  std::string name;    ///< the certificate's name
  bool issue = false;  ///< which subcommand was parsed
};

int run_tls(const tls_command_options& o, std::ostream& out, std::ostream& err) {
  std::string dir = o.dir.empty() ? net::default_tls_dir() : o.dir;
  if (dir.empty()) {
    err << "proofline tls: HOME is not set; name the directory (--dir DIR)\n";
    return exit_usage;
  }
  std::string name = o.name.empty() ? net::host_name() : o.name;
  try {
    if (o.issue) {
      net::tls_issue(dir, o.out, name);
      out << "proofline tls: wrote " << o.out << "/{ca.pem,peer.pem,peer.key} for \"" << name
          << "\", certified by the CA in " << dir << "\n";
    } else if (net::tls_init(dir, name)) {
      out << "proofline tls: created a CA and a certificate for \"" << name << "\" in " << dir
          << "\n";
    } else {
      out << "proofline tls: " << dir << " holds credentials already; kept them\n";
    }
  } catch (const std::exception& e) {
    err << "proofline tls: " << e.what() << "\n";
    return exit_failed;
  }
  return exit_ok;
}

}  // namespace

void add_tls_command(cli& c) {
  auto opts = std::make_shared<tls_command_options>();
  CLI::App& t = c.add("tls", "Create TLS credentials for serve, its nodes and clients",
                      [opts](std::ostream& out, std::ostream& err) {
                        return run_tls(*opts, out, err);
                      });
  t.footer(tls_footer);
  t.require_subcommand(1);
  CLI::App* init = t.add_subcommand(
      "init", "Create a new CA and a certificate for this machine in DIR (default: "
              "$PROOFLINE_TLS_DIR, else ~/.config/proofline/tls); keeps complete credentials");
  init->add_option("dir", opts->dir, "The credential directory")->type_name("DIR");
  init->add_option("--name", opts->name, "The certificate's name (default: the host name)");
  CLI::App* issue = t.add_subcommand(
      "issue", "Write a certificate for another machine, signed by this machine's CA, into "
               "a new directory to copy there");
  issue->add_option("out", opts->out, "The new directory")->required()->type_name("DIR");
  issue->add_option("--ca-dir", opts->dir,
                    "The directory holding the CA (ca.pem, ca.key); default as for init")
      ->type_name("DIR");
  issue->add_option("--name", opts->name, "The certificate's name")->required();
  issue->parse_complete_callback([opts] { opts->issue = true; });
}

}  // namespace proofline::app
