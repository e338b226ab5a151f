"""The README's strength table: the pretrained models against the built-in players.

    python benchmarks/pretrained_strength.py --table 2p [--deals 500] [--json out.json]
    python benchmarks/pretrained_strength.py --table 4p_teams

Full games to 100 on duplicate deals (each deal twice, the sides swapping seats), so ``--deals
500`` is 1,000 games per line. In the team game the learned pair meets each baseline pair, and a
learned player with a greedy partner meets a greedy pair.
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

from agents import GreedyPolicy, HeuristicPolicy, RandomPolicy, SearchConfig, load_policy  # noqa: E402
from agents.evaluation.matches import duplicate_match  # noqa: E402
from agents.evaluation.ratings import results_table  # noqa: E402

MODELS = {
    "2p": "agents/pretrained/bastra_2p.pt",
    "4p_teams": "agents/pretrained/bastra_4p_teams.pt",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", choices=list(MODELS), default="2p")
    parser.add_argument("--model", help="checkpoint (default: the pretrained one)")
    parser.add_argument("--deals", type=int, default=500)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json")
    parser.add_argument(
        "--no-endgame", action="store_true", help="the network alone, without the endgame search"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)  # the games run in batch (agents.evaluate); one thread is plenty
    path = args.model or str(ROOT / MODELS[args.table])
    learned = load_policy(path, SearchConfig(endgame=not args.no_endgame))
    name = Path(path).stem + ("-network" if args.no_endgame else "")
    matches = [
        (name, learned, "random", RandomPolicy(args.seed)),
        (name, learned, "greedy", GreedyPolicy()),
        (name, learned, "heuristic", HeuristicPolicy()),
    ]
    if args.table == "4p_teams":
        matches.append((f"{name}+greedy", (learned, GreedyPolicy()), "greedy", GreedyPolicy()))
    results = []
    for a_name, a, b_name, b in matches:
        started = time.perf_counter()
        result = duplicate_match(
            a, b, table=args.table, deals=args.deals, mode="game", seed=args.seed,
            names=(a_name, b_name), progress=True,
        )  # fmt: skip
        print(f"{result.line()}  [{time.perf_counter() - started:.0f} s]", flush=True)
        results.append(result)
    print()
    print(results_table(results))
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in results], indent=2))


if __name__ == "__main__":
    main()
