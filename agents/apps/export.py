"""Copy the policy out of a training checkpoint, without the optimiser, pool and RNG state.

    python -m agents.export runs/x/final.pt agents/pretrained/bastra_2p.pt

The result is what ``load_policy`` needs (a few MB at most) plus the run's config and rules, so
a shipped model says how it was trained.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agents.learning.network import build_model, read_checkpoint, save_checkpoint

KEPT = ("config", "rules", "update", "env_steps", "samples", "train_seconds")


def export_policy(source: str | Path, target: str | Path) -> Path:
    payload = read_checkpoint(source)
    model = build_model(payload)
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    save_checkpoint(target, model, **{k: payload[k] for k in KEPT if k in payload})
    return target


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source")
    parser.add_argument("target")
    args = parser.parse_args(argv)
    target = export_policy(args.source, args.target)
    print(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
