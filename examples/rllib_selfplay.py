"""Self-play PPO with Ray RLlib (new API stack), then a duplicate match against random.

    pip install -e ".[rllib]"
    python examples/rllib_selfplay.py --table 2p --iterations 20 --num-env-runners 1 \\
        --envs-per-runner 8 --checkpoint-dir runs/rllib_2p --seed 0
    python examples/rllib_selfplay.py --table 4p_teams --checkpoint-dir runs/rllib_4p

Locally this starts its own Ray instance. On a cluster, leave ``RAY_ADDRESS`` set (for example
``RAY_ADDRESS=auto`` on a node of the cluster): the run connects to it and ships this project to
every node (``agents.integrations.rllib.cluster_runtime_env``). A cluster with Ray's token
authentication (the README's multi-node steps) also needs ``RAY_AUTH_MODE=token`` and its token
(``~/.ray/auth_token``, ``RAY_AUTH_TOKEN_PATH`` or ``RAY_AUTH_TOKEN``) here. The checkpoint is
written on the driver; the evaluation runs there too, without Ray, through
``agents.load_policy(checkpoint_dir)``.
"""

from __future__ import annotations

import argparse

import torch

from agents import load_policy, make_policy
from agents.evaluation.matches import duplicate_match
from agents.integrations.rllib import CONFIG_DEFAULTS as DEFAULTS
from agents.integrations.rllib import TABLES, cluster_runtime_env, train_rllib


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", choices=list(TABLES), default=DEFAULTS["table"])
    parser.add_argument("--iterations", type=int, default=20, help="algo.train() calls")
    parser.add_argument(
        "--num-env-runners", type=int, default=DEFAULTS["num_env_runners"], help="0: in the driver"
    )
    parser.add_argument("--envs-per-runner", type=int, default=DEFAULTS["envs_per_runner"])
    parser.add_argument("--checkpoint-dir", default="runs/rllib")
    parser.add_argument("--seed", type=int, default=DEFAULTS["seed"])
    parser.add_argument(
        "--train-batch-size", type=int, default=DEFAULTS["train_batch_size"], help="env steps"
    )
    parser.add_argument("--minibatch-size", type=int, default=DEFAULTS["minibatch_size"])
    parser.add_argument("--num-epochs", type=int, default=DEFAULTS["num_epochs"])
    parser.add_argument("--snapshot-every", type=int, default=DEFAULTS["snapshot_every"])
    parser.add_argument("--pool-size", type=int, default=DEFAULTS["pool_size"])
    parser.add_argument("--deals", type=int, default=100, help="evaluation deals (x2 games)")
    parser.add_argument("--torch-threads", type=int, default=1, help="the driver's, for learning")
    parser.add_argument(
        "--ray-pip",
        action="append",
        default=[],
        metavar="REQUIREMENT",
        help="on a cluster (RAY_ADDRESS set): also pip-install this on the nodes (repeatable)",
    )
    args = parser.parse_args(argv)
    positive = ("iterations", "envs_per_runner", "train_batch_size", "minibatch_size",
                "num_epochs", "snapshot_every", "pool_size", "deals", "torch_threads")  # fmt: skip
    for name in positive:
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.num_env_runners < 0:
        parser.error("--num-env-runners must be at least 0")

    run = train_rllib(
        table=args.table,
        iterations=args.iterations,
        num_env_runners=args.num_env_runners,
        envs_per_runner=args.envs_per_runner,
        seed=args.seed,
        checkpoint_dir=args.checkpoint_dir,
        snapshot_every=args.snapshot_every,
        pool_size=args.pool_size,
        train_batch_size=args.train_batch_size,
        minibatch_size=args.minibatch_size,
        num_epochs=args.num_epochs,
        runtime_env=cluster_runtime_env(args.ray_pip) if args.ray_pip else None,
        torch_threads=args.torch_threads,
    )
    print(
        f"trained {run.iterations} iterations, {run.env_steps:,} env steps in "
        f"{run.train_seconds:.0f} s ({run.env_steps / max(run.train_seconds, 1e-9):.0f} steps/s); "
        f"snapshot pool: {', '.join(run.snapshot_pool) or 'empty'}"
    )

    torch.set_num_threads(1)  # one game at a time: batch-1 inference is fastest on one thread
    policy = load_policy(run.checkpoint_dir)
    result = duplicate_match(
        policy,
        make_policy("random", seed=args.seed + 1),
        table=args.table,
        deals=args.deals,
        mode="round",
        seed=args.seed,
        names=("rllib", "random"),
    )
    print(result.line())
    print(f"win rate against random: {result.win_rate:.1%}")
    return result.win_rate


if __name__ == "__main__":
    main()
