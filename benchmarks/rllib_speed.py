"""RLlib training throughput (new API stack, ``agents.integrations.rllib``): env steps per second,
2p and 4p.

    python benchmarks/rllib_speed.py [--num-env-runners 0,1] [--iterations 3] [--tables 2p,4p_teams]

For each table and each number of EnvRunners it builds the PPO algorithm of ``train_rllib`` (same
model, league and defaults unless overridden), runs one warm-up ``algo.train()`` call, then times
``--iterations`` more: env steps/s is the env steps they sampled over their wall time (sampling,
the learner update and the weight sync together). An env step is one play by any seat (the
frozen side's included). ``num_env_runners=0`` samples in the driver; with ``n > 0`` the driver
only learns. ``--torch-threads`` sets the driver's torch threads as ``train_rllib`` does (Ray
gives each EnvRunner one thread).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from agents.integrations.rllib import TABLES, build_config, init_ray  # noqa: E402


def int_list(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def measure(table: str, runners: int, args: argparse.Namespace) -> dict[str, float]:
    config = build_config(
        table=table,
        num_env_runners=runners,
        envs_per_runner=args.envs_per_runner,
        train_batch_size=args.train_batch_size,
        minibatch_size=args.minibatch_size,
        num_epochs=args.num_epochs,
        hidden=args.hidden,
        snapshot_every=1,  # the pool fills while timing, as in training
        seed=0,
    )
    algo = config.build_algo()
    try:
        algo.train()  # warm-up: actors, caches, first weight sync
        steps = 0
        start = time.perf_counter()
        for _ in range(args.iterations):
            steps += algo.train()["env_runners"]["num_env_steps_sampled"]
        seconds = time.perf_counter() - start
    finally:
        algo.stop()
    return {"steps": steps, "seconds": seconds, "rate": steps / seconds}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default="2p,4p_teams", help="comma-separated")
    parser.add_argument("--num-env-runners", type=int_list, default=[0, 1], help="e.g. 0,1,2")
    parser.add_argument("--envs-per-runner", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=3, help="timed, after one warm-up")
    parser.add_argument("--train-batch-size", type=int, default=4096)
    parser.add_argument("--minibatch-size", type=int, default=512)
    parser.add_argument("--num-epochs", type=int, default=4)
    parser.add_argument("--hidden", type=int_list, default=[256, 256], help="e.g. 256,256")
    parser.add_argument("--torch-threads", type=int, default=1, help="the driver's; 0: torch's")
    args = parser.parse_args(argv)
    tables = [t for t in args.tables.split(",") if t]
    for table in tables:
        if table not in TABLES:
            parser.error(f"unknown table {table!r}; choose from {', '.join(TABLES)}")
    if args.iterations < 1:
        parser.error("--iterations must be at least 1")
    if not args.num_env_runners or min(args.num_env_runners) < 0:
        parser.error("--num-env-runners must list numbers >= 0")

    import ray

    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    started = init_ray()
    try:
        rows = [
            (table, runners, measure(table, runners, args))
            for table in tables
            for runners in args.num_env_runners
        ]
    finally:
        if started:
            ray.shutdown()
    print(
        f"\nbatch {args.train_batch_size} env steps, {args.envs_per_runner} envs per runner, "
        f"{args.num_epochs} epochs of minibatch {args.minibatch_size}, hidden {args.hidden}, "
        f"{args.iterations} timed iterations, driver torch threads {torch.get_num_threads()}"
    )
    print(f"{'table':<10} {'runners':>7} {'env steps/s':>12} {'s/iteration':>12}")
    for table, runners, r in rows:
        seconds = r["seconds"] / args.iterations
        print(f"{table:<10} {runners:>7} {r['rate']:>12,.0f} {seconds:>12.2f}")


if __name__ == "__main__":
    main()
