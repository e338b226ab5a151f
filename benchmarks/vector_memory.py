"""Memory over a long vector-env run: resident set size while 10^7 random plays go by.

    python benchmarks/vector_memory.py [--plays 10000000] [--num-envs 1024]

Prints the process's resident memory (from /proc/self/status, so Linux only) after warm-up and at
ten points of the run, with the games finished so far: flat numbers mean nothing accumulates
per step, per game or per autoreset.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bastra_env.vector import VectorEnv, random_legal  # noqa: E402


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plays", type=int, default=10_000_000)
    parser.add_argument("--num-envs", type=int, default=1024)
    args = parser.parse_args()
    b = args.num_envs
    venv = VectorEnv(b, num_players=2, seed=0, copy=False, reward="points")
    state = venv.reset(seed=0)
    masks = state["action_mask"].view(np.uint8)
    actions = np.zeros(b, dtype=np.int64)
    rng = np.random.default_rng(0)
    for _ in range(200):  # warm-up: compile and touch every buffer
        random_legal(masks, rng.random(b), actions)
        venv.step(actions)
    steps = -(-args.plays // b)
    checkpoints = {round(steps * k / 10) for k in range(1, 11)}
    games = 0
    start_rss = rss_mib()
    print(f"{'plays':>12} {'games done':>11} {'RSS MiB':>9} {'plays/s':>11}")
    print(f"{0:>12,} {0:>11,} {start_rss:>9.1f}")
    start = time.perf_counter()
    for step in range(1, steps + 1):
        random_legal(masks, rng.random(b), actions)
        state = venv.step(actions)
        games += int(state["terminated"].sum())
        if step in checkpoints:
            rate = step * b / (time.perf_counter() - start)
            print(f"{step * b:>12,} {games:>11,} {rss_mib():>9.1f} {rate:>11,.0f}")
    print(f"RSS change over the run: {rss_mib() - start_rss:+.1f} MiB")


if __name__ == "__main__":
    main()
