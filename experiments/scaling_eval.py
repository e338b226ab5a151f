"""The scaling study: a PPO run's network alone, rated at points spaced on a log axis of plays,
against fixed yardsticks, with the variance-reduced duplicate evaluator.

    python experiments/scaling_eval.py runs/scaling_2p --json docs/scaling_2p.json
        [--points 1e6 2e6 5e6 1e7 2e7 5e7 1e8] [--opponents heuristic pimc:64 bastra_2p:network]
        [--table 2p|4p_teams] [--deals 300] [--seed 2026] [--plot docs/scaling_2p.png]

For each point the run's checkpoint nearest to it (``checkpoint_NNNNNN.pt``, or ``final.pt``)
plays its network alone (``CHECKPOINT:network``) against each opponent: full games to 100 on
``--deals`` duplicate deals (2 games a deal, the same deals at every point), the point
difference and the win rate variance-reduced (``duplicate_match(variance_reduction=True)``),
the plain estimates of the same games beside them. A line already in the JSON file is kept, so
the study runs in stages as the run goes on (and a stopped evaluation continues where it was).
``--opponents`` for a point alone: ``--only 1e7:pimc:64`` adds that opponent at that point.
The plot: win rate against plays (log axis), one line an opponent, 95% intervals as bands, beside
the run's own evaluation (single rounds against the heuristic).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.evaluation.matches import duplicate_match  # noqa: E402

DEFAULT_POINTS = [1e6, 2e6, 5e6, 1e7, 2e7, 5e7, 1e8]


def checkpoints(run: Path) -> dict[int, Path]:
    """The run's checkpoints by the plays each was saved at (from the run's ``metrics.csv``)."""
    with (run / "metrics.csv").open() as rows:
        plays = {int(row["update"]): int(row["env_steps"]) for row in csv.DictReader(rows)}
    found = {}
    for path in sorted(run.glob("checkpoint_*.pt")):
        update = int(path.stem.split("_")[1])
        if update in plays:
            found[plays[update]] = path
    if (run / "final.pt").is_file():
        found[max(plays.values())] = run / "final.pt"
    return found


def nearest(found: dict[int, Path], point: float) -> tuple[int, Path] | None:
    """The checkpoint nearest ``point``, once the run has passed it, if one is within 15%."""
    if not found or max(found) < point:  # the run has not reached it yet
        return None
    plays = min(found, key=lambda p: abs(p - point))
    return (plays, found[plays]) if abs(plays - point) <= 0.15 * point else None


def evaluate(path: Path, opponent: str, table: str, deals: int, seed: int) -> dict[str, Any]:
    started = time.perf_counter()
    result = duplicate_match(f"{path}:network", opponent, table=table, deals=deals, mode="game",
                             seed=seed, num_threads=1, variance_reduction=True)  # fmt: skip
    line = result.to_json(per_deal=False)
    line["seconds"] = time.perf_counter() - started
    return line


def plot(lines: list[dict[str, Any]], out: Path, title: str, run: Path) -> None:
    """Left: the study's full-game win rates against plays (log axis), one line an opponent, 95%
    intervals as bands. Right: what the run's own evaluation saw (``eval.csv``: single rounds
    against the heuristic every ~1.1 million plays, Wilson intervals)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    for opponent in dict.fromkeys(line["opponent"] for line in lines):
        mine = sorted((line for line in lines if line["opponent"] == opponent),
                      key=lambda line: line["plays"])  # fmt: skip
        x = [line["plays"] for line in mine]
        (drawn,) = left.plot(x, [100 * line["win_rate"] for line in mine], marker="o",
                             label=f"against {opponent}")  # fmt: skip
        left.fill_between(x, [100 * line["ci_low"] for line in mine],
                          [100 * line["ci_high"] for line in mine], alpha=0.2,
                          color=drawn.get_color())  # fmt: skip
    left.set_ylabel("full games won, % (variance-reduced, 95% interval)")
    left.set_title(title)
    left.legend()
    with (run / "eval.csv").open() as rows:
        seen = [row for row in csv.DictReader(rows) if row["opponent"] == "heuristic"]
    x = [int(row["env_steps"]) for row in seen]
    right.plot(x, [100 * float(row["win_rate"]) for row in seen], color="C0", lw=1)
    right.fill_between(
        x,
        [100 * float(row["ci_low"]) for row in seen],
        [100 * float(row["ci_high"]) for row in seen],
        alpha=0.2,
        color="C0",
    )
    right.set_ylabel("single rounds won against the heuristic, %")
    right.set_title(f"the run's own evaluation ({seen[0]['games'] if seen else 0} rounds a point)")
    for ax in (left, right):
        ax.axhline(50, color="grey", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_xlabel("plays (all seats)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="the training run's folder")
    parser.add_argument("--json", type=Path, required=True, help="results file (kept and extended)")
    parser.add_argument("--table", choices=["2p", "4p_teams"], default="2p")
    parser.add_argument("--points", type=float, nargs="+", default=DEFAULT_POINTS)
    parser.add_argument("--opponents", nargs="+",
                        help="default: heuristic, pimc:64 and the table's packaged network alone "
                             "(bastra_2p:network, bastra_4p_teams:network)")  # fmt: skip
    parser.add_argument("--only", nargs="*", default=[],
                        help="POINT:OPPONENT lines to add (e.g. 1e7:pimc:64)")  # fmt: skip
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--plot", type=Path, help="write the plot here")
    args = parser.parse_args()
    if args.opponents is None:
        args.opponents = ["heuristic", "pimc:64", f"bastra_{args.table}:network"]
    torch.set_num_threads(1)
    study = json.loads(args.json.read_text()) if args.json.is_file() else {
        "run": str(args.run), "table": args.table, "deals": args.deals, "seed": args.seed,
        "lines": []}  # fmt: skip
    if (study["table"], study["deals"], study["seed"]) != (args.table, args.deals, args.seed):
        raise SystemExit(f"{args.json} holds a study of {study['table']}, {study['deals']} deals, "
                         f"seed {study['seed']}: not these")  # fmt: skip
    wanted = [(point, opponent) for point in args.points for opponent in args.opponents]
    for spec in args.only:
        point, opponent = spec.split(":", 1)
        wanted.append((float(point), opponent))
    found = checkpoints(args.run)
    done = {(line["point"], line["opponent"]) for line in study["lines"]}
    for point, opponent in wanted:
        chosen = nearest(found, point)
        if chosen is None or (point, opponent) in done:
            continue
        plays, path = chosen
        line = evaluate(path, opponent, args.table, args.deals, args.seed)
        line |= {
            "point": point,
            "plays": plays,
            "checkpoint": path.name,
            "opponent": opponent,
            "command": f"python experiments/scaling_eval.py {args.run} --json {args.json} "
            f"--table {args.table} --deals {args.deals} --seed {args.seed}",
        }
        study["lines"].append(line)
        done.add((point, opponent))
        args.json.write_text(json.dumps(study, indent=1) + "\n")
        print(f"{plays:>11,} plays against {opponent}: {line['win_rate']:.1%} "
              f"[{line['ci_low']:.1%}, {line['ci_high']:.1%}] (plain {line['raw_win_rate']:.1%}), "
              f"{line['point_diff']:+.2f} +/- {line['point_diff_ci']:.2f} points a game, "
              f"{line['seconds']:.0f} s", flush=True)  # fmt: skip
    if args.plot and study["lines"]:
        plot(study["lines"], args.plot, f"PPO self-play, {args.table}: the network alone", args.run)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
