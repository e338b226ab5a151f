#!/usr/bin/env bash
# The package as users get it: build the sdist and the wheel (the wheel from the sdist), check
# what the wheel holds, install it (not editable, no system site-packages) in a fresh venv outside
# the checkout, and use it from an empty directory: the console script, the packaged models
# playing whole games, a smoke training from the shipped config by name.
#   .ci/wheel_check.sh      (any Python with `build`, e.g. after `pip install -e ".[dev]"`)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
start=$SECONDS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== build: sdist, then the wheel from it"
python -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 || { tail -40 "$work/build.log"; exit 1; }
sdist=$(ls "$work"/dist/*.tar.gz)
wheel=$(ls "$work"/dist/*.whl)
echo "built $(basename "$sdist") and $(basename "$wheel")"

echo "== what they hold"
python - "$sdist" "$wheel" "$repo" <<'PY'
import sys
import tarfile
import zipfile
from pathlib import Path

sdist, wheel, repo = sys.argv[1], sys.argv[2], Path(sys.argv[3])
names = zipfile.ZipFile(wheel).namelist()
problems = []
tops = sorted({n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")})
if tops != ["agents", "bastra_env"]:
    problems.append(f"top-level entries {tops}, expected only agents and bastra_env")
for banned in ("tests", "runs", "benchmarks", "examples"):  # as a folder, at any depth
    if any(banned in n.split("/")[:-1] for n in names):
        problems.append(f"the wheel holds a {banned}/ folder")
required = ["agents/py.typed", "bastra_env/py.typed", "agents/cli.py", "agents/train.py"]
required += [f"agents/pretrained/{p.name}" for p in sorted((repo / "agents/pretrained").glob("*.*"))]
required += [f"agents/configs/{p.name}" for p in sorted((repo / "agents/configs").glob("*.yaml"))]
web = repo / "agents/apps/web"  # the web app's page
required += [f"agents/{p.relative_to(repo / 'agents')}" for p in web.rglob("*")
             if p.is_file() and "__pycache__" not in p.parts]
if not any(r.startswith("agents/pretrained/") for r in required):
    problems.append("no agents/pretrained/*.pt in the checkout to ship")
problems += [f"the wheel lacks {r}" for r in required if r not in names]
entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
if "bastra = agents.cli:main" not in zipfile.ZipFile(wheel).read(entry).decode():
    problems.append("no bastra console script in entry_points.txt")
held = tarfile.open(sdist).getnames()
root = held[0].split("/")[0]
for r in [r for r in required if r.startswith("agents/configs/")]:
    if f"{root}/{r}" not in held:
        problems.append(f"the sdist lacks {r}")
if any(n.startswith(f"{root}/runs/") for n in held):
    problems.append("the sdist holds runs/")
if problems:
    sys.exit("wheel check failed:\n  " + "\n  ".join(problems))
print(f"{len(names)} files in the wheel; {len(required)} required ones present, none banned")
PY

echo "== a fresh venv outside the checkout, the wheel alone"
python -m venv "$work/venv"
pip_log="$work/pip.log"
"$work/venv/bin/python" -m pip install --quiet torch==2.13.0 >"$pip_log" 2>&1 \
    && "$work/venv/bin/python" -m pip install --quiet "$wheel" >>"$pip_log" 2>&1 \
    || { tail -40 "$pip_log"; exit 1; }
"$work/venv/bin/python" -m pip list 2>/dev/null | grep -E "^(bastra-rl|torch) "
mkdir "$work/empty"
cd "$work/empty"
export PATH="$work/venv/bin:$PATH"
unset PYTHONPATH
export OMP_NUM_THREADS=1

echo "== bastra --help"
bastra --help >"$work/help.txt"
head -3 "$work/help.txt"
bastra bench --list >"$work/bench.txt"
grep "not installed with the package" "$work/bench.txt" >/dev/null || { cat "$work/bench.txt"; exit 1; }
echo "== the packaged models play whole games"
python "$repo/.ci/wheel_smoke.py" "$repo"
echo "== bastra train --config smoke"
bastra train --config smoke --run-dir "$work/empty/run" 2>&1 | tail -4
test -f "$work/empty/run/final.pt" || { echo "no final.pt"; exit 1; }
test -z "$(ls -A "$work/empty" | grep -v '^run$')" || { echo "stray files:"; ls -A; exit 1; }
echo "wheel check passed in $((SECONDS - start)) s"
