"""Expert iteration's policy targets, measured offline on a run's own data.

    python experiments/exit_targets.py RUN/checkpoint_000008.pt RUN/checkpoint_000010.pt

Trains the packaged 2p network on the first checkpoint's data buffer (two passes, as
``agents.experimental.exit.learn``) once per variant: the stored targets (the search's softmax at
the run's temperature, 1 point), sharper targets (the same values at 0.3 points: ``p ** (1 / 0.3)``
renormalised, exactly the softmax at 0.3), and no value loss on the trunk. Each is then measured on
the newest iteration of the second checkpoint's buffer (decisions it never trained on: how often
its favourite is the search's) and played, network alone, against the packaged network alone on
duplicate single rounds. First, as a ceiling, how often the expert agrees with itself.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from agents.evaluation.matches import duplicate_match  # noqa: E402
from agents.experimental.exit import (  # noqa: E402
    ExitConfig,
    ExitSection,
    learn,
)
from agents.experimental.expert import PrivilegedCritic  # noqa: E402
from agents.learning.features import action_inputs_batch  # noqa: E402
from agents.learning.network import build_model, read_checkpoint  # noqa: E402
from agents.learning.policy import pretrained_path  # noqa: E402
from agents.training.ppo import network_player  # noqa: E402


def sharpen(data: dict[str, torch.Tensor], temperature: float) -> dict[str, torch.Tensor]:
    """The buffer's targets at ``temperature`` points instead of 1."""
    out = dict(data)
    target = data["target"].float()
    if temperature != 1.0:
        target = target.clamp_min(1e-30).pow(1.0 / temperature) * (target > 0)
        target = target / target.sum(1, keepdim=True)
    out["target"] = target.half()
    return out


def agreement(model: torch.nn.Module, data: dict[str, torch.Tensor]) -> float:
    """The share of searched decisions where the network's favourite is the target's."""
    obs = data["obs"].float()
    actions, features = action_inputs_batch(obs.numpy(), data["mask"].numpy())
    slots = torch.from_numpy(actions)
    target = torch.cat([data["target"].float(), torch.zeros(len(obs), 1)], 1).gather(1, slots)
    with torch.no_grad():
        logits, _ = model.slot_logits(obs, slots, torch.from_numpy(features))
    rows = data["searched"]
    return float((logits.argmax(-1) == target.argmax(-1))[rows].float().mean())


def search_agreement(checkpoint: str, positions: int = 250) -> None:
    """How often the run's expert agrees with itself: two 32-world searches with different
    seeds, and 32 against 128 worlds, on searched decisions of the checkpoint's newest data."""
    import numpy as np

    from agents.experimental.expert import ExpertConfig
    from agents.learning.policy import LearnedPolicy

    payload = read_checkpoint(checkpoint)
    data, model = payload["buffer"][-1], build_model(payload)
    rows = np.flatnonzero(data["searched"].numpy())
    rows = rows[:: max(1, len(rows) // positions)][:positions]

    def expert(worlds: int, seed: int) -> LearnedPolicy:
        search = ExpertConfig(rules=payload["rules"], worlds=worlds).search()
        return LearnedPolicy(model, search, seed=seed)

    a, b, c = expert(32, 1), expert(32, 2), expert(128, 3)
    same = wider = 0
    for i in rows:
        seen = {
            "observation": data["obs"][i].float().numpy(),
            "action_mask": data["mask"][i].numpy(),
        }
        best = [max(values, key=values.__getitem__) for values in
                (p.move_values(seen) or {} for p in (a, b, c))]  # fmt: skip
        same += best[0] == best[1]
        wider += best[0] == best[2]
    print(f"{len(rows)} positions: two 32-world searches agree {same / len(rows):.1%}, "
          f"32 and 128 worlds {wider / len(rows):.1%}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train", help="the checkpoint whose data buffer to train on")
    parser.add_argument("fresh", help="a later checkpoint: its newest iteration is held out")
    parser.add_argument("--deals", type=int, default=400)
    parser.add_argument("--seed", type=int, default=777)
    args = parser.parse_args()
    torch.set_num_threads(1)
    search_agreement(args.fresh)
    buffer = read_checkpoint(args.train)["buffer"]
    fresh = read_checkpoint(args.fresh)["buffer"][-1]
    packaged = read_checkpoint(pretrained_path("bastra_2p"))
    base = network_player(build_model(packaged), "packaged")
    variants = [("temperature 1.0, value head on the trunk", 1.0, 0.5),
                ("temperature 0.3", 0.3, 0.5),
                ("no value loss on the trunk", 1.0, 0.0)]  # fmt: skip
    print("| variant | agreement on fresh decisions | against the packaged network |")
    print("| --- | --- | --- |")
    for name, temperature, vf_coef in variants:
        torch.manual_seed(0)
        model = build_model(packaged)
        critic = PrivilegedCritic(model.config.observation_size)
        optimizer = torch.optim.Adam([*model.parameters(), *critic.parameters()], lr=3e-4,
                                     eps=1e-5)  # fmt: skip
        config = ExitConfig(
            algorithm="exit", exit=ExitSection(epochs=2, minibatch_size=512, vf_coef=vf_coef)
        )
        learn(model, critic, optimizer, [sharpen(b, temperature) for b in buffer], config,
              torch.Generator().manual_seed(0), torch.device("cpu"))  # fmt: skip
        result = duplicate_match(network_player(model, "new"), base, table="2p",
                                 deals=args.deals, mode="round", seed=args.seed,
                                 names=("new", "packaged"))  # fmt: skip
        print(f"| {name} | {agreement(model, fresh):.1%} | {result.win_rate:.1%} "
              f"[{result.ci_low:.1%}, {result.ci_high:.1%}] |")  # fmt: skip


if __name__ == "__main__":
    main()
