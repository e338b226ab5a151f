"""The first searched moves of a fresh process: what ``load_policy``'s warm-up saves.

    python benchmarks/first_move.py [--players bastra_2p:infer bastra_4p_teams:infer]

Each player is loaded in a new Python process (so no compiled kernel is loaded yet), with
``load_policy``'s warm-up (``LearnedPolicy.warm_up``: one heuristic game's searched positions,
once a process) and without it, and then plays three positions one at a time: a 2p position of
the last-but-one deal (the two-deal search) or a team position of the last deal (the endgame
search), a position with cards in the deck (the search on inferred worlds), and another of the
first kind. Printed: the load time and each move's milliseconds, one core.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def child(spec: str, warm: bool) -> None:
    import torch

    torch.set_num_threads(1)
    import agents.learning.policy as learned

    learned._WARM = not warm  # marked as done already: no warm-up
    from agents import make_policy
    from benchmarks.search_speed import sample_positions

    table = "4p_teams" if "teams" in spec else "2p"
    endgame = sample_positions(table, 2, 7, deck_left=8 if table == "2p" else 0)
    early = sample_positions(table, 3, 7)
    start = time.perf_counter()
    policy = make_policy(spec)
    load = time.perf_counter() - start
    times = []
    for observation in (endgame[0], early[-1], endgame[1]):
        start = time.perf_counter()
        policy.act(observation)
        times.append(1000 * (time.perf_counter() - start))
    moves = ", ".join(f"{t:.1f}" for t in times)
    print(f"{spec:>24} {'warm-up' if warm else 'no warm-up':>10}: load {load:5.2f} s, "
          f"first moves {moves} ms", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--players", nargs="+", default=["bastra_2p:infer", "bastra_4p_teams:infer"]
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1] == "warm")
        return
    from benchmarks import pin_to_one_core

    pin_to_one_core()
    for spec in args.players:
        for mode in ("cold", "warm"):
            subprocess.run([sys.executable, __file__, "--child", spec, mode], check=True)


if __name__ == "__main__":
    main()
