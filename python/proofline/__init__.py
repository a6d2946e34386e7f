"""Groth16 proofs from snarkjs proving keys and witnesses on proofline's
runtime, through libproofline's C API (ctypes; no compiled extension).

    from proofline import Prover
    proof, public_signals = Prover("circuit.zkey").prove(open("w.wtns", "rb").read())
    # or from the circuit's inputs, with a `proofline witness build` generator:
    proof, public_signals = Prover("circuit.zkey").prove_input("circuit.so", {"a": "3", "b": "11"})
"""
import ctypes
import ctypes.util
import json
import os
import threading

__all__ = ["Runtime", "Prover", "ProoflineError", "InputError", "ProveError", "library"]

OK, ERROR_ARGUMENT, ERROR_INPUT, ERROR_PROVE, ERROR_CANCELLED, ERROR_BACKEND, ERROR_STATE = range(7)
PRIORITIES = {"low": 0x10, "normal": 0x00, "high": 0x20, "critical": 0x30}


class ProoflineError(Exception):
    """A failure reported by libproofline: `code` is its status, the message names the problem."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class InputError(ProoflineError):
    """The key or witness is unreadable or does not fit the key."""


class ProveError(ProoflineError):
    """Proving failed on every backend it was tried on."""


def _error(code, message):
    kind = {ERROR_INPUT: InputError, ERROR_PROVE: ProveError}.get(code, ProoflineError)
    return kind(code, message)


_lib = None
_lib_lock = threading.Lock()


def _find_library():
    path = os.environ.get("PROOFLINE_LIBRARY")
    if path:
        return path
    found = ctypes.util.find_library("proofline")
    if found:
        return found
    for candidate in ("/usr/local/lib/libproofline.so", "/usr/lib/libproofline.so"):
        if os.path.exists(candidate):
            return candidate
    raise OSError("libproofline.so not found: set PROOFLINE_LIBRARY to its path, or install "
                  "proofline (cmake --install) where the loader finds it")


def library():
    """libproofline, loaded once, with the C API's signatures declared."""
    global _lib
    with _lib_lock:
        if _lib is None:
            lib = ctypes.CDLL(_find_library())
            p, c, sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
            sigs = {
                "proofline_version": ([], c),
                "proofline_open": ([c, ctypes.POINTER(p), ctypes.c_char_p, sz], ctypes.c_int),
                "proofline_close": ([p], None),
                "proofline_key_load_file": ([p, c, ctypes.POINTER(p), ctypes.c_char_p, sz], ctypes.c_int),
                "proofline_key_load": ([p, ctypes.c_char_p, sz, ctypes.POINTER(p), ctypes.c_char_p, sz],
                                       ctypes.c_int),
                "proofline_key_release": ([p], None),
                "proofline_key_curve": ([p], c),
                "proofline_key_public_count": ([p], sz),
                "proofline_prove": ([p, ctypes.c_char_p, sz, ctypes.POINTER(p)], ctypes.c_int),
                "proofline_prove_input": ([p, c, ctypes.c_char_p, sz, ctypes.POINTER(p)], ctypes.c_int),
                "proofline_proof_json": ([p], c),
                "proofline_proof_public_json": ([p], c),
                "proofline_proof_error": ([p], c),
                "proofline_proof_backend": ([p], c),
                "proofline_proof_ms": ([p], ctypes.c_double),
                "proofline_proof_free": ([p], None),
            }
            for name, (args, res) in sigs.items():
                fn = getattr(lib, name)
                fn.argtypes = args
                fn.restype = res
            _lib = lib
        return _lib


class _Closes:
    """close() at the end of a with block, and when garbage-collected."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Runtime(_Closes):
    """One proving runtime: its backends, memory budget and resident keys.

    `options` is a dict of proofline_open's options ({"backend": "cpu"}).
    Close it (or use it as a context manager) to stop it; Provers of a
    closed runtime raise ProoflineError."""

    def __init__(self, options=None):
        lib = library()
        self._handle = ctypes.c_void_p()
        err = ctypes.create_string_buffer(1024)
        text = json.dumps(options or {}).encode()
        rc = lib.proofline_open(text, ctypes.byref(self._handle), err, len(err))
        if rc != OK:
            raise _error(rc, err.value.decode(errors="replace"))

    def close(self):
        if self._handle:
            library().proofline_close(self._handle)
            self._handle = ctypes.c_void_p()


_shared = None
_shared_lock = threading.Lock()  # apart from _lib_lock, which Runtime() takes through library()


def _shared_runtime():
    global _shared
    with _shared_lock:
        if _shared is None:
            options = json.loads(os.environ.get("PROOFLINE_OPTIONS") or "{}")
            _shared = Runtime(options)
        return _shared


class Prover(_Closes):
    """A proving key loaded into a runtime, resident until the Prover goes.

    `zkey` is the path of a .zkey or its bytes. With `options`, the Prover
    gets a runtime of its own; without, it shares the module's runtime (from
    PROOFLINE_OPTIONS). `runtime` names a Runtime to load into instead."""

    def __init__(self, zkey, options=None, runtime=None):
        if runtime is None:
            runtime = Runtime(options) if options is not None else _shared_runtime()
        self._runtime = runtime
        self._key = ctypes.c_void_p()
        lib = library()
        err = ctypes.create_string_buffer(1024)
        if isinstance(zkey, (bytes, bytearray, memoryview)):
            data = bytes(zkey)
            rc = lib.proofline_key_load(runtime._handle, data, len(data), ctypes.byref(self._key),
                                        err, len(err))
        else:
            rc = lib.proofline_key_load_file(runtime._handle, os.fsencode(zkey),
                                             ctypes.byref(self._key), err, len(err))
        if rc != OK:
            raise _error(rc, err.value.decode(errors="replace"))
        self.curve = lib.proofline_key_curve(self._key).decode()
        self.public_count = lib.proofline_key_public_count(self._key)

    def prove_json(self, wtns):
        """Proves one witness (the .wtns bytes); returns (proof.json, public.json) text."""
        data = bytes(wtns)
        proof = ctypes.c_void_p()
        rc = library().proofline_prove(self._key, data, len(data), ctypes.byref(proof))
        return self._answer(rc, proof)

    def prove_input_json(self, generator, inputs):
        """Proves from the circuit's inputs: `inputs` is a dict (as input.json
        holds) or input.json's text, `generator` the path of the object
        `proofline witness build` made for the circuit; the witness is
        computed by the runtime. Returns (proof.json, public.json) text."""
        if isinstance(inputs, dict):
            inputs = json.dumps(inputs)
        data = inputs.encode() if isinstance(inputs, str) else bytes(inputs)
        proof = ctypes.c_void_p()
        rc = library().proofline_prove_input(self._key, os.fsencode(generator), data, len(data),
                                             ctypes.byref(proof))
        return self._answer(rc, proof)

    def prove_input(self, generator, inputs):
        """prove_input_json's proof and public signals as snarkjs writes them."""
        proof, public = self.prove_input_json(generator, inputs)
        return json.loads(proof), json.loads(public)

    def _answer(self, rc, proof):
        lib = library()
        try:
            if rc != OK:
                raise _error(rc, (lib.proofline_proof_error(proof) or b"").decode(errors="replace"))
            self.last_backend = lib.proofline_proof_backend(proof).decode()
            self.last_ms = lib.proofline_proof_ms(proof)
            return (lib.proofline_proof_json(proof).decode(),
                    lib.proofline_proof_public_json(proof).decode())
        finally:
            lib.proofline_proof_free(proof)

    def prove(self, wtns):
        """Proves one witness; returns (proof, public_signals) as snarkjs writes them."""
        proof, public = self.prove_json(wtns)
        return json.loads(proof), json.loads(public)

    def close(self):
        if self._key:
            library().proofline_key_release(self._key)
            self._key = ctypes.c_void_p()
