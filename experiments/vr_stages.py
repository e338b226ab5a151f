"""The variance-reduced estimate with its chance corrections fitted by the deal's stage (the
round's first deal, a middle one, the last-but-one, the last; each a column of the
cross-fitted least squares) against the shipped fit (one point and one win column), on the
same games.

    python experiments/vr_stages.py --lines 2p:bastra_2p:bastra_2p:network --deals 300 --mode game
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from variance_reduction import split_line  # noqa: E402

import agents.evaluation.matches as matches  # noqa: E402
from agents.evaluation.luck import (  # noqa: E402
    CHANCE_POINTS,
    CHANCE_WIN,
    DECISION_POINTS,
    DECISION_WIN,
    STAGE_POINTS,
    STAGE_WIN,
    STAGES,
)


def per_deal(deals: int, cols: np.ndarray) -> np.ndarray:
    """Per-game columns (A on side 0 in a deal's first game) -> A's side, a deal's two games
    averaged."""
    sign = np.where(np.arange(2 * deals) % 2 == 0, 1.0, -1.0)
    return (sign[:, None] * cols).reshape(deals, 2, -1).mean(axis=1)


def se(values: np.ndarray) -> float:
    """The standard error of the mean."""
    return float(np.std(values, ddof=1) / np.sqrt(len(values)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", nargs="+", required=True)
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--mode", choices=("game", "round"), default="game")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    captured: list[np.ndarray] = []
    original = matches.luck_corrections

    def capture(*a, **k):  # the walk's figures, kept
        figures = original(*a, **k)
        captured.append(figures)
        return figures

    matches.luck_corrections = capture
    out = []
    for line in args.lines:
        table, a, b = split_line(line)
        sides = (a, a) if table == "4p_teams" else a, (b, b) if table == "4p_teams" else b
        captured.clear()
        r = matches.duplicate_match(
            *sides,
            table=table,
            deals=args.deals,
            mode=args.mode,
            seed=args.seed,
            variance_reduction=True,
            progress=True,
        )
        f = captured[0]
        deals = args.deals
        raw = r.raw_deal_values
        shipped = per_deal(
            deals,
            np.stack(
                [
                    f[:, CHANCE_POINTS] + f[:, DECISION_POINTS],
                    f[:, CHANCE_WIN] + f[:, DECISION_WIN],
                ],
                axis=1,
            ),
        )
        stages = per_deal(
            deals,
            np.concatenate(
                [
                    f[:, STAGE_POINTS : STAGE_POINTS + STAGES],
                    f[:, DECISION_POINTS : DECISION_POINTS + 1],
                    f[:, STAGE_WIN : STAGE_WIN + STAGES],
                    f[:, DECISION_WIN : DECISION_WIN + 1],
                ],
                axis=1,
            ),
        )
        keep = np.flatnonzero(np.abs(stages).sum(axis=0) > 0)
        if args.mode == "round":
            keep = keep[keep <= STAGES]
            shipped = shipped[:, :1]
        one, _ = matches.cross_fitted(raw, shipped)
        staged, w = matches.cross_fitted(raw, stages[:, keep])
        row = {
            "line": line,
            "table": table,
            "a": a,
            "b": b,
            "mode": args.mode,
            "deals": deals,
            "plain_se": se(raw),
            "shipped_se": se(one),
            "staged_se": se(staged),
            "shipped_ratio": se(one) / se(raw),
            "staged_ratio": se(staged) / se(raw),
            "staged_weights": {int(k): round(float(v), 3) for k, v in zip(keep, w, strict=True)},
            "check_shipped_equals_result": bool(np.allclose(one, r.deal_values)),
        }
        print(json.dumps(row), flush=True)
        out.append(row)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
