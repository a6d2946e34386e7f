#include "lib/prover_runtime.hpp"

#include <caf/logger.hpp>
#include <caf/send.hpp>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <future>

#include "actors/detail/system_setup.hpp"
#include "zk/formats/error.hpp"
#include "zk/formats/wtns.hpp"

namespace proofline::lib {

namespace {

/// How witnesses are named in messages ("witness: 1520 witness values, ...").
const std::string witness_name = "witness";
/// How an input given in memory is named ("input: signal \"in\" is missing").
const std::string input_name = "input";

/// Completed jobs the registry keeps: a library job is awaited once, at
/// once, and never asked for again.
constexpr std::size_t kept_jobs = 64;

/// The library-only options, read here; the rest are the runtime's.
struct library_options {
  std::string log = "none";  ///< none | stderr
  std::string log_level = "info";
  bool pinned_pool = true;
};

library_options library_options_from(const std::string& text) {
  library_options o;
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return o;
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return o;  // settings_from_json names the problem
  auto text_of = [&](const char* key, std::initializer_list<const char*> allowed) {
    auto it = j.find(key);
    if (it == j.end()) return std::string();
    std::string list;
    for (const char* a : allowed) {
      if (it->is_string() && it->get<std::string>() == a) return std::string(a);
      list += (list.empty() ? "" : ", ") + std::string(a);
    }
    throw error(status::argument, std::string("options: \"") + key + "\": expected one of " +
                                      list + ", got " + it->dump());
  };
  if (auto v = text_of("log", {"none", "stderr"}); !v.empty()) o.log = v;
  if (auto v = text_of("log-level", {"trace", "debug", "info", "warn", "error", "off"}); !v.empty())
    o.log_level = v;
  if (auto it = j.find("pinned-pool"); it != j.end()) {
    if (!it->is_boolean())
      throw error(status::argument, "options: \"pinned-pool\": expected true or false, got " +
                                        it->dump());
    o.pinned_pool = it->get<bool>();
  }
  return o;
}

/// The library logs through spdlog's default logger: to stderr when asked,
/// else nowhere. A program that installed a default logger of its own (one
/// with a name) keeps it, and proofline's lines go there.
void setup_logging(const library_options& o) {
  auto current = spdlog::default_logger();
  const bool program_owns_it = current && !current->name().empty() && current->name() != "proofline";
  if (o.log == "stderr") {
    if (!program_owns_it)
      spdlog::set_default_logger(spdlog::stderr_logger_mt("proofline"));
    spdlog::set_level(spdlog::level::from_str(o.log_level));
    return;
  }
  if (!program_owns_it) {
    auto quiet = std::make_shared<spdlog::logger>("proofline",
                                                  std::make_shared<spdlog::sinks::null_sink_mt>());
    quiet->set_level(spdlog::level::off);
    spdlog::set_default_logger(quiet);
  }
}

}  // namespace

prover_runtime::prover_runtime(const std::string& options_json)
    : front_thread_(std::make_shared<std::atomic<std::thread::id>>()) {
  engine::runtime_settings settings;
  library_options lib;
  try {
    settings = engine::settings_from_json(options_json, {"log", "log-level", "pinned-pool"});
    lib = library_options_from(options_json);
  } catch (const std::invalid_argument& e) {
    throw error(status::argument, e.what());
  }
  setup_logging(lib);
  self_check_ = !settings.no_verify;
  engine::runtime_role role;
  role.pinned_pool = lib.pinned_pool;
  role.keep_keys = true;  // released keys leave; loaded ones stay warm
  role.keep_finished = kept_jobs;
  try {
    builder_.emplace(settings, role);
  } catch (const std::invalid_argument& e) {
    throw error(status::argument, e.what());
  }
  if (auto problem = builder_->choose(); !problem.empty()) throw error(status::backend, problem);
  configure_actor_system(cfg_);
  sys_ = std::make_unique<caf::actor_system>(cfg_);
  try {
    runtime_ = builder_->start(*sys_);
  } catch (const std::exception& e) {
    throw error(status::backend, e.what());
  }
  front_ = spawn_front(*sys_, front_config{runtime_->registry(), runtime_->keys(), front_thread_});
  // Making the system and spawning left this thread holding the system's
  // logger (CAF keeps it per thread), and the system's destructor waits for
  // every holder: let go, or a close on another thread would wait for ever.
  caf::logger::set_current_actor_system(nullptr);
}

prover_runtime::~prover_runtime() {
  close();
  caf::anon_send_exit(front_, caf::exit_reason::user_shutdown);
  runtime_->shutdown();
  runtime_.reset();
  front_ = nullptr;
  sys_.reset();  // waits for every actor
}

bool prover_runtime::on_completion_thread() const {
  return front_thread_->load() == std::this_thread::get_id();
}

namespace {

/// The key cache takes `key` under `name` with one user (through the front,
/// lib/front.hpp: Keys); throws on refusal.
void adopt(const front_actor& front, const std::string& name, const zk::groth16::key_ptr& key) {
  auto answer = std::make_shared<std::promise<std::string>>();
  auto refused = answer->get_future();
  caf::anon_send(front, adopt_atom::value, name, key, answer);
  if (auto why = refused.get(); !why.empty())
    throw error(status::state, name + ": the key cache refused it: " + why);
}

}  // namespace

std::shared_ptr<const loaded_key> prover_runtime::load_file(const std::string& path) {
  if (closed_) throw error(status::state, "the runtime is closed");
  auto k = std::make_shared<loaded_key>();
  try {
    k->key = builder_->ops().load_key(path);
  } catch (const std::exception& e) {
    throw error(status::input, e.what());
  }
  k->shown = path;
  k->name = path + " (library key " + std::to_string(++next_id_) + ")";
  adopt(front_, k->name, k->key);
  return k;
}

std::shared_ptr<const loaded_key> prover_runtime::load_bytes(const void* data, std::size_t size) {
  if (closed_) throw error(status::state, "the runtime is closed");
  if (!data) throw error(status::argument, "zkey buffer: NULL");
  auto k = std::make_shared<loaded_key>();
  k->shown = "zkey buffer";
  try {
    k->key = load_key_bytes({k->shown, data, size}, builder_->settings().cpu_threads, self_check_);
  } catch (const std::exception& e) {
    throw error(status::input, e.what());
  }
  k->name = "zkey buffer (library key " + std::to_string(++next_id_) + ")";
  adopt(front_, k->name, k->key);
  return k;
}

void prover_runtime::release(const loaded_key& key) {
  if (runtime_) caf::anon_send(runtime_->keys(), key_users_atom::value, key.key, int32_t{-1});
}

pending_ptr prover_runtime::submit(const loaded_key& key, const void* wtns, std::size_t size,
                                   submit_options opts, pending_proof::callback done) {
  if (closed_) throw error(status::state, "the runtime is closed");
  if (!wtns) throw error(status::argument, "witness: NULL");
  const auto& info = key.key->info;
  zk::formats::wtns_info w;
  try {
    w = zk::formats::read_wtns_info(zk::formats::memory_file{witness_name, wtns, size});
  } catch (const zk::formats::format_error& e) {
    throw error(status::input, e.what());
  }
  if (w.n8 != info.n8r)
    throw error(status::input, witness_name + ": " + std::to_string(w.n8) +
                                   "-byte field elements, " + key.shown + " expects " +
                                   std::to_string(info.n8r) + " (" + zk::to_string(info.curve) +
                                   ")");
  if (w.count != info.n_vars)
    throw error(status::input,
                witness_name + ": " + std::to_string(w.count) + " witness values, " + key.shown +
                    " expects " + std::to_string(info.n_vars),
                /*length=*/true);

  return submit_bytes(key, witness_name, {}, wtns, size, opts, std::move(done));
}

pending_ptr prover_runtime::submit_input(const loaded_key& key, const std::string& generator,
                                         const void* input, std::size_t size,
                                         submit_options opts, pending_proof::callback done) {
  if (closed_) throw error(status::state, "the runtime is closed");
  if (generator.empty()) throw error(status::argument, "witness generator: no path");
  if (!input) throw error(status::argument, input_name + ": NULL");
  // The registry opens the generator and checks it against the key before
  // any memory is reserved; a misfit comes back as an input error naming both.
  return submit_bytes(key, input_name, generator, input, size, opts, std::move(done));
}

pending_ptr prover_runtime::submit_bytes(const loaded_key& key, const std::string& name,
                                         const std::string& generator, const void* data,
                                         std::size_t size, submit_options opts,
                                         pending_proof::callback done) {
  auto pending = std::make_shared<pending_proof>(std::move(done), opts.borrow);
  auto payload = std::make_shared<job_payload>();
  payload->return_outputs = true;
  if (opts.borrow) {
    payload->witnesses = {{data, size}};
    // Destroyed with the last partition that could read the bytes: the
    // front then delivers the outcome (lib/front.hpp, Borrowed witnesses).
    payload->owner = std::shared_ptr<const void>(data, [front = front_, pending](const void*) {
      caf::anon_send(front, witness_free_atom::value, pending);
    });
  } else {
    const auto* first = static_cast<const uint8_t*>(data);
    auto copy = std::make_shared<const std::vector<uint8_t>>(first, first + size);
    payload->witnesses = {{copy->data(), copy->size()}};
    payload->owner = std::move(copy);
  }
  local_job job;
  job.spec.id = "library-" + std::to_string(++next_id_);
  job.spec.zkey = key.name;
  job.spec.witnesses = {name};
  job.spec.witness_generator = generator;
  job.spec.single = true;
  job.spec.prio = opts.prio;
  job.payload = std::move(payload);
  caf::anon_send(front_, submit_atom::value, std::move(job), pending);
  return pending;
}

submit_options prover_runtime::blocking_options(priority prio) const {
  if (on_completion_thread())
    throw error(status::state,
                "a blocking prove inside a completion callback would wait for itself; "
                "submit from the callback instead");
  submit_options opts;
  opts.prio = prio;
  opts.borrow = true;  // the caller waits, so its buffer outlives the proof
  return opts;
}

proof_outcome prover_runtime::prove(const loaded_key& key, const void* wtns, std::size_t size,
                                    priority prio) {
  return submit(key, wtns, size, blocking_options(prio))->wait();
}

proof_outcome prover_runtime::prove_input(const loaded_key& key, const std::string& generator,
                                          const void* input, std::size_t size, priority prio) {
  return submit_input(key, generator, input, size, blocking_options(prio))->wait();
}

void prover_runtime::close() {
  if (closed_.exchange(true)) return;
  auto signal = std::make_shared<close_signal>();
  caf::anon_send(front_, close_atom::value, signal);
  signal->wait();
}

}  // namespace proofline::lib
