"""A candidate model against the packaged one it would replace, on issue 42's shipping bars.

    python experiments/candidate.py runs/endgame_2p_100m/final.pt [--table 2p] [--deals 300]
        [--json docs/candidate_2p.json]

Full games to 100 on ``--deals`` duplicate deals (seed 2026), variance-reduced, one thread:

- the candidate as shipped (``load_policy``: the network with the table's endgame search) against
  the packaged model as shipped (the bar: at least 55%);
- the candidate's network alone and the packaged network alone, each against the heuristic and
  ``pimc:64`` on the same deals (the bar: the network alone at least 5 points of win rate above
  the packaged one against each).

Each line is printed as it finishes and the file is rewritten after each.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from experiments.dmc_vs_ppo import rate  # noqa: E402

PACKAGED = {"2p": "bastra_2p", "4p_teams": "bastra_4p_teams"}
YARDSTICKS = ("heuristic", "pimc:64")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("candidate", help="the candidate's checkpoint")
    parser.add_argument("--table", choices=list(PACKAGED), default="2p")
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--json", type=Path, help="default: docs/candidate_<table>.json")
    args = parser.parse_args()
    torch.set_num_threads(1)
    out = args.json or ROOT / "docs" / f"candidate_{args.table}.json"
    packaged = PACKAGED[args.table]
    study: dict[str, Any] = {
        "candidate": args.candidate,
        "packaged": packaged,
        "table": args.table,
        "deals": args.deals,
        "seed": 2026,
        "command": f"python experiments/candidate.py {args.candidate} --table {args.table} "
        f"--deals {args.deals}",
        "lines": [],
    }
    plan = [(args.candidate, packaged, ("candidate", packaged))]
    for yardstick in YARDSTICKS:
        plan.append((f"{args.candidate}:network", yardstick, ("candidate:network", yardstick)))
        plan.append((f"{packaged}:network", yardstick, (f"{packaged}:network", yardstick)))
    for a, b, names in plan:
        study["lines"].append(rate(a, b, names, args.deals, args.table))
        out.write_text(json.dumps(study, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
