"""A league against PPO at equal wall-clock: each trains the 2p game from scratch for the same
minutes on one thread; then both networks alone are rated on the same duplicate deals, and each
is probed for its exploitability the same way.

    python experiments/league_vs_ppo.py [--minutes 20] [--deals 300] [--ppo-from FILE]

The arms: ``configs/2p.yaml`` (PPO, the packaged model's first stage) and
``agents/experimental/configs/league_2p.yaml`` (the same games, pool, built-in opponents and
network, and an exploiter every 200 updates), trained as ``experiments/dmc_vs_ppo.py`` trains its
arms (a constant learning rate, a checkpoint every 20 updates, no evaluation, ``threads: 1``,
stopped after ``--minutes``). ``--ppo-from docs/dmc_vs_ppo.json`` takes that study's PPO arm (the
same command and minutes) in place of training it again. Then:

- each network alone plays full games against the heuristic, and the league's against PPO's, on
  ``--deals`` duplicate deals (seed 2026), variance-reduced;
- the exploitability probe on each final network: an exploiter forked from it trains against it
  frozen for the league's ``exploiter_updates`` and is measured against it as the league measures
  its own (``experiments/exploitability.py``'s probe, the same stream for both);
- the league's own probes over its training (``league.csv``) and the two final probes are
  plotted (``--plot``).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.learning.network import read_checkpoint  # noqa: E402
from experiments.dmc_vs_ppo import rate, train_for  # noqa: E402
from experiments.exploitability import probe  # noqa: E402

ARMS = {"ppo": ("2p", "ppo"), "league": ("league_2p", "league")}
"""Each arm's config and section."""


def plot(curve: list[dict[str, str]], finals: dict[str, dict[str, Any]], arms: dict,
         out: Path) -> None:  # fmt: skip
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plays = [int(r["env_steps"]) / 1e6 for r in curve]
    diff = [float(r["point_diff"]) for r in curve]
    half = [float(r["point_diff_ci"]) for r in curve]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.errorbar(plays, diff, yerr=half, marker="o", ms=4, capsize=3,
                label="the league's exploiters during its run")  # fmt: skip
    for arm, name, color in (("league", "league", "tab:blue"), ("ppo", "PPO", "tab:red")):
        found = finals[arm]
        ax.errorbar([arms[arm]["plays"] / 1e6], [found["point_diff"]],
                    yerr=[found["point_diff_ci"]], marker="s", ms=7, capsize=4, color=color,
                    ls="none", label=f"probe of the final {name} network")  # fmt: skip
    ax.axhline(0.0, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("the main network's training plays (millions)")
    ax.set_ylabel("exploiter's points a round over it")
    ax.set_title("Exploitability over training, 2p (95% intervals)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--ppo-from", type=Path, help="a dmc_vs_ppo.json whose PPO arm to take")
    parser.add_argument("--runs", type=Path, default=ROOT / "runs" / "league_vs_ppo")
    parser.add_argument("--json", type=Path, default=ROOT / "docs" / "league_vs_ppo.json")
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "league_2p.png")
    args = parser.parse_args()
    torch.set_num_threads(1)
    arms: dict[str, dict[str, Any]] = {}
    if args.ppo_from:
        arms["ppo"] = json.loads(args.ppo_from.read_text())["arms"]["ppo"]
        if arms["ppo"]["wall_seconds"] < 60 * args.minutes - 30:
            raise SystemExit(f"{args.ppo_from}'s PPO arm trained for fewer minutes")
    else:
        arms["ppo"] = train_for("ppo", args.minutes, args.runs / "ppo", ARMS)
    arms["league"] = train_for("league", args.minutes, args.runs / "league", ARMS)
    for arm, found in arms.items():
        print(f"{arm}: {found['plays']:,} plays in {found['wall_seconds']:.0f} s", flush=True)
    spec = {arm: f"{ROOT / found['checkpoint']}:network" for arm, found in arms.items()}
    lines = [rate(spec[arm], "heuristic", (arm, "heuristic"), args.deals) for arm in ARMS]
    lines.append(rate(spec["league"], spec["ppo"], ("league", "ppo"), args.deals))
    finals = {arm: probe(ROOT / found["checkpoint"]) for arm, found in arms.items()}
    last = read_checkpoint(ROOT / arms["league"]["checkpoint"])["update"]
    table = args.runs / "league" / "league.csv"  # the exploiters up to the last checkpoint
    rows = list(csv.DictReader(table.open())) if table.exists() else []
    curve = [row for row in rows if int(row["update"]) <= last]
    plot(curve, finals, arms, args.plot)
    study = {"minutes": args.minutes, "deals": args.deals, "seed": 2026, "arms": arms,
             "lines": lines, "final_probes": finals, "league_probes": curve,
             "command": f"python experiments/league_vs_ppo.py --minutes {args.minutes:g} "
                        f"--deals {args.deals}"
                        + (f" --ppo-from {args.ppo_from}" if args.ppo_from else "")}  # fmt: skip
    args.json.write_text(json.dumps(study, indent=1) + "\n")
    print(f"wrote {args.json} and {args.plot}")


if __name__ == "__main__":
    main()
