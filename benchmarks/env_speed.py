"""Random masked play through wrapped PettingZoo AEC envs: steps per second, side by side.

    python benchmarks/env_speed.py [--steps N] [--profile]

Every env runs the same loop: ``env.last()``, pick a uniformly random legal action from the
``action_mask``, ``env.step``; a new game on termination. Anchors: PettingZoo's
``connect_four_v3`` and ``texas_holdem_v4`` (needs ``pettingzoo[classic]``), measured in this run.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from collections.abc import Callable

import numpy as np

import bastra_env


def run(make: Callable[[], object], steps: int, seed: int = 0) -> tuple[int, int, float]:
    """Play ``steps`` agent steps (dead steps at game end included); returns (steps, games, s)."""
    env = make()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    done_steps = games = 0
    start = time.perf_counter()
    while done_steps < steps:
        obs, _reward, termination, truncation, _info = env.last()
        if termination or truncation:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[rng.integers(len(legal))])
        env.step(action)
        done_steps += 1
        if not env.agents:
            games += 1
            env.reset()
    return done_steps, games, time.perf_counter() - start


def anchors() -> dict[str, Callable[[], object]]:
    found: dict[str, Callable[[], object]] = {}
    try:
        from pettingzoo.classic import connect_four_v3

        found["connect_four_v3"] = connect_four_v3.env
    except ImportError as error:
        print(f"(connect_four_v3 unavailable: {error})")
    try:
        from pettingzoo.classic import texas_holdem_v4

        found["texas_holdem_v4"] = texas_holdem_v4.env
    except ImportError as error:
        print(f"(texas_holdem_v4 unavailable: {error}; pip install 'pettingzoo[classic]')")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30_000, help="steps per env")
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats; the best is shown")
    parser.add_argument("--profile", action="store_true", help="cProfile of Bastra 2p")
    args = parser.parse_args()

    envs: dict[str, Callable[[], object]] = {
        "bastra 2p": lambda: bastra_env.env(num_players=2),
        "bastra 4p teams": lambda: bastra_env.env(num_players=4, teams=True),
        "bastra 3p": lambda: bastra_env.env(num_players=3),
    }
    envs.update(anchors())
    for make in envs.values():
        run(make, 500)  # warm caches and imports
    best: dict[str, float] = dict.fromkeys(envs, float("inf"))
    games: dict[str, int] = {}
    for _ in range(args.repeats):  # interleaved, so a noisy moment hits every env alike
        for name, make in envs.items():
            _steps, games[name], seconds = run(make, args.steps)
            best[name] = min(best[name], seconds)
    rates = {name: args.steps / seconds for name, seconds in best.items()}
    anchor = rates.get("connect_four_v3")
    print(f"{'env':<18} {'steps':>8} {'games':>6} {'steps/s':>10}  vs connect_four_v3")
    for name, rate in rates.items():
        ratio = f"{rate / anchor:>6.2f}x" if anchor else "   n/a"
        print(f"{name:<18} {args.steps:>8} {games[name]:>6} {rate:>10,.0f}  {ratio}")
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(run, envs["bastra 2p"], args.steps)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
