#!/usr/bin/env bash
# docs/SCALE.md stays true: its Slurm scripts pass bash -n (cli.slurm_job runs them on a one-node
# Slurm cluster, as root: label slurm), its Kubernetes manifest parses as
# YAML (with PyYAML, and with our subset parser, which must agree) as Indexed Jobs, and its local
# xargs -P example runs on a generated job and gives analyze DIR's job report.
source "$(dirname "$0")/../testlib.bash"
here=$(cd "$(dirname "$0")" && pwd)
doc="$fixtures/../../docs/SCALE.md"
block() {  # the fenced block whose info string is "$1"
  awk -v tag="$1" '$0 == "```" tag {on=1; next} on && /^```/ {exit} on {print}' "$doc"
}
cd "$dir"
block "bash slurm" > map.sh
block "yaml k8s" > job.yaml
block "bash local" > local.sh
[ -s map.sh ] && [ -s job.yaml ] && [ -s local.sh ] && ok || fail "SCALE.md has the slurm, k8s and local blocks"
bash -n map.sh && ok || fail "Slurm script: bash -n"
block "bash slurm-submit" > submit.sh
block "bash slurm-rerun" > rerun.sh
[ -s submit.sh ] && [ -s rerun.sh ] && bash -n submit.sh && bash -n rerun.sh && ok || fail "Slurm submit and rerun blocks: bash -n"
grep -q -- '--dependency=afterok:' submit.sh && grep -q -- '--dependency=afterok:' rerun.sh && ok || fail "the merge waits for the map (afterok)"
grep -q '^#SBATCH --job-name=' map.sh && grep -q 'SLURM_ARRAY_TASK_ID' map.sh && ok || fail "Slurm script is a job-array task"
python3 "$here/yaml_subset.py" job.yaml > subset.json && ok || fail "manifest in the YAML subset"
python3 - subset.json job.yaml <<'EOF_PY' && ok || fail "manifest: an Indexed Job and the merge Job"
import json, sys
docs = json.load(open(sys.argv[1]))
try:
    import yaml
    with open(sys.argv[2]) as f:
        assert list(yaml.safe_load_all(f)) == docs, "PyYAML reads it otherwise"
except ImportError:
    print("scale_docs: no PyYAML; the subset parser alone checked the manifest")
assert [d["kind"] for d in docs] == ["Job", "Job"], docs
mapper, merger = docs
assert mapper["spec"]["completionMode"] == "Indexed" and mapper["spec"]["completions"] >= 1
cmd = mapper["spec"]["template"]["spec"]["containers"][0]["command"]
assert "JOB_COMPLETION_INDEX" in cmd[-1] and "tracegate analyze" in cmd[-1], cmd
assert "tracegate merge" in merger["spec"]["template"]["spec"]["containers"][0]["command"][-1]
EOF_PY
# The local example, with tracegate on the PATH.
mkdir bin && ln -s "$tg" bin/tracegate
python3 "$fixtures/../gen/gen_ranks.py" traces --ranks 3 >/dev/null || fail "generator"
PATH="$dir/bin:$PATH" bash -e local.sh && ok || fail "the xargs -P example runs"
"$tg" analyze traces -q -o direct.json || fail "analyze DIR"
python3 - job.json direct.json <<'EOF_PY' && ok || fail "the example's job report is analyze DIR's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert (a["job"].pop("built_from"), b["job"].pop("built_from")) == ("reports", "traces")
for r in a["ranks"] + b["ranks"]:
    r.pop("rank_source")  # file name vs distributedInfo until the rank's report names its rank
assert a == b, [k for k in a if a[k] != b.get(k)]
EOF_PY
[ -s job.md ] && grep -q "### Ranks" job.md && ok || fail "the example's Markdown"
finish scale_docs
