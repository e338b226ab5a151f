"""The README's first command on a machine where other work already holds a core.

    python experiments/busy_machine.py [--steps 60000] [--json docs/busy_machine.json]

Starts a busy loop pinned to one of this process's cores, then trains the README's first config
(``configs/quick.yaml``, evaluation off) for ``--steps`` plays twice: with its default threads
(``threads: auto``), with ``--threads 1`` and with ``--threads 2`` (the config's setting before
``auto``); stops the loop, and trains once more with the
default on the idle machine. Env steps/s are read from each run's ``metrics.csv``
(``train_speed.measure``; the first update left out). The default must not be slower than one
thread by more than 10%: oversubscribed, torch's threads spin while they wait for a core.
``--json PATH`` writes the figures too: ``docs/busy_machine.json`` is the file the README, the
speed and the training pages quote (``docs/figures.py``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.train_speed import measure  # noqa: E402


def busy_loop() -> subprocess.Popen[bytes]:
    """A Python process spinning on the first core this process may use."""
    core = sorted(os.sched_getaffinity(0))[0]
    code = f"import os\nos.sched_setaffinity(0, {{{core}}})\nwhile True:\n    pass"
    return subprocess.Popen([sys.executable, "-c", code])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60_000)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    rows = []
    loop = busy_loop()
    try:
        runs: tuple[tuple[str, int | str], ...] = (
            ("default (`threads: auto`)", "auto"), ("`--threads 1`", 1),
            ("`--threads 2` (the config's old setting)", 2),
        )  # fmt: skip
        for label, threads in runs:
            found = measure("quick", args.steps, threads)
            rows.append((f"{label}, one core busy", found["steps"] / found["seconds"]))
    finally:
        loop.kill()
        loop.wait()
    found = measure("quick", args.steps, "auto")
    rows.append(("default (`threads: auto`), idle machine", found["steps"] / found["seconds"]))
    anchor = rows[1][1]
    print(f"\n{'configs/quick.yaml':<42} {'env steps/s':>12} {'vs --threads 1, busy':>22}")
    for label, rate in rows:
        print(f"{label:<42} {rate:>12,.0f} {rate / anchor:>21.2f}x")
    print(f"({os.cpu_count()} cores on this machine, {len(os.sched_getaffinity(0))} for this "
          f"process; {args.steps:,} plays a run)")  # fmt: skip
    if args.json:
        measured = {
            "command": "python experiments/busy_machine.py",
            "date": str(datetime.date.today()),
            "steps": args.steps,
            "cores": len(os.sched_getaffinity(0)),
            "rows": [{"label": label, "steps_per_s": rate} for label, rate in rows],
        }
        args.json.write_text(json.dumps(measured, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json} (python docs/figures.py puts it on the pages that quote it)")


if __name__ == "__main__":
    main()
