"""The gain of variance-reduced evaluation, measured side by side on the same games: for each
pair, the plain duplicate estimate and the variance-reduced one of the same deals, each with its
standard error, their ratio (and the games the plain estimate needs for the same interval), and
what the corrections cost in time.

    python benchmarks/variance_reduction.py                          # every line, the defaults
    python benchmarks/variance_reduction.py --lines 2p:greedy:heuristic --deals 500
    python benchmarks/variance_reduction.py --json docs/variance_reduction.json
    python benchmarks/variance_reduction.py --lines 2p:greedy:heuristic \
        2p:bastra_2p:network:pimc:64 --modes round --deals 600 --plot docs/variance_reduction.png

A line is ``TABLE:A:B`` (``make_policy`` names; in the team game each side is two copies). Both
modes are measured: single rounds (the mean point difference) and full games to 100 (the point
difference and the win rate).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.evaluation.matches import duplicate_match  # noqa: E402

LINES = (
    "2p:greedy:heuristic",
    "2p:pimc:64:heuristic",
    "2p:bastra_2p:network:heuristic",
    "2p:bastra_2p:network:pimc:64",
    "2p:bastra_2p:bastra_2p:network",
    "4p_teams:greedy:heuristic",
    "4p_teams:pimc:64:heuristic",
    "4p_teams:bastra_4p_teams:network:pimc:64",
    "4p_teams:bastra_4p_teams:bastra_4p_teams:network",
)
"""Pairs of different strength, from the yardsticks to the packaged models."""


def split_line(line: str) -> tuple[str, str, str]:
    """``TABLE:A:B`` -> (table, A, B); A and B may hold colons (``pimc:64``,
    ``bastra_2p:network``): the split is the one where both halves are known names."""
    from agents.registry import policy_problem

    table, _, rest = line.partition(":")
    parts = rest.split(":")
    for k in range(1, len(parts)):
        a, b = ":".join(parts[:k]), ":".join(parts[k:])
        if policy_problem(a) is None and policy_problem(b) is None:
            return table, a, b
    raise ValueError(f"{line!r}: not TABLE:A:B with two policy names")


def measure(
    table: str, a: str, b: str, mode: str, deals: int, seed: int, curves: dict | None = None
) -> dict[str, Any]:
    r = duplicate_match(a, b, table=table, deals=deals, mode=mode, seed=seed,
                        variance_reduction=True, progress=True)  # fmt: skip
    if curves is not None:
        curves[f"{table}: {a} vs {b} ({mode}s)"] = (r.raw_deal_values, r.deal_values)
    row: dict[str, Any] = {
        "table": table, "a": a, "b": b, "mode": mode, "deals": deals, "seed": seed,
        "games": r.games,
        "point_diff": r.point_diff, "point_diff_se": r.point_diff_ci / 1.96,
        "raw_point_diff": r.raw_point_diff, "raw_point_diff_se": r.raw_point_diff_ci / 1.96,
        "seconds": round(r.seconds, 1), "correction_seconds": round(r.correction_seconds, 1),
        "decisions": r.decisions,
    }  # fmt: skip
    row["point_se_ratio"] = row["point_diff_se"] / row["raw_point_diff_se"]
    # the corrections at weight 1 (plain AIVAT) and the fitted weight (cross_fitted)
    aivat = np.subtract(r.raw_deal_values, r.point_corrections)
    row["aivat_point_se_ratio"] = float(np.std(aivat, ddof=1) / np.std(r.raw_deal_values, ddof=1))
    row["point_weights"] = r.weights["points"]
    if mode == "game":
        assert r.win_deal_values is not None and r.raw_win_deal_values is not None
        row["win_rate"] = r.win_rate
        row["win_rate_se"] = float(np.std(r.win_deal_values, ddof=1) / deals**0.5)
        row["raw_win_rate"] = r.raw_win_rate
        row["raw_win_rate_se"] = float(np.std(r.raw_win_deal_values, ddof=1) / deals**0.5)
        row["win_se_ratio"] = row["win_rate_se"] / row["raw_win_rate_se"]
        aivat = np.subtract(r.raw_win_deal_values, r.win_corrections)
        row["aivat_win_se_ratio"] = float(
            np.std(aivat, ddof=1) / np.std(r.raw_win_deal_values, ddof=1)
        )
        row["win_weights"] = r.weights["win"]
    return row


def fmt(weights: list[float]) -> str:
    return "/".join(f"{w:.2f}" for w in weights)


def show(row: dict[str, Any]) -> str:
    text = (
        f"{row['table']:8} {row['a']:>24} vs {row['b']:<24} {row['mode']:5} {row['games']:5} games"
        f" | points {row['raw_point_diff']:+6.2f} se {row['raw_point_diff_se']:.2f} -> "
        f"{row['point_diff']:+6.2f} se {row['point_diff_se']:.2f} (x{row['point_se_ratio']:.2f},"
        f" {1 / row['point_se_ratio'] ** 2:.1f}x games; weights {fmt(row['point_weights'])},"
        f" at 1: x{row['aivat_point_se_ratio']:.2f})"
    )
    if "win_se_ratio" in row:
        text += (
            f" | win {row['raw_win_rate']:.1%} se {row['raw_win_rate_se']:.3f} -> "
            f"{row['win_rate']:.1%} se {row['win_rate_se']:.3f} (x{row['win_se_ratio']:.2f};"
            f" weights {fmt(row['win_weights'])}, at 1: x{row['aivat_win_se_ratio']:.2f})"
        )
    share = row["correction_seconds"] / max(row["seconds"], 1e-9)
    spent = f"{row['correction_seconds']:.0f} of {row['seconds']:.0f} s ({share:.0%})"
    return text + f" | corrections {spent}"


def plot(curves: dict[str, tuple], out: str) -> None:
    """One panel per line: the running estimate of the point difference and its 95% interval,
    plain and variance-reduced, as the deals grow."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(curves), figsize=(6 * len(curves), 4), squeeze=False)
    for ax, (title, pair) in zip(axes[0], curves.items(), strict=True):
        for values, label, color in zip(pair, ("plain duplicate", "variance-reduced"),
                                        ("tab:gray", "tab:green"), strict=True):  # fmt: skip
            v = np.asarray(values)
            n = np.arange(1, len(v) + 1)
            mean = np.cumsum(v) / n
            sq = np.cumsum(v**2)
            var = np.maximum(sq - n * mean**2, 0) / np.maximum(n - 1, 1)
            half = 1.96 * np.sqrt(var / n)
            keep = n >= 10
            ax.plot(n[keep], mean[keep], color=color, label=label)
            ax.fill_between(n[keep], (mean - half)[keep], (mean + half)[keep], color=color,
                            alpha=0.25)  # fmt: skip
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("deals (two games each)")
        ax.set_ylabel("mean point difference, 95% interval")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", nargs="+", default=list(LINES), help="TABLE:A:B pairs")
    parser.add_argument("--modes", nargs="+", default=["round", "game"], choices=["round", "game"])
    parser.add_argument("--deals", type=int, default=200, help="deals a line (x2 games)")
    parser.add_argument("--game-deals", type=int, help="deals a full-games line (default: --deals)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", help="append the rows to this JSON file (a list)")
    parser.add_argument("--plot", help="a PNG of each line's intervals as the deals grow")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rows = []
    curves: dict[str, tuple] = {}
    began = time.perf_counter()
    for line in args.lines:
        table, a, b = split_line(line)
        for mode in args.modes:
            deals = args.game_deals if mode == "game" and args.game_deals else args.deals
            row = measure(table, a, b, mode, deals, args.seed, curves)
            print(show(row), flush=True)
            rows.append(row)
            if args.json:
                path = Path(args.json)
                old = json.loads(path.read_text()) if path.exists() else []
                key = (row["table"], row["a"], row["b"], row["mode"])
                old = [o for o in old if (o["table"], o["a"], o["b"], o["mode"]) != key]
                path.write_text(json.dumps(old + [row], indent=1) + "\n")
    print(f"{len(rows)} lines in {time.perf_counter() - began:.0f} s")
    if args.plot:
        plot(curves, args.plot)
    return rows


if __name__ == "__main__":
    main()
