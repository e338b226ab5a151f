"""The README's first command, timed: ``python train.py --config configs/quick.yaml``.

    python benchmarks/quick_run.py --json docs/quick_run.json

Runs the command once, as a reader would, in a fresh run folder, and records the plays it trains,
its training seconds and threads (the run's ``summary.json``), the wall time of the whole command
(start-up, the kernels loaded from their cache or compiled, training, the final evaluation), the
win rates it ends with, and the machine (cores this process may use, the load average before the
run: other work on the cores slows it and ``threads: auto`` then takes fewer). README.md and
docs/getting-started.md quote the file; ``tests/test_docs.py`` checks that they do.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the figures to this file (docs/quick_run.json)")
    args = parser.parse_args()
    command = [sys.executable, "train.py", "--config", "configs/quick.yaml"]
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        subprocess.run([*command, "--run-dir", folder], cwd=ROOT, check=True)
        wall = time.perf_counter() - start
        summary = json.loads((Path(folder) / "summary.json").read_text())
        with (Path(folder) / "eval.csv").open(newline="") as rows:
            last_eval = list(csv.DictReader(rows))[-1]  # the final evaluation's last opponent
    figures = {
        "command": "python train.py --config configs/quick.yaml",
        "plays": summary["env_steps"],
        "train_seconds": round(summary["train_seconds"]),
        "wall_seconds": round(wall),
        "threads": summary["threads"],
        "win_rates": {name: round(100 * rate, 1) for name, rate in summary["final_eval"].items()},
        "eval_games": int(last_eval["games"]),
        "eval": f"{summary['eval_mode']}s on duplicate deals, the network alone",
        "cores": len(os.sched_getaffinity(0)),
        "load_average_before": round(load, 2),
        "date": time.strftime("%Y-%m-%d"),
    }
    print(json.dumps(figures, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n")
        print(f"wrote {args.json} (python docs/figures.py puts it on the pages that quote it)")


if __name__ == "__main__":
    main()
