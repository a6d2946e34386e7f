"""The Python package proves the bundled example; snarkjs verifies each proof.

    PROOFLINE_LIBRARY=build/lib/libproofline.so python3 -m unittest discover -s python/tests
"""
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import unittest

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(repo, "python"))

import proofline  # noqa: E402

examples = os.path.join(repo, "examples")
options = {"backend": "cpu", "cpu-threads": 2, "memory-budget": "2G"}


def witness(i):
    with open(os.path.join(examples, "witness_%d.wtns" % i), "rb") as f:
        return f.read()


def snarkjs_verifies(proof, public):
    with tempfile.TemporaryDirectory() as d:
        p, q = os.path.join(d, "proof.json"), os.path.join(d, "public.json")
        with open(p, "w") as f:
            json.dump(proof, f)
        with open(q, "w") as f:
            json.dump(public, f)
        out = subprocess.run([os.path.join(repo, "node_modules", ".bin", "snarkjs"), "groth16",
                              "verify", os.path.join(examples, "verification_key.json"), q, p],
                             capture_output=True, text=True)
        return out.returncode == 0 and "OK" in out.stdout


class ProverTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.runtime = proofline.Runtime(options)
        cls.prover = proofline.Prover(os.path.join(examples, "circuit.zkey"), runtime=cls.runtime)

    @classmethod
    def tearDownClass(cls):
        cls.prover.close()
        cls.runtime.close()

    def test_the_bundled_example_proves_and_snarkjs_verifies(self):
        proof, public = self.prover.prove(witness(0))
        self.assertEqual(proof["protocol"], "groth16")
        self.assertEqual(proof["curve"], "bn128")
        self.assertEqual(len(public), self.prover.public_count)
        self.assertTrue(snarkjs_verifies(proof, public))
        self.assertEqual(self.prover.last_backend, "cpu:0")

    def test_threads_prove_at_once(self):
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda i: self.prover.prove(witness(i)), range(4)))
        for i, (proof, public) in enumerate(results):
            self.assertTrue(snarkjs_verifies(proof, public), "witness %d" % i)
        self.assertEqual(len({json.dumps(p) for _, p in results}), 4)  # four different witnesses

    def test_a_key_from_bytes_proves_like_its_file(self):
        with open(os.path.join(examples, "circuit.zkey"), "rb") as f:
            data = f.read()
        with proofline.Prover(data, runtime=self.runtime) as p:
            proof, public = p.prove(witness(1))
        self.assertTrue(snarkjs_verifies(proof, public))

    def test_a_witness_that_does_not_fit_raises_naming_it(self):
        w = witness(2)
        with self.assertRaises(proofline.InputError) as caught:
            self.prover.prove(w[:-7])
        self.assertTrue(str(caught.exception).startswith("witness: truncated"), str(caught.exception))

    def test_a_prover_without_options_uses_the_shared_runtime(self):
        # As the README writes it, in a fresh interpreter: the first Prover
        # loads the library and starts the runtime from PROOFLINE_OPTIONS.
        code = ("import json, sys; sys.path.insert(0, %r); from proofline import Prover; "
                "p = Prover(%r); proof, public = p.prove(open(%r, 'rb').read()); "
                "print(json.dumps([proof, public]))") % (
                    os.path.join(repo, "python"), os.path.join(examples, "circuit.zkey"),
                    os.path.join(examples, "witness_3.wtns"))
        env = dict(os.environ, PROOFLINE_OPTIONS=json.dumps(options))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=120, env=env)
        self.assertEqual(out.returncode, 0, out.stderr)
        proof, public = json.loads(out.stdout)
        self.assertTrue(snarkjs_verifies(proof, public))

    def test_bad_options_raise(self):
        with self.assertRaises(proofline.ProoflineError) as caught:
            proofline.Runtime({"backend": "quantum"})
        self.assertEqual(caught.exception.code, proofline.ERROR_ARGUMENT)


if __name__ == "__main__":
    unittest.main()
