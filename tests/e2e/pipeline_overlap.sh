#!/usr/bin/env bash
# The result.json spans of a 4-partition job show the pipeline at work: the
# synthesis of partition k+1 starts before partition k finishes proving, and
# synthesis overlaps the proving of earlier partitions (see e2e_check.py
# overlap); with --synthesis-ahead 1, the synthesis of k+1 overlaps the
# proving of k itself (overlap-adjacent); every proof verifies.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

stage bn254 medium medium
cat >jobs.json <<'JSON'
{"jobs": [
  {"id": "pipeline", "zkey": "in/medium.zkey",
   "witnesses": ["in/medium_0.wtns", "in/medium_1.wtns", "in/medium_2.wtns", "in/medium_0.wtns"],
   "out": "out/pipeline"}
]}
JSON

# Default pacing: every synthesizer works ahead while the GPU proves.
prove run 0 run jobs.json
check result out/pipeline --id pipeline --status done --partitions 4
check overlap out/pipeline
verify "$fixtures/bn254/medium/verification_key.json" out/pipeline

# Just in time: one partition synthesized ahead, so partition k+1 is
# synthesized while partition k proves.
rm -rf out
prove run-jit 0 run jobs.json --synthesis-ahead 1
check result out/pipeline --id pipeline --status done --partitions 4
check overlap-adjacent out/pipeline
verify "$fixtures/bn254/medium/verification_key.json" out/pipeline
echo "PASS: pipeline_overlap"
