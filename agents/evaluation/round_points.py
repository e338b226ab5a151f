"""The round outcomes behind the game-equity tables (``agents.search.equity``): each side's points
in single rounds a packaged model plays against itself.

    python -m agents.evaluation.round_points --write      # measure, write round_points.json
    python -m agents.evaluation.round_points --show 2p    # print the equity at a few totals
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence

import numpy as np

from agents.evaluation.matches import play_games
from agents.learning.config import LAST_DEAL_ONLY, POINTS_OBJECTIVE
from agents.registry import make_policy
from agents.search.equity import EQUITY_SCALE, ROUND_POINTS_FILE, game_equity
from bastra_env import Rules
from bastra_env.rules import TABLES


def measure(table: str, rounds: int, seed: int, model: str | None = None) -> dict:
    """Each side's points in ``rounds`` single rounds the packaged model of ``table`` (or
    ``model``) plays against itself (with its last-deal search on the round's points), on the
    vector env."""
    name = model or ("bastra_2p" if table == "2p" else "bastra_4p_teams")
    policy = make_policy(f"{name}{LAST_DEAL_ONLY}{POINTS_OBJECTIVE}")
    rules = Rules(max_rounds=1, **TABLES[table])
    rng = np.random.default_rng(seed)
    seeds = rng.integers(0, 2**62, size=rounds).tolist()
    scores, _ = play_games(rules, [[policy] * rules.num_players] * rounds, seeds)
    counts = Counter(zip(scores[:, 0].tolist(), scores[:, 1].tolist(), strict=True))
    outcomes = [[a, b, n] for (a, b), n in sorted(counts.items())]
    return {"model": name, "rounds": rounds, "seed": seed, "outcomes": outcomes}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m agents.search.equity",
        description="Measure the round outcomes behind the game-equity tables, or show a table.",
    )
    parser.add_argument("--write", action="store_true",
                        help=f"measure the outcomes, write {ROUND_POINTS_FILE.name}")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=20_000, help="rounds measured per table")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--show", metavar="TABLE", choices=sorted(TABLES),
                        help="print the equity at a few totals for this table")  # fmt: skip
    parser.add_argument("--target", type=int, default=100)
    args = parser.parse_args(argv)
    if args.write:
        data = {}
        for table in TABLES:
            data[table] = measure(table, args.rounds, args.seed)
            points = np.asarray(data[table]["outcomes"])
            mean = (points[:, 0] * points[:, 2]).sum() / points[:, 2].sum()
            print(f"{table}: {args.rounds} rounds, {len(points)} outcomes, "
                  f"mean {mean:.2f} points a side")  # fmt: skip
        ROUND_POINTS_FILE.write_text(json.dumps(data, separators=(",", ":")) + "\n")
        print(f"wrote {ROUND_POINTS_FILE}")
    if args.show:
        equity = game_equity(args.show, args.target)
        marks = [0, 20, 40, 60, 80, 90, 95, 99]
        print("mine \\ theirs " + " ".join(f"{m:>6}" for m in marks))
        for a in marks:
            cells = " ".join(f"{equity[a, b] / EQUITY_SCALE:6.3f}" for b in marks)
            print(f"{a:>13} {cells}")


if __name__ == "__main__":
    main()
