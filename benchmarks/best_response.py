"""Exploitability probe: how much a learner trained only against a frozen policy gains on it.

    python benchmarks/best_response.py --model bastra_2p [--plays 2000000] [--deals 500]
    python benchmarks/best_response.py --model bastra_4p_teams

A learner starts from the policy's own weights and trains with ``agents.train``'s PPO (the table's
shipped config) against that policy, frozen, as its only opponent (``init_from`` the model,
``baseline_opponents: [model]``, ``baseline_prob: 1``, no self-play and no pool) for ``--plays``
plays. Every ``--every`` updates its checkpoint meets the frozen policy on the same ``--deals``
duplicate deals (single rounds, seats swapped, both playing as ``load_policy`` gives them:
network plus endgame search): round win rate and points per round, each with a 95% interval.
The first point is the policy against itself (50%, 0 points: the anchor). At the end the last
learner also plays ``--final-deals`` duplicate deals of full games to 100. A policy whose best
response gains little is hard to beat.

Writes ``OUT.json`` and ``OUT.png`` (the curve), ``OUT`` defaulting to
``docs/best_response_<model>``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import load_policy  # noqa: E402
from agents.evaluation.matches import duplicate_match  # noqa: E402
from agents.learning.network import read_checkpoint  # noqa: E402
from agents.training.command import main as train_main  # noqa: E402
from agents.training.config import load_yaml, merge, resolve_config  # noqa: E402

TABLE_OF = {"bastra_2p": "2p", "bastra_4p_teams": "4p_teams"}


def probe_config(model: str, table: str, plays: int, every: int, seed: int) -> dict:
    config = load_yaml(resolve_config(table))
    return merge(config, {
        "seed": seed,
        "init_from": model,
        "eval": {"opponents": ["greedy"], "deals": 20},
        "ppo": {**config.get("ppo", {}), "total_env_steps": plays, "baseline_opponents": [model],
                "baseline_prob": 1.0, "pool_prob": 0.0, "imitation_samples": 0,
                "eval_every": 0, "checkpoint_every": every},
    })  # fmt: skip


def measure(learner, frozen, table: str, deals: int, seed: int, mode: str, name: str):
    return duplicate_match(learner, frozen, table=table, deals=deals, mode=mode, seed=seed,
                           names=(name, "frozen"), progress=True)  # fmt: skip


def plot(points: list[dict], model: str, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [p["plays"] for p in points]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    rate = [p["win_rate"] for p in points]
    left.plot(steps, rate, marker="o", ms=3)
    left.fill_between(steps, [p["ci_low"] for p in points], [p["ci_high"] for p in points],
                      alpha=0.25)  # fmt: skip
    left.axhline(0.5, color="grey", lw=0.8, ls="--")
    left.set_ylabel("round win rate vs the frozen policy")
    diff = [p["point_diff"] for p in points]
    half = [p["point_diff_ci"] for p in points]
    right.plot(steps, diff, marker="o", ms=3, color="tab:orange")
    right.fill_between(steps, [d - h for d, h in zip(diff, half, strict=True)],
                       [d + h for d, h in zip(diff, half, strict=True)], alpha=0.25,
                       color="tab:orange")  # fmt: skip
    right.axhline(0.0, color="grey", lw=0.8, ls="--")
    right.set_ylabel("points per round vs the frozen policy")
    for ax in (left, right):
        ax.set_xlabel("training plays of the best response")
        ax.grid(alpha=0.3)
    fig.suptitle(f"Best response to {model} (95% intervals)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="bastra_2p", help="a packaged model or a checkpoint")
    parser.add_argument("--table", choices=["2p", "4p_teams"], help="default: the model's")
    parser.add_argument("--plays", type=int, default=2_000_000, help="training plays")
    parser.add_argument("--every", type=int, default=50, help="updates between curve points")
    parser.add_argument("--deals", type=int, default=500, help="duplicate deals a point (x2)")
    parser.add_argument("--final-deals", type=int, default=500, help="full-game deals at the end")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--run-dir", help="default: runs/best_response_<model>")
    parser.add_argument("--out", help="default: docs/best_response_<model> (.json, .png)")
    args = parser.parse_args()
    stem = Path(args.model).stem
    table = args.table or TABLE_OF.get(args.model)
    if table is None:
        parser.error("--table is needed for a checkpoint path")
    run_dir = Path(args.run_dir or ROOT / "runs" / f"best_response_{stem}")
    out = Path(args.out or ROOT / "docs" / f"best_response_{stem}")
    run_dir.mkdir(parents=True, exist_ok=True)
    config_path = run_dir / "probe_config.yaml"
    config = probe_config(args.model, table, args.plays, args.every, args.seed)
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))

    start = time.perf_counter()
    train_main(["--config", str(config_path), "--run-dir", str(run_dir)])
    train_seconds = time.perf_counter() - start
    torch.set_num_threads(1)

    frozen = load_policy(args.model)
    checkpoints = sorted(run_dir.glob("checkpoint_*.pt")) + [run_dir / "final.pt"]
    points = []
    for path in [None, *checkpoints]:
        if path is None:
            learner, plays = load_policy(args.model), 0
        else:
            learner, plays = load_policy(path), int(read_checkpoint(path)["env_steps"])
        result = measure(learner, frozen, table, args.deals, args.seed, "round", f"br@{plays}")
        points.append({"plays": plays, **asdict(result)})
        print(f"{plays:>10,} plays: {result.win_rate:.1%} [{result.ci_low:.1%}, "
              f"{result.ci_high:.1%}] of {result.games} rounds, {result.point_diff:+.2f} "
              f"± {result.point_diff_ci:.2f} points a round", flush=True)  # fmt: skip
    final = measure(load_policy(run_dir / "final.pt"), frozen, table, args.final_deals,
                    args.seed, "game", "br-final")  # fmt: skip
    print(f"full games, final learner vs {args.model}: {final.line()}")
    plot(points, args.model, out.with_suffix(".png"))
    payload = {
        "model": args.model,
        "table": table,
        "training_plays": int(read_checkpoint(run_dir / "final.pt")["env_steps"]),
        "train_seconds": round(train_seconds, 1),
        "config": config,
        "curve": points,
        "final_full_games": asdict(final),
    }
    out.with_suffix(".json").write_text(json.dumps(payload, indent=2))
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
