"""Training curves: a run's ``eval.csv`` as a PNG of win rates with their 95% bands."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path


def plot_curves(run_dirs: Sequence[str | Path], out: str | Path | None = None) -> Path:
    """Win rate against each baseline over training steps, with 95% bands, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for run in map(Path, run_dirs):
        path = run / "eval.csv"
        if not path.is_file():
            raise ValueError(f"{path} not found: is {run} a training run directory?")
        rows = list(csv.DictReader(path.open()))
        for opponent in sorted({r["opponent"] for r in rows}):
            mine = [r for r in rows if r["opponent"] == opponent]
            steps = [int(r["env_steps"]) for r in mine]
            rate = [float(r["win_rate"]) for r in mine]
            ax.plot(steps, rate, marker="o", ms=3, label=f"{run.name} vs {opponent}")
            ax.fill_between(
                steps,
                [float(r["ci_low"]) for r in mine],
                [float(r["ci_high"]) for r in mine],
                alpha=0.2,
            )
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("win rate (duplicate deals)")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = Path(out) if out else Path(run_dirs[0]) / "curves.png"
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


