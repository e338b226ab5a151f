"""How much of a match's variance is the players' own random streams: every line played twice on
the same deals (the same game seeds, so every card of every round falls the same), the players'
streams changed between the two (their seeds), and each deal's plain and variance-reduced
figures compared. With every card fixed, what still moves a deal's figure is how the players'
choices fell; a player that samples its moves gets decision corrections for that, a search player
(whose move probabilities nobody knows) gets none.

    python experiments/vr_stream.py --lines 2p:pimc:64:heuristic --deals 600 --mode round
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from variance_reduction import split_line  # noqa: E402

from agents.evaluation.matches import duplicate_match  # noqa: E402
from agents.registry import make_policy  # noqa: E402

STREAM_OFFSET = 7919
"""The second replicate's players take their match seed plus this (the first's are the match's
own, so the first replicate is the benchmark's match)."""


def side(name: str, table: str, seed: int) -> Any:
    """A side's policy (a pair of them in the team game), seeded as ``duplicate_match`` seeds
    a name."""
    if table == "4p_teams":
        return make_policy(name, seed=seed), make_policy(name, seed=seed)
    return make_policy(name, seed=seed)


def within(first: np.ndarray, second: np.ndarray) -> float:
    """The variance of a deal's figure with its cards fixed: half the mean squared difference of
    two replicates."""
    return float(np.mean((first - second) ** 2) / 2)


def measure(line: str, deals: int, mode: str, seed: int) -> dict[str, Any]:
    table, a, b = split_line(line)
    runs = []
    for replicate in range(2):
        offset = replicate * STREAM_OFFSET
        match = duplicate_match(side(a, table, seed + offset), side(b, table, seed + 1 + offset),
                                table=table, deals=deals, mode=mode, seed=seed, names=(a, b),
                                variance_reduction=True, progress=True)  # fmt: skip
        runs.append(match)
    row: dict[str, Any] = {"line": line, "table": table, "a": a, "b": b, "mode": mode,
                           "deals": deals, "seed": seed, "games": 2 * runs[0].games}  # fmt: skip
    fields = [("plain", "raw_deal_values"), ("reduced", "deal_values")]
    if mode == "game":
        fields += [("win_plain", "raw_win_deal_values"), ("win_reduced", "win_deal_values")]
    for kind, field in fields:
        one, two = (np.asarray(getattr(r, field), dtype=np.float64) for r in runs)
        total = float((np.var(one, ddof=1) + np.var(two, ddof=1)) / 2)
        row[f"{kind}_variance"] = total
        row[f"{kind}_within"] = within(one, two)
        row[f"{kind}_share"] = row[f"{kind}_within"] / total if total > 0 else 0.0
        row[f"{kind}_means"] = [float(one.mean()), float(two.mean())]
    plain = row["plain_variance"]
    row["se_ratio"] = float(np.sqrt(row["reduced_variance"] / plain))
    # the se ratio that would be left if every part of the reduced estimate's variance but the
    # streams' were removed
    row["stream_floor"] = float(np.sqrt(row["reduced_within"] / plain))
    if mode == "game":
        win = row["win_plain_variance"]
        row["win_se_ratio"] = float(np.sqrt(row["win_reduced_variance"] / win))
        row["win_stream_floor"] = float(np.sqrt(row["win_reduced_within"] / win))
    row["seconds"] = round(sum(r.seconds for r in runs), 1)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", nargs="+", required=True)
    parser.add_argument("--deals", type=int, default=600)
    parser.add_argument("--mode", choices=("game", "round"), default="round")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", type=Path, help="append the rows to this JSON list")
    args = parser.parse_args()
    rows = []
    for line in args.lines:
        row = measure(line, args.deals, args.mode, args.seed)
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v)
                          for k, v in row.items()}), flush=True)  # fmt: skip
        rows.append(row)
    if args.json:
        old = json.loads(args.json.read_text()) if args.json.exists() else []
        new = {(x["line"], x["mode"]) for x in rows}
        keep = [r for r in old if (r["line"], r["mode"]) not in new]
        args.json.write_text(json.dumps(keep + rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
