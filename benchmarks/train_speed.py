"""Training throughput: environment steps and learner samples per second, 2p and 4p teams.

    python benchmarks/train_speed.py [--steps 60000] [--threads 2]

Runs ``train.py`` with the shipped configs (``configs/2p.yaml``, ``configs/4p_teams.yaml``:
self-play, snapshot pool and built-in opponents) for a short budget, with evaluation and the
imitation warm start off, and reads the per-update figures from its ``metrics.csv``. The first
update (interpreter and cache warm-up) is left out. An env step is one play by any seat; a
learner sample is a play recorded for learning (pool and built-in seats are not).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import train  # noqa: E402


def measure(config: str, steps: int, threads: int) -> tuple[float, float, int]:
    """(env steps/s, learner samples/s, updates timed) over all updates but the first."""
    with tempfile.TemporaryDirectory() as run_dir:
        train.main(
            ["--config", str(ROOT / config), "--run-dir", run_dir, "--total-env-steps", str(steps),
             "--eval-every", "0", "--eval-deals", "1", "--eval-opponents", "random",
             "--imitation-samples", "0", "--threads", str(threads)]
        )  # fmt: skip
        rows = list(csv.DictReader((Path(run_dir) / "metrics.csv").open()))
    total_steps = total_samples = total_seconds = 0.0
    for previous, row in itertools.pairwise(rows):
        plays = int(row["env_steps"]) - int(previous["env_steps"])
        samples = int(row["samples"]) - int(previous["samples"])
        total_steps += plays
        total_samples += samples
        total_seconds += plays / float(row["steps_per_s"])
    return total_steps / total_seconds, total_samples / total_seconds, len(rows) - 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60_000)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    results = {}
    for name, config in (("2p", "configs/2p.yaml"), ("4p teams", "configs/4p_teams.yaml")):
        results[name] = measure(config, args.steps, args.threads)
    print(f"\n{'table':<10} {'env steps/s':>12} {'samples/s':>11} {'updates':>8}", end="")
    print(f"  (torch threads: {args.threads})")
    for name, (env_rate, sample_rate, updates) in results.items():
        print(f"{name:<10} {env_rate:>12,.0f} {sample_rate:>11,.0f} {updates:>8}")


if __name__ == "__main__":
    main()
