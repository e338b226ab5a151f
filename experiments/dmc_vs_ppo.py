"""Deep Monte-Carlo against PPO at equal wall-clock: each trains the 2p game from scratch for the
same minutes on one thread, then both networks alone are rated on the same duplicate deals.

    python experiments/dmc_vs_ppo.py [--minutes 20] [--deals 300] [--json docs/dmc_vs_ppo.json]

The arms: ``configs/2p.yaml`` (PPO, the packaged model's first stage) and
``agents/experimental/configs/dmc_2p.yaml`` (DMC on the same games, pool, built-in opponents and
network), both with a constant learning rate (a schedule would depend on the plays each reaches
in the time), a checkpoint every 20 updates, evaluation off, ``threads: 1``. Each run is stopped
after ``--minutes`` (start-up included) and its last checkpoint is its result. Then each network
alone plays full games against the heuristic, and DMC against PPO, on ``--deals`` duplicate deals
(seed 2026), variance-reduced, the plain estimates beside them.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.evaluation.matches import duplicate_match  # noqa: E402

ARMS = {"ppo": ("2p", "ppo"), "dmc": ("dmc_2p", "dmc")}
"""Each arm's config and section."""


def train_for(
    arm: str, minutes: float, run_dir: Path, arms: dict[str, tuple[str, str]] = ARMS
) -> dict[str, Any]:
    """Train ``arm`` (of ``arms``) for ``minutes`` of wall-clock; its last readable checkpoint
    and plays."""
    config, section = arms[arm]
    run_dir = run_dir.resolve()
    command = [sys.executable, str(ROOT / "train.py"), "--config", config, "--run-dir",
               str(run_dir), "threads=1", f"{section}.anneal_lr=false",
               f"{section}.total_env_steps=1000000000", f"{section}.checkpoint_every=20",
               f"{section}.eval_every=0"]  # fmt: skip
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        process.wait(timeout=60 * minutes)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGTERM)
        process.wait()
    seconds = time.perf_counter() - started
    for path in sorted(run_dir.glob("checkpoint_*.pt"), reverse=True):
        try:
            payload = torch.load(path, map_location="cpu", weights_only=False)
        except Exception:  # the checkpoint being written when the run was stopped
            continue
        return {"arm": arm, "checkpoint": str(path.relative_to(ROOT)),
                "plays": int(payload["env_steps"]),
                "train_seconds": float(payload["train_seconds"]), "wall_seconds": seconds,
                "command": "python " + " ".join(str(Path(c).relative_to(ROOT)) if c.startswith(
                    str(ROOT)) else c for c in command[1:])}  # fmt: skip
    raise SystemExit(f"{arm}: no checkpoint in {run_dir} after {minutes} minutes")


def rate(a: str, b: str, names: tuple[str, str], deals: int, table: str = "2p") -> dict[str, Any]:
    """A against B, full games on ``deals`` duplicate deals (seed 2026), variance-reduced, one
    thread: the line printed, the match's figures returned (its time in ``seconds``)."""
    result = duplicate_match(a, b, table=table, deals=deals, mode="game", seed=2026,
                             names=names, num_threads=1, variance_reduction=True)  # fmt: skip
    print(result.line(), flush=True)
    return result.to_json(per_deal=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--runs", type=Path, default=ROOT / "runs" / "dmc_vs_ppo")
    parser.add_argument("--json", type=Path, default=ROOT / "docs" / "dmc_vs_ppo.json")
    args = parser.parse_args()
    torch.set_num_threads(1)
    arms = {arm: train_for(arm, args.minutes, args.runs / arm) for arm in ARMS}
    for arm, found in arms.items():
        print(f"{arm}: {found['plays']:,} plays in {found['wall_seconds']:.0f} s", flush=True)
    spec = {arm: f"{ROOT / found['checkpoint']}:network" for arm, found in arms.items()}
    lines = [rate(spec[arm], "heuristic", (arm, "heuristic"), args.deals) for arm in ARMS]
    lines.append(rate(spec["dmc"], spec["ppo"], ("dmc", "ppo"), args.deals))
    study = {"minutes": args.minutes, "deals": args.deals, "seed": 2026, "arms": arms,
             "lines": lines,
             "command": f"python experiments/dmc_vs_ppo.py --minutes {args.minutes:g} "
                        f"--deals {args.deals}"}  # fmt: skip
    args.json.write_text(json.dumps(study, indent=1) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
