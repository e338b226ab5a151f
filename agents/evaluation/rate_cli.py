"""``bastra rate``: a policy's Elo on the frozen ladder of its table (``agents.evaluation.ladder``).

examples:
    bastra rate POLICY [--table 2p|4p_teams] [--minutes M] [--precision E] [--json FILE]
    bastra rate bastra_2p:network --precision 20 --minutes 5
    bastra rate runs/2p/final.pt --store ratings.sqlite      # rated again: extended, not replayed
    bastra rate --list                                       # the stored ratings of a table
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import torch

from agents.evaluation.ladder import check_limits, load_ladder, rate
from agents.evaluation.store import RatingStore, default_store_path
from bastra_env.rules import TABLES


def main(argv: Sequence[str] | None = None) -> dict | None:
    parser = argparse.ArgumentParser(
        prog="bastra rate", description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n", 2)[2],
    )  # fmt: skip
    parser.add_argument("policy", nargs="?", help="a make_policy name, preset or checkpoint path")
    parser.add_argument("--table", choices=list(TABLES), default="2p")
    parser.add_argument("--minutes", type=float, default=5.0, help="stop after this long")
    parser.add_argument(
        "--precision", type=float, default=20.0,
        help="stop once the 95%% interval is at most +/- this many Elo",
    )  # fmt: skip
    parser.add_argument("--json", metavar="FILE", help="write the rating here")
    parser.add_argument("--store", metavar="PATH",
                        help=f"the SQLite file of matches and ratings (default: "
                        f"$BASTRA_RATINGS or {default_store_path()})")  # fmt: skip
    parser.add_argument("--ladder", metavar="FILE",
                        help="a ladder file instead of the table's packaged ladder")  # fmt: skip
    parser.add_argument("--list", action="store_true", help="print the stored ratings and stop")
    args = parser.parse_args(argv)
    try:
        check_limits(args.minutes, args.precision)
        store = RatingStore(args.store)
        ladder = load_ladder(args.table, args.ladder)
    except ValueError as error:
        parser.error(str(error))
    if args.list:
        for row in store.ratings(args.table):
            print(f"{row['rating']:7.0f} +/- {row['ci']:4.0f}  {row['games']:6d} games  "
                  f"{row['policy']}")  # fmt: skip
        return None
    if not args.policy:
        parser.error("give a POLICY to rate (or --list)")
    torch.set_num_threads(1)
    try:
        result = rate(args.policy, args.table, args.minutes, args.precision, store=store,
                      ladder=ladder, progress=True)  # fmt: skip
    except ValueError as error:
        parser.error(str(error))
    print(f"{result.policy} ({args.table}): {result.rating:.0f} Elo +/- {result.ci:.0f} (95%), "
          f"{result.games} games in {result.seconds:.0f} s against "
          + ", ".join(f"{m} ({ladder.ratings[m]:.0f}, {2 * d} games)"
                      for m, d in result.opponents.items()))  # fmt: skip
    if result.ladder_rating is not None:
        print(f"ladder member: frozen rating {result.ladder_rating:.0f}")
    payload = result.to_json()
    if args.json:
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n")
        print(f"wrote {args.json}")
    return payload


if __name__ == "__main__":
    main()
