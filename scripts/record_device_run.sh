#!/usr/bin/env bash
# Record a device call's output under docs/results/, as the H200 returned it or computed from it by the
# committed scripts (never edited by hand). Run here, from the repo root, on the folder the device call's $OUT
# came back as:
#
#   bash scripts/record_device_run.sh DIR SHA [OLD_SUITE_RUN]
#
# DIR: the call's $OUT (its gpu_tests.xml, suite.json, suite.run.json, throughput_figures.json, env.txt, call.txt;
# whichever are there). The GPU tests' record needs the call's command: COMMAND="..." or a first line
# "command: ..." in DIR/call.txt. SHA: the commit the call ran (COMMIT=...), shortened to 7 characters in the file names.
# OLD_SUITE_RUN: a committed suite run (docs/results/suite_paper_run_<old>.json) to compare the baselines with.
# Writes, for what DIR holds:
#   gpu_tests.xml           -> gpu_tests_<sha>.json                    (scripts/junit_summary.py)
#   gpu_timed-*.xml, gpu_sweep-*.xml, gpu_ray.xml (scripts/device_gpu_suite.sh's shards, from one call or several
#   gathered into DIR) with gpu_collected.txt -> gpu_suite_<sha>.json (scripts/junit_summary.py --collected: every
#                              GPU test id with its outcome, and those collected but run in no shard under not_run)
#   suite.json              -> suite_paper_<sha>.json                  (copied)
#   suite.run.json          -> suite_paper_run_<sha>.json              (copied)
#                           -> baseline_figures_paper_<sha>.json / .md (scripts/baseline_figures.py)
#                           -> suite_baseline_ratio_<sha>_vs_<old>.json (scripts/compare_suites.py, with OLD_SUITE_RUN)
#   throughput_figures.json -> throughput_figures_<sha>.json           (copied)
#   copy_bandwidth.json     -> copy_bandwidth_<sha>.json               (copied; scripts/copy_bandwidth.py wrote it)
# and prints each file it wrote. An existing file is never overwritten (exit 1: pick it apart by hand first).
# LABEL=word (lower-case letters, digits, hyphens) names a second record of the same commit, such as an A/B's other
# side run with other settings: <sha>-<word> in every file name (say in the index what the label stands for).
# Index each one in docs/results/README.md yourself: what it shows is a sentence, not a figure.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 DIR SHA [OLD_SUITE_RUN]" >&2; exit 2; }
dir=$1 sha=${2:0:7} old=${3:-}
[[ $sha =~ ^[0-9a-f]{7}$ ]] || { echo "$2: not a commit hash (7 or more hex digits)" >&2; exit 2; }
[[ ${LABEL:-} =~ ^[a-z0-9-]*$ ]] || { echo "LABEL=$LABEL: lower-case letters, digits and hyphens only" >&2; exit 2; }
tag=$sha${LABEL:+-$LABEL}
[ -d "$dir" ] || { echo "$dir: no such folder (the device call's \$OUT, fetched)" >&2; exit 2; }
results=${RESULTS_DIR:-docs/results}
py=${PYTHON:-python3}
wrote=()

target() {  # the file a record goes to; refuses one that exists
  if [ -e "$results/$1" ]; then
    echo "$results/$1 exists already: not overwritten" >&2
    exit 1
  fi
  echo "$results/$1"
}

if [ -f "$dir/gpu_tests.xml" ]; then
  out=$(target "gpu_tests_$tag.json")
  # the device call's command: $COMMAND, or the call's own record of it (a first line "command: ..." in call.txt)
  command=${COMMAND:-$(sed -n '1s/^command: //p' "$dir/call.txt" 2>/dev/null || true)}
  [ -n "$command" ] || { echo "the device call's command is unknown: set COMMAND=\"...\" (or start call.txt with \"command: ...\")" >&2; exit 1; }
  [ -f "$dir/env.txt" ] || { echo "$dir/env.txt is missing: the GPU, driver and date of the run (device_checks.sh writes it)" >&2; exit 1; }
  $py scripts/junit_summary.py "$dir/gpu_tests.xml" --commit "$sha" --command "$command" --env "$dir/env.txt" --output "$out"
  wrote+=("$out")
fi
suite_xmls=()
for f in "$dir"/gpu_timed-*.xml "$dir"/gpu_sweep-*.xml "$dir"/gpu_ray.xml; do
  [ -f "$f" ] && suite_xmls+=("$f")
done
if [ ${#suite_xmls[@]} -gt 0 ]; then
  [ -f "$dir/gpu_collected.txt" ] || { echo "$dir/gpu_collected.txt is missing: the suite's checklist (device_gpu_suite.sh collect)" >&2; exit 1; }
  [ -f "$dir/env.txt" ] || { echo "$dir/env.txt is missing: the GPU, driver and date of the run (device_gpu_suite.sh writes it)" >&2; exit 1; }
  command=${COMMAND:-$(sed -n '1s/^command: //p' "$dir/call.txt" 2>/dev/null || true)}
  [ -n "$command" ] || { echo "the device calls' commands are unknown: set COMMAND=\"...\" (or start call.txt with \"command: ...\")" >&2; exit 1; }
  out=$(target "gpu_suite_$tag.json")
  $py scripts/junit_summary.py "${suite_xmls[@]}" --collected "$dir/gpu_collected.txt" --commit "$sha" --command "$command" \
    --env "$dir/env.txt" --output "$out"
  $py -c 'import json, sys; print("gpu suite:", json.load(open(sys.argv[1]))["counts"])' "$out"
  wrote+=("$out")
fi
if [ -f "$dir/suite.json" ]; then
  out=$(target "suite_paper_$tag.json")
  cp "$dir/suite.json" "$out"
  wrote+=("$out")
fi
if [ -f "$dir/suite.run.json" ]; then
  run=$(target "suite_paper_run_$tag.json")
  cp "$dir/suite.run.json" "$run"
  wrote+=("$run")
  figures=$(target "baseline_figures_paper_$tag.json")
  $py scripts/baseline_figures.py "$run" --output "$figures"
  wrote+=("$figures")
  [ -f "${figures%.json}.md" ] && wrote+=("${figures%.json}.md")
  if [ -n "$old" ]; then
    old_sha=$(basename "$old" .json)
    old_sha=${old_sha##*_}
    ratio=$(target "suite_baseline_ratio_${tag}_vs_${old_sha}.json")
    $py scripts/compare_suites.py --old "$old" --new "$run" --output "$ratio"
    wrote+=("$ratio")
  fi
fi
if [ -f "$dir/throughput_figures.json" ]; then
  out=$(target "throughput_figures_$tag.json")
  cp "$dir/throughput_figures.json" "$out"
  wrote+=("$out")
fi
if [ -f "$dir/copy_bandwidth.json" ]; then
  out=$(target "copy_bandwidth_$tag.json")
  cp "$dir/copy_bandwidth.json" "$out"
  wrote+=("$out")
fi
[ ${#wrote[@]} -gt 0 ] || { echo "$dir holds none of gpu_tests.xml, gpu_timed-*/gpu_sweep-*/gpu_ray.xml, suite.json, suite.run.json, throughput_figures.json, copy_bandwidth.json" >&2; exit 1; }
printf 'wrote %s\n' "${wrote[@]}"
