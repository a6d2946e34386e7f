#include "witness/build.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "witness/generator.hpp"

extern char** environ;

namespace proofline::witness {

namespace fs = std::filesystem;

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

[[noreturn]] void fail(const std::string& message) { throw std::runtime_error(message); }

/// `name` on PATH (or as given when it holds a slash); empty when absent.
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) fail(fmt::format("{}: cannot write", path.string()));
}

std::string tail_of(const fs::path& log, size_t lines) {
  std::ifstream in(log);
  std::vector<std::string> all;
  std::string line;
  while (std::getline(in, line)) all.push_back(line);
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
    out += "  " + all[i] + "\n";
  return out;
}

/// The assembler's quoting of a path inside .incbin "...".
std::string asm_string(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out;
}

std::string cxx_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += static_cast<char>(ch);
    } else if (ch < 0x20 || ch >= 0x7f) {
      out += fmt::format("\\{:03o}", ch);
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out + "\"";
}

/// The main component's input names by signal id, from a circom .sym file
/// (lines "signal,witness,component,main.name[i]"): the signals in
/// [first, first + count) named without "main." and without the index of
/// their first element, e.g. 8 -> "data" for "main.data[0]".
std::map<uint64_t, std::string> input_names(const fs::path& sym, uint64_t first, uint64_t count) {
  std::map<uint64_t, std::string> names;
  std::ifstream in(sym);
  if (!in) fail(fmt::format("{}: cannot open the .sym file", sym.string()));
  std::string line;
  while (std::getline(in, line)) {
    size_t c1 = line.find(',');
    size_t c3 = line.find(',', line.find(',', c1 + 1) + 1);
    if (c1 == std::string::npos || c3 == std::string::npos) continue;
    uint64_t signal = std::strtoull(line.c_str(), nullptr, 10);
    if (signal < first || signal >= first + count) continue;
    std::string name = line.substr(c3 + 1);
    if (name.rfind("main.", 0) == 0) name = name.substr(5);
    while (!name.empty() && name.back() == ']') {
      size_t open = name.rfind('[');
      if (open == std::string::npos) break;
      name.resize(open);
    }
    names.emplace(signal, name);
  }
  return names;
}

/// Reads `uint get_NAME() {return N;}` from the generated circuit source.
uint64_t generated_constant(const fs::path& source, const std::string& fn) {
  std::ifstream in(source);
  std::string line;
  const std::string head = "uint " + fn + "()";
  while (std::getline(in, line))
    if (line.rfind(head, 0) == 0) {
      size_t r = line.find("return");
      if (r != std::string::npos) return std::strtoull(line.c_str() + r + 6, nullptr, 10);
    }
  fail(fmt::format("{}: no {}(); not a circuit source that circom --c wrote", source.string(), fn));
}

struct step {
  std::string label;
  std::vector<std::string> argv;
  fs::path log;
};

pid_t spawn(const step& s) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, s.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> argv;
  for (const auto& a : s.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) fail(fmt::format("cannot run {}: {}", s.argv[0], std::strerror(rc)));
  return pid;
}

/// Runs the steps, at most `jobs` at once; the first failure ends the build
/// (after the running ones finish) with the end of its output.
void run_steps(const std::vector<step>& steps, unsigned jobs,
               const std::function<void(const std::string&)>& progress, bool keep_on_failure) {
  std::map<pid_t, std::pair<size_t, clock_type::time_point>> running;
  size_t next = 0, done = 0;
  std::string failure;
  while (done < steps.size()) {
    while (failure.empty() && next < steps.size() && running.size() < jobs) {
      progress(fmt::format("[{}/{}] {}", next + 1, steps.size(), steps[next].label));
      running[spawn(steps[next])] = {next, clock_type::now()};
      ++next;
    }
    if (running.empty()) break;
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      fail(fmt::format("waiting for the compiler: {}", std::strerror(errno)));
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const step& s = steps[it->second.first];
    const double secs = seconds_since(it->second.second);
    running.erase(it);
    ++done;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      progress(fmt::format("      {} done ({:.1f} s)", s.label, secs));
    } else if (failure.empty()) {
      failure = fmt::format("{} failed ({}):\n{}{}", s.label,
                            WIFEXITED(status) ? fmt::format("exit {}", WEXITSTATUS(status))
                                              : fmt::format("signal {}", WTERMSIG(status)),
                            tail_of(s.log, 20),
                            keep_on_failure ? fmt::format("the whole output: {}", s.log.string())
                                            : std::string());
    }
    if (!failure.empty() && next < steps.size()) done = steps.size() - running.size();
  }
  if (!failure.empty()) fail(failure);
}

}  // namespace

build_result build_generator(const build_options& opts,
                             const std::function<void(const std::string&)>& progress) {
  const auto t0 = clock_type::now();
  build_result result;
  std::error_code ec;
  fs::path dir = fs::path(opts.dir).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();
  if (!fs::is_directory(dir, ec))
    fail(fmt::format("{}: not a directory (give the NAME_cpp/ directory `circom --c` wrote)",
                     opts.dir));
  // NAME from the one .dat file circom writes beside NAME.cpp.
  std::vector<std::string> dats;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".dat") dats.push_back(e.path().stem().string());
  if (dats.size() != 1)
    fail(fmt::format("{}: {} .dat files; the directory `circom --c` writes holds one (NAME.dat)",
                     dir.string(), dats.size()));
  const std::string name = dats.front();
  for (const char* f : {"calcwit.cpp", "calcwit.hpp", "circom.hpp", "fr.cpp", "fr.hpp"})
    if (!fs::exists(dir / f))
      fail(fmt::format("{}: no {}; not a directory `circom --c` wrote", dir.string(), f));
  if (!fs::exists(dir / (name + ".cpp")))
    fail(fmt::format("{}: no {}.cpp beside {}.dat", dir.string(), name, name));

  result.uses_asm = fs::exists(dir / "fr.asm");
  std::string nasm;
  if (result.uses_asm) {
    nasm = find_program(opts.nasm.empty() ? "nasm" : opts.nasm);
    if (nasm.empty())
      fail(fmt::format("{}: circom's assembly field code (fr.asm) needs nasm, which was not "
                       "found{}: install nasm (apt-get install nasm), or compile the circuit with "
                       "`circom --c --no_asm` and build that",
                       dir.string(), opts.nasm.empty() ? " on PATH" : " at " + opts.nasm));
    if (!cpu_has_adx_bmi2())
      fail(fmt::format("{}: circom's assembly field code (fr.asm) needs a CPU with ADX and BMI2, "
                       "and this one has not: compile the circuit with `circom --c --no_asm` and "
                       "build that",
                       dir.string()));
    progress("field code: circom's x86-64 assembly (fr.asm, nasm; the object needs ADX and BMI2)");
  } else {
    progress("field code: circom's --no_asm C++ (no fr.asm in the directory; slower than the "
             "assembly, which needs nasm and ADX/BMI2)");
  }
  std::string cxx = opts.cxx;
  if (cxx.empty()) {
    const char* env = std::getenv("CXX");
    cxx = env && *env ? env : "c++";
  }
  if (find_program(cxx).empty())
    fail(fmt::format("no C++ compiler: {} not found (install g++, or give --cxx)", cxx));

  fs::path output = opts.output.empty() ? dir.parent_path() / (name + ".so") : fs::path(opts.output);
  if (output.parent_path().empty()) output = fs::path(".") / output;
  fs::path sym = opts.sym.empty() ? dir.parent_path() / (name + ".sym") : fs::path(opts.sym);
  if (!opts.sym.empty() && !fs::exists(sym)) fail(fmt::format("{}: no such .sym file", opts.sym));

  std::string tmpl = (fs::temp_directory_path() / ("proofline-witness-" + name + "-XXXXXX")).string();
  if (!mkdtemp(tmpl.data())) fail(fmt::format("cannot make a build directory: {}", std::strerror(errno)));
  const fs::path work = tmpl;

  // Input names: signals [start, start + inputs) of the .sym file.
  const fs::path circuit_cpp = dir / (name + ".cpp");
  std::string names_cpp =
      "#include <cstdint>\nstruct proofline_wg_name { uint64_t signal; const char* name; };\n"
      "extern const proofline_wg_name proofline_wg_names[] = {\n";
  size_t named = 0;
  if (fs::exists(sym)) {
    const uint64_t start = generated_constant(circuit_cpp, "get_main_input_signal_start");
    const uint64_t count = generated_constant(circuit_cpp, "get_main_input_signal_no");
    for (const auto& [signal, n] : input_names(sym, start, count)) {
      names_cpp += fmt::format("  {{{}u, {}}},\n", signal, cxx_string(n));
      ++named;
    }
    progress(fmt::format("input names: {} (names {} input values)", sym.string(), named));
  } else {
    progress(fmt::format("input names: none ({} not found; circom --sym writes it): errors count "
                         "missing inputs instead of naming them",
                         sym.string()));
  }
  result.named_inputs = named > 0;
  names_cpp += "  {0, nullptr}};\n";
  names_cpp += fmt::format("extern const uint64_t proofline_wg_name_count = {};\n", named);

  write_text(work / "proofline_wg_entry.cpp", entry_source());
  write_text(work / "proofline_wg_abi.h", abi_header());
  write_text(work / "proofline_wg_capture.hpp", capture_header());
  write_text(work / "proofline_wg_names.cpp", names_cpp);
  write_text(work / "proofline_wg_dat.S",
             fmt::format(".section .rodata\n.balign 64\n"
                         ".globl proofline_wg_dat\n.hidden proofline_wg_dat\nproofline_wg_dat:\n"
                         ".incbin \"{}\"\n"
                         ".globl proofline_wg_dat_end\n.hidden proofline_wg_dat_end\n"
                         "proofline_wg_dat_end:\n.byte 0\n"
                         ".section .note.GNU-stack,\"\",@progbits\n",
                         asm_string(fs::absolute(dir / (name + ".dat")).string())));
  write_text(work / "exports.map", "{ global: proofline_wg_*; local: *; };\n");

  const std::vector<std::string> common = {"-std=c++17", "-O3", "-fPIC", "-fvisibility=hidden",
                                           "-w", "-I" + dir.string(), "-I" + work.string()};
  std::vector<step> steps;
  auto compile = [&](const std::string& label, const fs::path& src, const std::string& obj,
                     bool capture) {
    step s{label, {cxx}, work / (obj + ".log")};
    s.argv.insert(s.argv.end(), common.begin(), common.end());
    if (capture) {
      s.argv.push_back("-include");
      s.argv.push_back((work / "proofline_wg_capture.hpp").string());
    }
    if (!capture) s.argv.push_back(fmt::format("-DPROOFLINE_WG_ASM={}", result.uses_asm ? 1 : 0));
    s.argv.insert(s.argv.end(), {"-c", src.string(), "-o", (work / obj).string()});
    steps.push_back(std::move(s));
  };
  // The circuit first: by far the longest compile.
  compile("compiling " + name + ".cpp", circuit_cpp, name + ".o", true);
  compile("compiling calcwit.cpp", dir / "calcwit.cpp", "calcwit.o", true);
  compile("compiling fr.cpp", dir / "fr.cpp", "fr.o", true);
  compile("compiling proofline's entry point", work / "proofline_wg_entry.cpp", "entry.o", false);
  compile("compiling the input names", work / "proofline_wg_names.cpp", "names.o", false);
  steps.push_back({"assembling " + name + ".dat",
                   {cxx, "-c", (work / "proofline_wg_dat.S").string(), "-o",
                    (work / "dat.o").string()},
                   work / "dat.log"});
  if (result.uses_asm)
    steps.push_back({"assembling fr.asm (nasm)",
                     {nasm, "-felf64", (dir / "fr.asm").string(), "-o", (work / "fr_asm.o").string()},
                     work / "fr_asm.log"});
  const unsigned jobs =
      opts.jobs ? opts.jobs : std::max(1u, std::thread::hardware_concurrency());
  try {
    run_steps(steps, jobs, progress, true);
    const fs::path partial = output.string() + ".partial";
    step link{"linking " + output.string(), {cxx, "-shared", "-o", partial.string()},
              work / "link.log"};
    for (const char* o : {"entry.o", "names.o", "dat.o", "calcwit.o", "fr.o"})
      link.argv.push_back((work / o).string());
    link.argv.push_back((work / (name + ".o")).string());
    if (result.uses_asm) link.argv.push_back((work / "fr_asm.o").string());
    link.argv.push_back("-Wl,--version-script=" + (work / "exports.map").string());
    for (const char* f : {"-Wl,-z,noexecstack", "-Wl,--no-undefined", "-lgmp", "-lpthread"})
      link.argv.push_back(f);
    run_steps({link}, 1, progress, true);
    fs::rename(partial, output, ec);
    if (ec) fail(fmt::format("{}: cannot write: {}", output.string(), ec.message()));
  } catch (const std::exception& e) {
    fail(fmt::format("witness build of {}: {}\n(intermediate files kept in {})", dir.string(),
                     e.what(), work.string()));
  }
  if (!opts.keep_temp) fs::remove_all(work, ec);
  result.output = output.string();
  result.seconds = seconds_since(t0);
  return result;
}

}  // namespace proofline::witness
