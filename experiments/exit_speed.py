"""Expert iteration's throughput: searched self-play decisions per second in this process and on
1 and 2 Ray actors, and the learner's samples per second, on the packaged 2p model.

    python experiments/exit_speed.py [--shards 8] [--games 8] [--worlds 32]

Each line plays the same shards (``exit_2p.yaml``'s expert: PIMC on ``--worlds`` inferred worlds,
the endgame search on the last two deals), after one warm-up shard for the compiled kernels; the
shards' data is the same on every line (checked). A searched decision is one with more than one
legal move. The learner line trains on the data as ``agents.experimental.exit.learn`` does.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from agents.experimental.exit import ExitConfig, ExitSection, LocalSelfPlay, learn, to_tensors  # noqa: E402  # noqa: E402
from agents.experimental.expert import (  # noqa: E402
    SHARD_FIELDS,
    ExpertConfig,
    PrivilegedCritic,
    Weights,
    concatenate,
    play_expert_shard,
    shard_seed,
)
from agents.learning.network import build_model, read_checkpoint  # noqa: E402
from agents.learning.policy import pretrained_path  # noqa: E402
from bastra_env import Rules  # noqa: E402


def digest(shards: list[dict]) -> str:
    h = hashlib.sha256()
    for shard in shards:
        for name in SHARD_FIELDS:
            h.update(np.ascontiguousarray(shard[name]).tobytes())
    return h.hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--games", type=int, default=8, help="games (rounds) a shard")
    parser.add_argument("--worlds", type=int, default=32)
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = build_model(read_checkpoint(pretrained_path("bastra_2p")))
    weights = Weights.of(model)
    expert = ExpertConfig(rules=Rules(num_players=2, max_rounds=1).to_dict(),
                          worlds=args.worlds, games=args.games)  # fmt: skip
    seeds = [shard_seed(0, 1, s) for s in range(args.shards)]
    runners: list[tuple[str, object]] = [("in this process (ray_workers: 0)", LocalSelfPlay())]
    try:
        from agents.integrations.ray_cluster import init_ray
        from agents.integrations.ray_selfplay import RaySelfPlay

        init_ray(num_cpus=2)  # one Ray instance for both lines (RAY_ADDRESS: that cluster)

        runners += [(f"{n} Ray actor{'s' * (n > 1)}", RaySelfPlay(n)) for n in (1, 2)]
    except ImportError as error:
        print(f"(no Ray lines: {error})")
    print("| self-play | searched decisions/s | decisions/s | data | seconds |")
    print("| --- | --- | --- | --- | --- |")
    data = None
    for name, runner in runners:
        runner.run(play_expert_shard, (weights, expert), [shard_seed(1, 0, 0)])  # warm-up
        started = time.perf_counter()
        shards = runner.run(play_expert_shard, (weights, expert), seeds)
        seconds = time.perf_counter() - started
        searched = sum(int(s["searched_decisions"]) for s in shards)
        decisions = sum(int(s["decisions"]) for s in shards)
        print(f"| {name} | {searched / seconds:,.0f} | {decisions / seconds:,.0f} | "
              f"{digest(shards)} | {seconds:.1f} |")  # fmt: skip
        data = data or to_tensors(concatenate(shards))
        runner.close()
    assert data is not None
    config = ExitConfig(algorithm="exit", exit=ExitSection(epochs=2, minibatch_size=512))
    critic = PrivilegedCritic(model.config.observation_size)
    optimizer = torch.optim.Adam([*model.parameters(), *critic.parameters()], lr=3e-4)
    for threads in (1, 2):
        torch.set_num_threads(threads)
        started = time.perf_counter()
        stats = learn(model, critic, optimizer, [data], config, torch.Generator().manual_seed(0),
                      torch.device("cpu"))  # fmt: skip
        seconds = time.perf_counter() - started
        print(f"learner, {threads} thread{'s' * (threads > 1)}: {stats['samples'] / seconds:,.0f} "
              f"samples/s ({stats['samples']:,} samples in {seconds:.1f} s)")  # fmt: skip


if __name__ == "__main__":
    main()
