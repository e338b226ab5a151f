"""Training throughput: environment steps and learner samples per second, 2p and 4p teams.

    python benchmarks/train_speed.py [--steps 60000] [--threads 1 2] [--json docs/train_speed.json]

Runs ``agents.train`` (``train.py``) with the shipped configs (``2p``, ``4p_teams``:
self-play, snapshot pool and built-in opponents) for a short budget, with evaluation and the
imitation warm start off, and reads the per-update figures from its ``metrics.csv``. The first
update (interpreter and cache warm-up) is left out. An env step is one play by any seat; a
learner sample is a play recorded for learning (pool and built-in seats are not). The breakdown
shows where an update's time goes (``train.TIMED_PARTS``). ``--json PATH`` writes the figures
too: ``docs/train_speed.json`` is the file the README and the speed page quote
(``docs/figures.py``).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import itertools
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import agents.train as train  # noqa: E402


def measure(config: str, steps: int, threads: int | str) -> dict[str, float]:
    """Env steps/s, learner samples/s, updates timed, and the seconds spent in each part of an
    update (``train.TIMED_PARTS``), over all updates but the first."""
    with tempfile.TemporaryDirectory() as run_dir:
        train.main(
            ["--config", config, "--run-dir", run_dir, "--total-env-steps", str(steps),
             "--eval-every", "0", "--eval-deals", "1", "--eval-opponents", "random",
             "--imitation-samples", "0", "--threads", str(threads)]
        )  # fmt: skip
        rows = list(csv.DictReader((Path(run_dir) / "metrics.csv").open()))
    found = dict.fromkeys(["steps", "samples", "seconds", *train.TIMED_PARTS], 0.0)
    for previous, row in itertools.pairwise(rows):
        plays = int(row["env_steps"]) - int(previous["env_steps"])
        found["steps"] += plays
        found["samples"] += int(row["samples"]) - int(previous["samples"])
        found["seconds"] += plays / float(row["steps_per_s"])
        for part in train.TIMED_PARTS:
            found[part] += float(row[f"{part}_s"])
    found["updates"] = len(rows) - 1
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60_000)
    parser.add_argument(
        "--threads", nargs="+", default=["2"], help='counts to measure, or "auto" (default: 2)'
    )
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    runs = []
    for threads in args.threads:
        results = {}
        for name, config in (("2p", "2p"), ("4p teams", "4p_teams")):
            results[name] = measure(config, args.steps, threads)
        runs.append({"threads": int(threads) if threads.isdigit() else threads, "tables": results})
    parts = "".join(f" {part + ' %':>11}" for part in train.TIMED_PARTS)
    print(
        f"\n{'table':<10} {'threads':>7} {'env steps/s':>12} {'samples/s':>11} {'updates':>8}"
        f"{parts}"
    )
    for run in runs:
        for name, r in run["tables"].items():
            shares = "".join(
                f" {100 * r[part] / r['seconds']:>11.1f}" for part in train.TIMED_PARTS
            )
            print(
                f"{name:<10} {run['threads']:>7} {r['steps'] / r['seconds']:>12,.0f}"
                f" {r['samples'] / r['seconds']:>11,.0f} {r['updates']:>8.0f}{shares}"
            )
    print("(shares of an update's wall time: vector env steps, built-in opponents, per-action")
    print(" inputs, rollout forward passes, PPO update; the rest is bookkeeping)")
    if args.json:
        measured = {
            "command": f"python benchmarks/train_speed.py --threads {' '.join(args.threads)}",
            "date": str(datetime.date.today()),
            "steps": args.steps,
            "parts": list(train.TIMED_PARTS),
            "runs": runs,
        }
        args.json.write_text(json.dumps(measured, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json} (python docs/figures.py puts it on the pages that quote it)")


if __name__ == "__main__":
    main()
