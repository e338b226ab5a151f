"""Honest evaluation: duplicate deals, Wilson intervals, round-robin ratings, training curves.

    python -m agents.evaluate A B [--table 2p|4p_teams] [--deals N] [--mode game|round] [--json F]
    python -m agents.evaluate A B --variance-reduction   # luck subtracted, beside the plain figures
    python -m agents.evaluate A B C ...            # round-robin: every pair, then ratings
    python -m agents.evaluate --curves RUN_DIR     # eval.csv of a training run -> curves.png

A policy is a baseline name (random, greedy, heuristic) or a checkpoint path. In the team game a
side may be two different policies joined by ``+`` (``runs/x/final.pt+greedy``: the first plays
seats 0/2's first seat, the second the partner seat). Every deal is played twice with the same
cards, the sides swapping seats, so the luck of the deal cancels out.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import torch

from agents.evaluation.curves import plot_curves
from agents.evaluation.matches import MatchResult
from agents.evaluation.ratings import rating_intervals, results_table, round_robin
from agents.learning.state_value import load_state_value
from bastra_env.rules import TABLES


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("policies", nargs="*", help="baseline names or checkpoint paths")
    parser.add_argument("--table", choices=list(TABLES), default="2p")
    parser.add_argument("--deals", type=int, default=200, help="deals per pair (x2 games)")
    parser.add_argument("--mode", choices=["game", "round"], default="game")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target-score", type=int, default=100)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument(
        "--no-endgame", action="store_true", help="checkpoints play without the endgame search"
    )
    parser.add_argument(
        "--record", metavar="DIR", help="write one JSON record per game here (for replays)"
    )
    parser.add_argument(
        "--extend", metavar="FILE",
        help="a round-robin's --json file: add the given policies to it, playing only new pairs "
        "(same --table, --mode, --deals, --seed as it was played with)",
    )  # fmt: skip
    parser.add_argument(
        "--threads", type=int, metavar="N",
        help="threads the batched games step on (default: every core this process may use; "
        "the results are the same for any N)",
    )  # fmt: skip
    parser.add_argument(
        "--variance-reduction", action="store_true",
        help="subtract what luck contributed (agents.evaluation.luck): variance-reduced "
        "estimates beside the plain ones of the same games",
    )  # fmt: skip
    parser.add_argument(
        "--value", metavar="FILE",
        help="the value function of --variance-reduction (default: the table's packaged one)",
    )  # fmt: skip
    parser.add_argument("--curves", nargs="+", metavar="RUN_DIR", help="plot training curves")
    parser.add_argument("--out", help="PNG path for --curves")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)  # the games run in batch; one thread leaves a core to spare
    if args.curves:
        print(f"wrote {plot_curves(args.curves, args.out)}")
        return
    known: list[MatchResult] = []
    specs = list(args.policies)
    if args.extend:
        known = _previous_results(args.extend, args.table, args.mode, 2 * args.deals, parser)
        previous = [n for r in known for n in (r.a, r.b)]
        specs = list(dict.fromkeys(previous + specs))
    if len(specs) < 2:
        parser.error("give two policies (or more for a round-robin), or --curves RUN_DIR")
    if args.deals < 1:
        parser.error("--deals must be at least 1")
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be at least 1")
    kwargs = dict(
        table=args.table,
        deals=args.deals,
        mode=args.mode,
        seed=args.seed,
        target_score=args.target_score,
        progress=True,
        record=args.record,
        num_threads=args.threads,
        variance_reduction=args.variance_reduction,
    )
    if args.value and not args.variance_reduction:
        parser.error("--value is the value function of --variance-reduction")
    if args.variance_reduction:
        try:
            kwargs["value"] = load_state_value(args.value, args.table)
        except ValueError as error:
            parser.error(f"--value: {error}")
    results, ratings = round_robin(specs, endgame=not args.no_endgame, known=known, **kwargs)
    intervals = rating_intervals(specs, results, seed=args.seed)
    print()
    if len(specs) > 2:
        print(results_table(results, ratings, intervals))
    else:
        print(results_table(results))
    if args.record:
        written = 2 * args.deals * (len(results) - len(known))
        print(f"\nwrote {written} game records to {args.record}")
    if args.json:
        payload = {
            "results": [r.to_json() for r in results],
            "ratings": ratings,
            "rating_intervals": intervals,
        }
        Path(args.json).write_text(json.dumps(payload, indent=2))
        print(f"\nwrote {args.json}")


def _previous_results(
    path: str, table: str, mode: str, games: int, parser: argparse.ArgumentParser
) -> list[MatchResult]:
    try:
        payload = json.loads(Path(path).read_text())
        known = [MatchResult(**r) for r in payload["results"]]
    except (OSError, ValueError, KeyError, TypeError) as error:
        parser.error(f"--extend {path}: not a readable agents.evaluate --json file ({error})")
    for r in known:
        if (r.table, r.mode, r.games) != (table, mode, games):
            parser.error(
                f"--extend {path}: its {r.a} vs {r.b} was {r.games} {r.mode}s of {r.table}; "
                f"this run plays {games} {mode}s of {table} (give the same --table, --mode, "
                "--deals)"
            )
    return known


if __name__ == "__main__":
    main()
