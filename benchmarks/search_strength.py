"""Search players' strength in full games against the built-in players, on duplicate deals.

    python benchmarks/search_strength.py [--table 2p] [--players pimc:64 ismcts:400]
        [--opponents greedy heuristic] [--deals 100] [--mode game] [--json FILE]

Each player meets each opponent on the same ``--deals`` deals (every deal twice, seats swapped,
full games to 100 unless ``--mode round``), one torch thread. Prints win rate with its 95% interval,
mean point difference per game with its interval, and the search's mean time per decision. In
the team game a side is two copies of the player. The anchor is the packaged model of the table
(network plus endgame search) against the same opponents on the same deals.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import make_policy  # noqa: E402
from agents.evaluation.matches import duplicate_match  # noqa: E402

MODELS = {"2p": "bastra_2p", "4p_teams": "bastra_4p_teams"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", choices=list(MODELS), default="2p")
    parser.add_argument("--players", nargs="+", default=["pimc:64", "ismcts:400"])
    parser.add_argument("--opponents", nargs="+", default=["greedy", "heuristic"])
    parser.add_argument("--deals", type=int, default=100)
    parser.add_argument("--mode", choices=["game", "round"], default="game")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rows = []
    for spec in [MODELS[args.table], *args.players]:
        for name in args.opponents:
            player, opponent = make_policy(spec, seed=1), make_policy(name, seed=2)
            start = time.perf_counter()
            result = duplicate_match(player, opponent, table=args.table, deals=args.deals,
                                     mode=args.mode, seed=args.seed, names=(spec, name),
                                     progress=True)  # fmt: skip
            seconds = time.perf_counter() - start
            decisions = getattr(player, "decisions", 0)
            per = 1000 * getattr(player, "search_seconds", 0.0) / decisions if decisions else None
            rows.append({**asdict(result), "seconds": round(seconds, 1), "ms_per_search": per})
            timing = f", {per:.1f} ms a search" if per is not None else ""
            print(f"{result.line()} (± {result.point_diff_ci:.2f}){timing}, {seconds:.0f} s",
                  flush=True)  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps({"table": args.table, "results": rows}, indent=2))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
