// proofline's entry point into the C++ witness code of `circom --c`.
//
// Not part of the proofline binary: `proofline witness build` writes this
// file next to the circuit's generated sources and compiles it with them
// (NAME.cpp, calcwit.cpp, fr.cpp and fr.asm) into one shared object whose
// only exported symbols are the functions of witness/abi.h. It replaces the
// main.cpp circom writes: the circuit's .dat is linked into the object
// (proofline_wg_dat, from an .incbin), the inputs arrive as field elements
// already checked against the signal table, and the witness is written to
// the caller's buffer instead of a file.
//
// Failures: the generated code reports a failed circuit assert on std::cout
// (redirected to a per-thread buffer by proofline_wg_capture.hpp, which the
// build force-includes into the circuit's sources) and then calls assert(),
// that is glibc's __assert_fail; the definition below, local to the object,
// jumps back to proofline_wg_calculate, which frees the computation's
// signals and returns the message. Whatever the aborted computation held
// beyond its signals and components (temporaries of the template that
// failed) is lost: a few kilobytes per failed input.

#include <algorithm>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "circom.hpp"
#include "fr.hpp"
#include "calcwit.hpp"

#include "proofline_wg_abi.h"

#define PL_EXPORT extern "C" __attribute__((visibility("default")))

#ifndef PROOFLINE_WG_ASM
#define PROOFLINE_WG_ASM 0
#endif

#if PROOFLINE_WG_ASM
// Found by the loader without running the object: it refuses objects with
// circom's assembly on a CPU without ADX and BMI2 before they could fault.
extern "C" __attribute__((used, visibility("hidden"))) const char proofline_wg_field_code[] =
    "proofline-wg-field-code=asm";
#endif

// The circuit's .dat file, linked in by the build (proofline_wg_dat.S).
extern "C" const unsigned char proofline_wg_dat[];
extern "C" const unsigned char proofline_wg_dat_end[];

// Names of the main component's input signals by signal id, written by the
// build from the circuit's .sym file (empty without one).
struct proofline_wg_name {
  uint64_t signal;
  const char* name;
};
extern const proofline_wg_name proofline_wg_names[];
extern const uint64_t proofline_wg_name_count;

namespace {

thread_local std::ostringstream* captured = nullptr;
thread_local std::jmp_buf* trap = nullptr;
thread_local const char* trap_expr = nullptr;

std::ostringstream& capture_stream() {
  if (!captured) captured = new std::ostringstream;
  return *captured;
}

struct input_entry {
  uint64_t hash;
  uint64_t signal;  // the first value's signal id
  uint64_t size;
  const char* name;
};

struct loaded_circuit {
  Circom_Circuit* circuit = nullptr;
  std::vector<input_entry> inputs;  // by signal id
  std::string problem;              // the .dat could not be read
};

/// Reads u32 values from the .dat in order; `ok` drops to false past its end.
struct dat_reader {
  const unsigned char* p;
  const unsigned char* end;
  bool ok = true;
  void copy(void* out, std::size_t n) {
    if (std::size_t(end - p) < n) {
      ok = false;
      std::memset(out, 0, n);
      p = end;
      return;
    }
    std::memcpy(out, p, n);
    p += n;
  }
  u32 u32v() {
    u32 v;
    copy(&v, sizeof v);
    return v;
  }
};

/// One table of IO field definitions (templates' or buses'), as the .dat stores it:
/// per entry a count, then per field offset, len, lengths[len], size, busId.
IOFieldDefPair read_field_defs(dat_reader& r) {
  IOFieldDefPair p;
  p.len = r.u32v();
  if (!r.ok || p.len > 1u << 24) {
    r.ok = false;
    p.len = 0;
  }
  p.defs = static_cast<IOFieldDef*>(calloc(p.len ? p.len : 1, sizeof(IOFieldDef)));
  for (u32 j = 0; j < p.len && r.ok; ++j) {
    IOFieldDef& d = p.defs[j];
    d.offset = r.u32v();
    d.len = r.u32v();
    if (!r.ok || d.len > 1u << 16) {
      r.ok = false;
      break;
    }
    d.lengths = new u32[d.len ? d.len : 1];
    r.copy(d.lengths, d.len * sizeof(u32));
    d.size = r.u32v();
    d.busId = r.u32v();
  }
  return p;
}

loaded_circuit load() {
  loaded_circuit L;
  dat_reader r{proofline_wg_dat, proofline_wg_dat_end};
  auto* c = new Circom_Circuit;
  const u64 n_hash = get_size_of_input_hashmap();
  c->InputHashMap = new HashSignalInfo[n_hash];
  r.copy(c->InputHashMap, n_hash * sizeof(HashSignalInfo));
  c->witness2SignalList = new u64[get_size_of_witness()];
  r.copy(c->witness2SignalList, u64(get_size_of_witness()) * sizeof(u64));
  c->circuitConstants = new FrElement[get_size_of_constants() ? get_size_of_constants() : 1];
  r.copy(c->circuitConstants, u64(get_size_of_constants()) * sizeof(FrElement));
  c->busInsId2FieldInfo = nullptr;
  if (get_size_of_io_map() > 0) {
    std::vector<u32> index(get_size_of_io_map());
    r.copy(index.data(), index.size() * sizeof(u32));
    for (u32 id : index) c->templateInsId2IOSignalInfo[id] = read_field_defs(r);
    const u32 n_bus = get_size_of_bus_field_map();
    c->busInsId2FieldInfo =
        static_cast<IOFieldDefPair*>(calloc(n_bus ? n_bus : 1, sizeof(IOFieldDefPair)));
    for (u32 i = 0; i < n_bus && r.ok; ++i) c->busInsId2FieldInfo[i] = read_field_defs(r);
  }
  if (!r.ok) {
    L.problem = "the circuit's .dat data is shorter than its code expects";
    return L;
  }
  for (u64 i = 0; i < n_hash; ++i) {
    const HashSignalInfo& h = c->InputHashMap[i];
    if (h.signalid == 0) continue;  // an empty slot
    const char* name = nullptr;
    for (uint64_t k = 0; k < proofline_wg_name_count; ++k)
      if (proofline_wg_names[k].signal == h.signalid) name = proofline_wg_names[k].name;
    L.inputs.push_back({h.hash, h.signalid, h.signalsize, name});
  }
  std::sort(L.inputs.begin(), L.inputs.end(),
            [](const input_entry& a, const input_entry& b) { return a.signal < b.signal; });
  L.circuit = c;
  return L;
}

const loaded_circuit& circuit() {
  static const loaded_circuit L = load();
  return L;
}

void set_error(char* error, uint64_t size, const std::string& text) {
  if (!error || size == 0) return;
  std::size_t n = std::min<std::size_t>(text.size(), size - 1);
  std::memcpy(error, text.data(), n);
  error[n] = '\0';
}

/// Frees what one computation allocated: its signals, its components (the
/// main component's arrays, which the generated code keeps to the end) and
/// the input bookkeeping.
void release(Circom_CalcWit* ctx) {
  if (!ctx) return;
  Circom_Component& main = ctx->componentMemory[0];
  delete[] main.subcomponents;
  delete[] main.subcomponentsParallel;
  delete[] main.outputIsSet;
  delete[] main.mutexes;
  delete[] main.cvs;
  delete[] main.sbct;
  delete[] ctx->componentMemory;
  delete[] ctx->signalValues;
  // The calculator's first member, private and never freed by its destructor:
  // the flags of the inputs set (bool[input_count]).
  bool* assigned = nullptr;
  std::memcpy(&assigned, static_cast<const void*>(ctx), sizeof assigned);
  delete[] assigned;
  delete ctx;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

// Where the circuit's std::cout goes (proofline_wg_capture.hpp): the calling
// thread's buffer, read back when the computation fails.
namespace std {
__attribute__((visibility("hidden"))) ostream& proofline_wg_cout() { return capture_stream(); }
}  // namespace std

// glibc's assert() calls this; the object's own definition (every symbol but
// the ABI's is local) returns to the computation in progress on this thread.
extern "C" __attribute__((visibility("hidden"))) void __assert_fail(const char* expr, const char*,
                                                                    unsigned int,
                                                                    const char*) noexcept {
  if (trap) {
    trap_expr = expr;
    std::longjmp(*trap, 1);
  }
  std::fprintf(stderr, "proofline witness generator: assertion failed outside a computation: %s\n",
               expr);
  std::abort();
}

PL_EXPORT uint32_t proofline_wg_abi_version(void) { return PROOFLINE_WG_ABI_VERSION; }
PL_EXPORT uint32_t proofline_wg_uses_asm(void) { return PROOFLINE_WG_ASM; }
PL_EXPORT uint32_t proofline_wg_field_bytes(void) { return Fr_N64 * 8; }
PL_EXPORT void proofline_wg_prime(uint8_t* out) { std::memcpy(out, Fr_q.longVal, Fr_N64 * 8); }
PL_EXPORT uint64_t proofline_wg_witness_count(void) { return get_size_of_witness(); }
PL_EXPORT uint64_t proofline_wg_signal_count(void) { return get_total_signal_no(); }
PL_EXPORT uint64_t proofline_wg_input_count(void) { return get_main_input_signal_no(); }

PL_EXPORT uint64_t proofline_wg_work_bytes(void) {
  return uint64_t(get_total_signal_no()) * sizeof(FrElement) +
         uint64_t(get_number_of_components()) * (sizeof(Circom_Component) + 64) +
         uint64_t(get_main_input_signal_no()) * (sizeof(bool) + sizeof(FrElement));
}

PL_EXPORT uint32_t proofline_wg_input_signals(void) {
  return static_cast<uint32_t>(circuit().inputs.size());
}

PL_EXPORT int proofline_wg_input_signal(uint32_t i, proofline_wg_input* out) {
  const loaded_circuit& L = circuit();
  if (i >= L.inputs.size() || !out) return 1;
  const input_entry& e = L.inputs[i];
  out->hash = e.hash;
  out->offset = e.signal - get_main_input_signal_start();
  out->size = e.size;
  out->name = e.name;
  return 0;
}

PL_EXPORT int proofline_wg_calculate(const uint8_t* inputs, uint8_t* witness, char* error,
                                     uint64_t error_size) {
  const loaded_circuit& L = circuit();
  if (!L.circuit) {
    set_error(error, error_size, L.problem);
    return 1;
  }
  const uint32_t n8 = Fr_N64 * 8;
  std::ostringstream& log = capture_stream();
  log.str("");
  log.clear();
  // Survives the jump back from __assert_fail (set before setjmp, read after).
  static thread_local Circom_CalcWit* ctx = nullptr;
  ctx = nullptr;
  std::jmp_buf env;
  trap = &env;
  trap_expr = nullptr;
  if (setjmp(env) != 0) {
    trap = nullptr;
    std::string text = trim(log.str());
    if (text.empty()) text = std::string("assertion failed: ") + (trap_expr ? trap_expr : "?");
    set_error(error, error_size, text);
    release(ctx);
    ctx = nullptr;
    return 1;
  }
  int status = 0;
  try {
    ctx = new Circom_CalcWit(L.circuit);
    if (get_main_input_signal_no() == 0) ctx->tryRunCircuit();
    const uint64_t start = get_main_input_signal_start();
    for (const input_entry& e : L.inputs)
      for (uint64_t k = 0; k < e.size; ++k) {
        FrElement v;
        v.shortVal = 0;
        v.type = Fr_LONG;
        std::memcpy(v.longVal, inputs + (e.signal - start + k) * n8, n8);
        // The last input starts the computation.
        ctx->setInputSignal(e.hash, static_cast<uint>(k), v);
      }
    if (ctx->getRemaingInputsToBeSet() != 0) {
      set_error(error, error_size, "not every input signal was set");
      status = 1;
    } else {
      for (uint64_t i = 0; i < get_size_of_witness(); ++i) {
        FrElement v;
        ctx->getWitness(static_cast<uint>(i), &v);
        Fr_toLongNormal(&v, &v);
        std::memcpy(witness + i * n8, v.longVal, n8);
      }
    }
  } catch (const std::exception& e) {
    std::string text = trim(log.str());
    set_error(error, error_size, text.empty() ? e.what() : text + "; " + e.what());
    status = 1;
  }
  trap = nullptr;
  release(ctx);
  ctx = nullptr;
  return status;
}
