"""Evaluation speed: full games of the pretrained 2p model against the heuristic, batched and not.

    python benchmarks/eval_speed.py [--games 1000] [--sequential-games 100] [--no-endgame]

- ``batched``: ``agents.evaluate.duplicate_match`` as the CLI runs it (the games on the vector
  env, each player choosing for all its games in one batch call);
- ``one at a time``: the same kind of duplicate games through the wrapped AEC env, one move at a
  time (``agents.evaluate.play_game``: how evaluation ran before the vector env), on fewer games.

Both play full games to 100 with ``load_policy``'s defaults (network plus endgame search), on one
core (the process pinned to it: a second core shared with other work slows the batched games
several times over, and unevenly). Prints games/s for each, measured in this run, and their
ratio.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numba
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bastra_env  # noqa: E402
from agents import HeuristicPolicy, SearchConfig, load_policy  # noqa: E402
from agents.evaluation.matches import duplicate_match, play_game  # noqa: E402
from benchmarks import pin_to_one_core  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="batched games (even)")
    parser.add_argument("--sequential-games", type=int, default=100)
    parser.add_argument("--no-endgame", action="store_true")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    pin_to_one_core()
    numba.set_num_threads(1)
    torch.set_num_threads(1)
    search = SearchConfig(endgame=not args.no_endgame)
    model = load_policy(str(ROOT / "agents/pretrained/bastra_2p.pt"), search)
    heuristic = HeuristicPolicy()
    duplicate_match(model, heuristic, deals=2, seed=args.seed)  # warm-up: compile, load caches

    start = time.perf_counter()
    result = duplicate_match(model, heuristic, deals=args.games // 2, seed=args.seed)
    batched = time.perf_counter() - start
    print(result.line())

    env = bastra_env.env(num_players=2)
    start = time.perf_counter()
    for g in range(args.sequential_games):
        seats = [model, heuristic] if g % 2 == 0 else [heuristic, model]
        play_game(env, seats, args.seed + g // 2)
    sequential = time.perf_counter() - start

    rate_b = result.games / batched
    rate_s = args.sequential_games / sequential
    print(f"\n{'evaluation':<16} {'games':>6} {'seconds':>9} {'games/s':>9}")
    print(f"{'batched':<16} {result.games:>6} {batched:>9.1f} {rate_b:>9.2f}")
    print(f"{'one at a time':<16} {args.sequential_games:>6} {sequential:>9.1f} {rate_s:>9.2f}")
    print(f"batched is {rate_b / rate_s:.1f}x faster per game")


if __name__ == "__main__":
    main()
