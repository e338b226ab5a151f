"""How fast the frozen ladder rates a policy: ``bastra rate`` run to its default precision on a
fresh store for each policy, the rating, its 95% interval, the games and the time, beside the
anchor: the plain duplicate results of the same stored games fitted the same way (what the
interval would be without the variance-reduction corrections).

    python benchmarks/ladder_speed.py                               # the four default policies
    python benchmarks/ladder_speed.py --policies 2p:bastra_2p:network --precision 30
    python benchmarks/ladder_speed.py --json docs/ladder_runs.json

A policy is ``TABLE:NAME`` (``2p:heuristic``, ``4p_teams:bastra_4p_teams:network``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.evaluation.ladder import (  # noqa: E402
    Ladder,
    fit_rating,
    load_ladder,
    policy_identity,
    rate,
)
from agents.evaluation.store import RatingStore  # noqa: E402
from bastra_env.rules import TABLES  # noqa: E402

POLICIES = (
    "2p:bastra_2p:network",
    "2p:heuristic",
    "4p_teams:bastra_4p_teams:network",
    "4p_teams:heuristic",
)
"""A player of the shipped 2p network's strength, a weaker member, the same in the team game."""


def measure(ladder: Ladder, spec: str, minutes: float, precision: float) -> dict[str, Any]:
    table = ladder.table
    with tempfile.TemporaryDirectory() as folder:
        store = RatingStore(Path(folder) / "ratings.sqlite")
        result = rate(spec, table=table, minutes=minutes, precision=precision, store=store,
                      ladder=ladder, progress=True)  # fmt: skip
        history = store.matches(policy_identity(spec), table, ladder.version)
    plain, plain_ci = fit_rating([ladder.ratings[m.opponent] for m in history],
                                 [np.asarray(m.raw_win_values) for m in history])  # fmt: skip
    row = result.to_json()
    table_flag = " --table 4p_teams" if table == "4p_teams" else ""
    row["command"] = (f"bastra rate {spec}{table_flag} --minutes {minutes:g} "
                      f"--precision {precision:g} --store FRESH.sqlite --json FILE")  # fmt: skip
    row["plain"] = {"rating": plain, "ci": plain_ci}
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policies", nargs="+", default=list(POLICIES))
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--precision", type=float, default=20.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    ladders = {table: load_ladder(table) for table in TABLES}
    runs = []
    print(f"{'policy':<40} {'rating':>7} {'95%':>6} {'games':>6} {'time':>7} {'frozen':>7}"
          f" | plain on the same games")  # fmt: skip
    for line in args.policies:
        table, _, spec = line.partition(":")
        if table not in ladders or not spec:
            raise SystemExit(f"{line!r}: not TABLE:NAME with TABLE one of {list(ladders)}")
        row = measure(ladders[table], spec, args.minutes, args.precision)
        frozen = "" if row["ladder_rating"] is None else f"{row['ladder_rating']:.0f}"
        print(f"{line:<40} {row['rating']:>7.0f} {'±' + format(row['ci'], '.0f'):>6} "
              f"{row['games']:>6} {row['seconds']:>6.0f}s {frozen:>7} | "
              f"{row['plain']['rating']:.0f} ±{row['plain']['ci']:.0f}", flush=True)  # fmt: skip
        runs.append(row)
    if args.json:
        versions = {table: ladder.version for table, ladder in ladders.items()}
        out = {"machine": f"{os.cpu_count()} CPU cores", "ladder": versions, "runs": runs}
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
