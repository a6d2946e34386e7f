#include "app/serve_command.hpp"

#include <caf/actor_cast.hpp>
#include <caf/after.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/send.hpp>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "actors/cluster_dispatcher.hpp"
#include "actors/control.hpp"
#include "actors/journal.hpp"
#include "actors/node_agent.hpp"
#include "actors/detail/proof_check.hpp"
#include "actors/detail/prover_ops.hpp"
#include "zk/groth16/synthesis_model.hpp"
#include "actors/runtime.hpp"
#include "jobs/job_file.hpp"
#include "app/run_command.hpp"
#include "app/serve_files.hpp"
#include "app/serve_stop.hpp"
#include "engine/runtime_builder.hpp"
#include "http/door.hpp"
#include "observe/metrics_http.hpp"
#include "observe/observer.hpp"
#include "gpu/backend.hpp"
#include "gpu/cuda/factory.hpp"
#include "gpu/pinning.hpp"
#include "memory/estimate.hpp"
#include "memory/size.hpp"
#include "net/basp_guard.hpp"
#include "net/tls_context.hpp"

namespace proofline::app {

using engine::backend_records;
using jobs::parse_job_file;

using observe::bind_problem;
using observe::is_loopback_address;
using observe::metrics_endpoint;
using observe::observation;
using observe::observation_options;
using observe::parse_metrics_endpoint;

namespace {

namespace fs = std::filesystem;

const char* const serve_footer = R"(ROLES:
  proofline serve                      a server on 127.0.0.1:7470: clients submit job
                                       files (proofline submit) and it proves them
  proofline serve --listen H:P         the same on another address (port 0: any free port)
  proofline serve --join H:P           a node: it registers its GPUs (backends), memory
                                       and --slots with the coordinator at H:P and pulls
                                       partitions from it in the coordinator's priority
                                       order whenever it has room
  Any listening server is a coordinator: nodes may join it. It also proves
  locally unless --no-local-proving. A coordinator queues partitions with
  its own --memory-budget estimates, so one partition must fit in it. A node
  that disconnects (its connection drops, or its heartbeats stop for
  --peer-timeout) has its partitions queued again; a node sends proofs back
  as text and only the coordinator writes outputs, ignoring a result for a
  partition it took back or already has. The coordinator checks every
  node's proof by pairing first (whatever --no-verify says, which concerns
  its own proofs): one that fails is not written, its partition is proved
  again on another node or locally, and a node with 3 bad proofs gets no
  more work until it joins again (`proofline metrics` shows bad proofs).

PATHS AND STORAGE:
  Clients send the job file's text and its absolute path; the server resolves
  relative paths against that path's directory and writes the outputs itself.
  Every zkey, witness and out path must lie under an --allow-root directory of
  the server (symlinks resolved; default: the server's working directory, which
  must then not be /: name / with --allow-root to allow everything); the
  files are opened beneath their root without following links, so a link
  swapped in while a job waits fails that job; and
  a node reads zkey and witness paths only under its own --allow-root. In a
  cluster, job files must name paths on storage every node sees at the same
  path (a shared file system), or use `submit --inline`, which sends the
  witness bytes with the job; proving keys always come from shared storage.

SECURITY:
  Every link (listening and joining) uses mutual TLS through CAF's OpenSSL
  module by default, on loopback too: each side presents a certificate and
  requires the peer's to chain to the same CA, so a peer without one is
  dropped during the TLS handshake, before CAF's BASP parser reads a byte.
  The credentials come from --tls-dir (default $PROOFLINE_TLS_DIR, else
  ~/.config/proofline/tls); `serve` creates a new CA and certificate there
  at its first start, and clients and nodes of the same user on this
  machine find them. For other machines see `proofline tls
  --help`; --tls-cert/--tls-key/--tls-ca use certificates of your own PKI.
  The files are read at the start, and again on SIGHUP: new connections use
  the new ones once they load, and the ones in use stay when they do not.
  --insecure listens and joins in plain text, unauthenticated. Anyone who
  can reach the port can then submit and cancel jobs and join as a node, and
  CAF 0.17.6's network parser reads their bytes; proofline closes the
  connections whose bytes are known to crash it or make it allocate, but
  only those. Use it only where every peer that can connect is trusted.

STATE:
  --state DIR keeps a journal of accepted jobs and finished partitions in
  DIR/journal.sqlite (SQLite), written before a submission is answered. After
  a crash or kill, `serve --state DIR` again re-queues every job that had not
  finished; partitions whose proof and public files exist and verify against
  the key are not proved again, and the jobs that had finished are answered
  for (status, await) as before, within --keep-finished. Inline witnesses are spooled under DIR/spool
  so they survive too (stored relative to DIR, so DIR may be moved). A
  journal that cannot be read or is damaged, or whose write-ahead log
  (DIR/journal.sqlite-wal) is damaged or missing after a crash, stops serve
  (exit 2) naming the file, the problem and how to go on. After a clean stop
  DIR/journal.sqlite alone is the whole journal: back it up then (see
  docs/RELIABILITY.md). Without --state a stopped daemon forgets its queue.

HEARTBEATS: every proofline process sends a BASP heartbeat every 500 ms; a
  peer silent for --peer-timeout seconds is dropped (its work is re-queued).

STOPPING: SIGTERM (or SIGINT) drains: submissions are refused ("the server is
  stopping"), /readyz answers 503, no queued partition starts, and the
  partitions in flight (granted memory: in synthesis, waiting for or on a
  GPU) finish and are written, for at most --drain-timeout seconds. The jobs
  not finished stay in the --state journal and resume at the next start;
  without --state each is cancelled (its result.json gives the reason, its
  waiting clients are told) and the log says how many were dropped. A second
  signal stops at once. Exit 143 after SIGTERM, 130 after SIGINT (as `run`),
  2 on a usage error (bad option, TLS credentials missing or unusable,
  address in use, backend unavailable).)";

/// The options of the HTTP door (docs/API.md).
void add_http_options(CLI::App& s, http::door_options& h) {
  s.add_option("--http", h.listen,
               "Also serve the HTTP proving API (docs/API.md) on HOST:PORT (port 0: any free "
               "port, printed): mutual TLS with the daemon's credentials unless --insecure; a "
               "non-loopback address needs TLS or --http-tokens")
      ->type_name("HOST:PORT");
  s.add_option("--http-tokens", h.tokens_file,
               "Require \"Authorization: Bearer TOKEN\" on the HTTP API, TOKEN one of this "
               "file's \"NAME TOKEN\" lines (NAME shows in logs and job ids)")
      ->type_name("FILE");
  s.add_option("--http-max-body", h.max_body, "Largest HTTP request body (413 beyond)")
      ->check(size_validator())
      ->capture_default_str();
  s.add_option("--http-request-timeout", h.request_timeout_s,
               "Seconds from an HTTP connection's accept to the last byte of its request (TLS "
               "handshake included; 408 or closed beyond)")
      ->check(CLI::Range(1u, 3600u))
      ->capture_default_str();
  s.add_option("--http-max-connections", h.max_connections,
               "HTTP connections open at once (the oldest still sending is closed for a new one)")
      ->check(CLI::Range(1u, 100000u))
      ->capture_default_str();
  s.add_option("--http-keep-jobs", h.keep_jobs,
               "Finished jobs of POST /v1/jobs whose proofs and result.json stay on disk "
               "(and whose ids stay taken); the oldest beyond are removed")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000000}))
      ->capture_default_str();
  s.add_option("--max-pending", h.max_pending,
               "Partitions accepted over HTTP and not yet finished; more work is answered 429 "
               "with Retry-After")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}))
      ->capture_default_str();
}

}  // namespace

void add_serve_command(cli& c) {
  auto opts = std::make_shared<serve_options>();
  CLI::App& s = c.add("serve",
                      "Run a proving daemon for clients and cluster nodes (docs/CLUSTER.md)",
                      [opts](std::ostream& out, std::ostream& err) {
                        return serve_command(*opts, out, err);
                      });
  s.footer(serve_footer);
  s.add_option("--listen", opts->listen,
               "Publish the control actor on HOST:PORT (default 127.0.0.1:7470; port 0 = any "
               "free port, printed); every link uses mutual TLS unless --insecure")
      ->type_name("HOST:PORT");
  s.add_option("--join", opts->join,
               "Be a node of the coordinator at HOST:PORT (retries until it answers). Without "
               "--listen a node does not listen itself")
      ->type_name("HOST:PORT");
  net::add_tls_options(s, opts->tls,
                       "Listen and join in plain text, without TLS: anyone who can reach the port "
                       "can crash the daemon (see SECURITY)");
  s.add_option("--allow-root", opts->allow_roots,
               "Remote requests may read and write only under this directory (repeatable; "
               "default: the working directory, refused when it is /)")
      ->type_name("DIR");
  s.add_option("--spool", opts->spool,
               "Scratch directory for inline witnesses and a node's partitions (default: "
               "<tmp>/proofline-spool-<pid>, removed at exit)")
      ->type_name("DIR");
  s.add_option("--state", opts->state,
               "Keep a journal of accepted jobs and finished partitions in DIR (SQLite); a "
               "restart with the same DIR finishes every job accepted before (see STATE)")
      ->type_name("DIR");
  s.add_option("--drain-timeout", opts->drain_timeout_s,
               "On SIGTERM or SIGINT, wait at most this long for the partitions in flight to "
               "finish before stopping (see STOPPING)")
      ->type_name("SECONDS")
      ->check(CLI::Range(0u, 86400u))
      ->capture_default_str();
  s.add_option("--keep-finished", opts->keep_finished,
               "Completed jobs that `status`, `watch`, `await` and a waiting `submit` still "
               "answer for; "
               "older ones are forgotten (their result.json stays) so that a daemon's memory "
               "does not grow with every job it ran")
      ->type_name("N")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000000}))
      ->capture_default_str();
  s.add_option("--keep-finished-bytes", opts->keep_finished_bytes,
               "The most memory the records of those completed jobs may hold (estimated from "
               "their partitions and paths); the oldest are forgotten first, the newest is "
               "always kept; 0: no limit")
      ->check(size_validator())
      ->capture_default_str();
  s.add_option("--max-inline", opts->max_inline,
               "Refuse a submission whose inline witnesses (submit --inline) total more than "
               "this")
      ->check(size_validator())
      ->capture_default_str();
  s.add_option("--slots", opts->slots,
               "Node: partitions it works on at once (default: synthesizers + GPU workers)")
      ->check(CLI::Range(1u, 4096u));
  s.add_option("--preload", opts->preload,
               "Load these proving keys at start and make them ready on the GPUs; loaded keys "
               "stay warm across submissions until the memory budget needs room")
      ->type_name("KEY...");
  s.add_flag("--no-local-proving", opts->no_local_proving,
             "Coordinator: prove nothing here, only hand partitions to nodes");
  s.add_option("--peer-timeout", opts->peer_timeout_s,
               "Drop a peer whose heartbeats stop for this many seconds")
      ->check(CLI::Range(2u, 3600u))
      ->capture_default_str();
  net::add_admission_options(s, opts->admission);
  add_http_options(s, opts->http);
  add_runtime_options(s, *opts);
  s.parse_complete_callback([opts, &s] { opts->listen_given = s.count("--listen") > 0; });
}

int serve_command(const serve_options& o, std::ostream& out, std::ostream& err) {
  run_options log_opts;
  static_cast<runtime_options&>(log_opts) = o;
  log_opts.log_level_given = true;
  setup_logging(log_opts);
  auto usage = [&](const std::string& msg) {
    err << "proofline serve: " << msg << "\n";
    return exit_usage;
  };

  // 1. Options, all checked before anything starts.
  std::string why;
  std::optional<net::endpoint> listen, join;
  bool listening = o.listen_given || o.join.empty();
  if (listening) {
    listen = net::parse_endpoint(o.listen_given ? o.listen : net::default_endpoint, why);
    if (!listen) return usage("--listen: " + why);
  }
  if (!o.join.empty()) {
    join = net::parse_endpoint(o.join, why);
    if (!join) return usage("--join: " + why);
  }
  // The working directory as the implicit root gives remote requests the
  // whole file system when it is / (a daemon started by init or a container
  // often runs there): that must be asked for by name.
  if (o.allow_roots.empty()) {
    std::error_code ec;
    if (fs::equivalent(fs::current_path(ec), "/", ec))
      return usage("the working directory is /, so remote requests could read and write every "
                   "file; name the directories they may use with --allow-root DIR "
                   "(--allow-root / if that is really meant)");
  }
  net::tls_options tls_opts = o.tls;
  std::string tls_created;
  if (auto problem = net::resolve_tls(tls_opts, /*create_missing=*/true, tls_created);
      !problem.empty())
    return usage(problem);
  if (!tls_created.empty())
    spdlog::info("serve: created TLS credentials (a new CA and certificate) in {}", tls_created);
  bool tls = tls_opts.any();
  if (!o.http.listen.empty()) {
    http::door_options h = o.http;
    h.tls = tls;
    std::string host;
    uint16_t port = 0;
    if (auto problem = http::check_door_options(h, host, port); !problem.empty())
      return usage(problem);
  }
  if (!tls)
    spdlog::warn("serve: --insecure: links are plain text and unauthenticated; anyone who can "
                 "reach {} can submit, cancel and join", listen ? listen->text() : o.join);
  std::vector<std::string> roots;
  try {
    if (o.allow_roots.empty()) roots.push_back(canonical_root(fs::current_path().string()));
    for (const auto& r : o.allow_roots) roots.push_back(canonical_root(r));
  } catch (const std::exception& e) {
    return usage(std::string("--allow-root ") + e.what());
  }
  // Keys named with --preload, resolved now (symlinks included): the files
  // are opened without following links, beneath their own directories.
  std::vector<std::string> preload;
  for (const auto& k : o.preload) {
    std::error_code ec;
    auto p = fs::weakly_canonical(fs::absolute(k), ec);
    preload.push_back(ec ? fs::absolute(k).lexically_normal().string() : p.string());
  }
  // The journal, the spool and the confinement, before serve listens.
  serve_files files;
  if (auto problem = files.open(o, roots, preload); !problem.empty()) return usage(problem);
  const std::shared_ptr<journal_store>& store = files.store;
  const std::string& spool = files.spool;
  std::optional<metrics_endpoint> metrics;
  if (!o.metrics.empty()) {
    metrics = parse_metrics_endpoint(o.metrics, &why);
    if (!metrics) return usage("--metrics: " + why);
    if (!is_loopback_address(metrics->host) && !o.metrics_public)
      return usage("--metrics " + o.metrics +
                   ": not a loopback address, and the endpoint has no authentication; add "
                   "--metrics-public to serve it there anyway");
    if (auto problem = bind_problem(*metrics); !problem.empty())
      return usage("--metrics " + o.metrics + ": " + problem);
  }

  // 2. The actor system and the control actor, published before anything slow.
  sigset_t stop_signals = block_stop_signals();
  net::reload_tls_on_sighup();
  net::set_admission_limits(o.admission);
  caf::actor_system_config cfg;
  net::configure_network(cfg, tls_opts, std::chrono::seconds(o.peer_timeout_s));
  caf::actor_system sys{cfg};
  engine::runtime_role role;
  role.pinned_pool = true;  // pinned once at start (no local proving: no pool)
  role.keep_keys = true;    // a daemon keeps keys warm across submissions
  role.keep_finished = o.keep_finished;
  role.keep_finished_bytes = *memory::parse_size(o.keep_finished_bytes);  // checked by the CLI
  role.local_proving = !o.no_local_proving;
  engine::runtime_builder builder(o, role);
  const prover_ops& ops = builder.ops();
  control_config cc;
  cc.parse_jobs = [](const std::string& text, const std::string& name, const std::string& base) {
    return parse_job_file(text, name, base, base);
  };
  cc.allowed_roots = roots;
  cc.spool_dir = spool;
  cc.name = net::process_name();
  cc.write_file = ops.write_file;
  cc.max_inline_bytes = *memory::parse_size(o.max_inline);
  // What a client may send in one message: a job file and its inline
  // witnesses. A node takes partitions (inline witnesses included) from its
  // coordinator, whose --max-inline it does not know, so it keeps CAF's limit.
  if (o.join.empty())
    net::set_basp_payload_limit(cc.max_inline_bytes + jobs::max_job_file_bytes +
                                (uint64_t(1) << 20));
  auto control = proofline::spawn_control(sys, cc);
  auto stop_control = [&] { caf::anon_send_exit(control, caf::exit_reason::user_shutdown); };
  if (listen) {
    auto published = caf::actor_cast<control_actor>(control);
    auto port = tls ? caf::openssl::publish(published, listen->port, listen->host.c_str(), true)
                    : sys.middleman().publish(published, listen->port, listen->host.c_str(), true);
    if (!port) {
      stop_control();
      return usage(net::network_error_text(sys, port.error(), *listen, tls));
    }
    listen->port = *port;
    out << "proofline serve: listening on " << listen->text() << (tls ? " (TLS)" : "")
        << std::endl;
    std::string root_list;
    for (const auto& r : roots) root_list += (root_list.empty() ? "" : ", ") + r;
    spdlog::info("serve: listening on {}{}; allowed roots: {}", listen->text(),
                 tls ? " with mutual TLS" : "", root_list);
  }

  // 3. The runtime (backends, pinned memory: the slow part).
  if (auto problem = builder.choose(); !problem.empty()) {
    stop_control();
    return usage(problem);
  }
  runtime_config& rc = builder.config();
  const auto& choice = builder.choice();
  const unsigned synthesizers = builder.synthesizers();
  const uint64_t budget = rc.memory_budget;
  spdlog::info("serve: memory budget {}; {}", memory::format_bytes(budget),
               o.no_local_proving ? "proving nothing locally (coordinator only)"
                                  : "proving locally");
  // Observed for --metrics: sampled once a second, no samples kept (a daemon).
  std::optional<observation> obs;
  if (metrics) {
    observation_options oo;
    oo.nvml = choice.cuda();
    oo.metrics = metrics;
    oo.period = std::chrono::milliseconds(1000);
    oo.keep_samples = false;
    try {
      obs.emplace(sys, rc.clock, backend_records(choice), oo);
    } catch (const std::exception& e) {
      stop_control();
      return usage(e.what());
    }
    if (!is_loopback_address(metrics->host))
      spdlog::warn("metrics: serving on {}, reachable beyond this host, without authentication",
                   o.metrics);
    rc.on_purge = obs->purge_hook();
  }
  journal_actor journal_h;
  if (store) {
    journal_config jc;
    jc.store = store;
    jc.check_proof = check_proof_files;
    jc.keep_finished = o.keep_finished;
    jc.keep_finished_bytes = *memory::parse_size(o.keep_finished_bytes);  // checked by the CLI
    jc.detached = true;
    journal_h = spawn_journal(sys, std::move(jc));
    rc.journal = journal_h;
  }
  auto stop_journal = [&] {
    if (journal_h) caf::anon_send_exit(journal_h, caf::exit_reason::user_shutdown);
  };
  std::unique_ptr<runtime> rt;
  try {
    rt = builder.start(sys);
  } catch (const std::exception& e) {
    stop_control();
    stop_journal();
    return usage(e.what());
  }
  if (obs) obs->attach({rt->registry(), rt->memory(), rt->scheduler()});
  cluster_actor dispatcher;
  if (listen) {
    cluster_config kc;
    kc.memory = rt->memory();
    kc.scheduler = rt->scheduler();
    kc.registry = rt->registry();
    kc.write_file = ops.write_file;
    kc.read_file = net::read_bytes;
    kc.check_proof = check_proof_text;  // nodes' proofs, whatever --no-verify says here
    // Recovered jobs' inline witnesses lie in earlier runs' spools under DIR/spool.
    kc.spool_dir = store && o.spool.empty() ? state_spool_root(*store) : spool;
    kc.clock = rc.clock;
    dispatcher = spawn_cluster_dispatcher(sys, kc);
  }
  caf::anon_send(control, attach_atom::value,
                 control_wiring{rt->registry(), rt->memory(), dispatcher, rt->keys()});
  // Finished jobs are answered for again, unfinished ones queued again.
  if (journal_h) caf::anon_send(journal_h, replay_atom::value, rt->registry(), rt->keys());
  // Keys named with --preload load now (resolved like job file paths); the
  // key cache logs each one, and a key that fails to load fails only the
  // jobs that later name it.
  if (!o.no_local_proving)
    for (const auto& k : preload) caf::anon_send(rt->keys(), preload_atom::value, k);

  // The HTTP door, once the runtime can take its jobs.
  std::unique_ptr<http::door> http_door;
  if (!o.http.listen.empty()) {
    http::door_options h = o.http;
    h.tls = tls;
    http::door_wiring w;
    w.registry = rt->registry();
    w.memory = rt->memory();
    w.keys = rt->keys();
    // HTTP jobs keep their outputs in the state directory (a restart
    // resumes them there) or, without --state, in this process's spool.
    w.jobs_dir = (fs::path(store ? canonical_root(o.state) : spool) / "http-jobs").string();
    w.spool_dir = spool;
    w.write_file = ops.write_file;
    {
      std::error_code ec;
      fs::create_directories(w.jobs_dir, ec);
      if (ec) {
        if (dispatcher) caf::anon_send_exit(dispatcher, caf::exit_reason::user_shutdown);
        stop_control();
        rt->shutdown();
        stop_journal();
        return usage("--http: cannot make " + w.jobs_dir + ": " + ec.message());
      }
    }
    w.api.path_problem = [roots](const std::string& path) {
      return under_roots(path, roots) ? std::string() : outside_roots_message(path, roots);
    };
    for (const auto& b : choice.backends) w.api.backends.push_back(b->describe());
    w.api.memory_budget = budget;
    w.api.openapi = http::openapi_document();
    try {
      http_door = std::make_unique<http::door>(sys, h, std::move(w));
    } catch (const std::exception& e) {
      if (dispatcher) caf::anon_send_exit(dispatcher, caf::exit_reason::user_shutdown);
      stop_control();
      rt->shutdown();
      stop_journal();
      return usage(e.what());
    }
    out << "proofline serve: http on " << http_door->url() << std::endl;
  }

  // 4. A node joins its coordinator.
  node_agent_actor agent;
  if (join) {
    node_agent_config nc;
    nc.connector = net::connector(sys, tls);
    nc.host = join->host;
    nc.port = join->port;
    nc.registry = rt->registry();
    nc.info.name = net::process_name();
    for (const auto& b : choice.backends) nc.info.backends.push_back(b->describe());
    nc.info.memory_budget = budget;
    nc.info.slots = o.slots ? o.slots
                            : static_cast<uint32_t>(synthesizers + choice.lanes());
    nc.spool_dir = spool;
    nc.allowed_roots = roots;
    nc.write_file = ops.write_file;
    nc.read_text = net::read_text;
    agent = spawn_node_agent(sys, nc);
    spdlog::info("serve: node of {} with {} slot(s)", join->text(), nc.info.slots);
  }

  // 5. Until SIGINT or SIGTERM, then the drain.
  int sig = 0;
  sigwait(&stop_signals, &sig);
  caf::anon_send(control, drain_atom::value);
  if (http_door) http_door->drain();
  if (obs) obs->stop_ready();
  drain_runtime(sys, rt->registry(), stop_signals, sig, o.drain_timeout_s, store != nullptr);
  // The registry has just told control about the jobs the drain ended
  // (cancelled ones included); control answers their waiting clients after
  // another round trip to the registry. flush is answered behind those
  // answers (actors/control.hpp), so no client is left with a lost
  // connection instead of its job's end.
  {
    caf::scoped_actor self{sys};
    self->request(control, std::chrono::seconds(5), flush_atom::value)
        .receive([](bool) {}, [](caf::error& e) { spdlog::debug("serve: flush: {}", caf::to_string(e)); });
  }
  if (agent) caf::anon_send_exit(agent, caf::exit_reason::user_shutdown);
  if (dispatcher) caf::anon_send_exit(dispatcher, caf::exit_reason::user_shutdown);
  stop_control();
  http_door.reset();
  obs.reset();
  rt->shutdown();
  rt.reset();
  stop_journal();  // after the registry: what it sent last is written first
  return base::exit_signal(sig);
}

}  // namespace proofline::app
