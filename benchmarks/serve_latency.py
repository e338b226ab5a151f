"""The web app under load: how fast the AI answers, many clients at once, memory while games are
abandoned.

    python benchmarks/serve_latency.py [--games 20] [--clients 50] [--abandoned 1000]

Starts ``python -m agents.serve`` as its own process on a free loopback port, then, through the
HTTP API as the page uses it:

1. one client plays ``--games`` full 2p games to 100 against the packaged 2p model, network alone
   (``endgame: false``), then with its endgame search: the server's time choosing each AI reply
   (``ai_ms``) and the client's round trip per play, p50 / p95 / p99, beside the 100 ms target;
2. ``--clients`` clients play one-round games at once: every request's round trip;
3. ``--abandoned`` games are created and never played: the server's resident memory before and
   after, and how many games it holds (``--max-games``).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TARGET_MS = 100.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentiles(values: list[float]) -> str:
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    return f"p50 {p50:6.2f} ms   p95 {p95:6.2f} ms   p99 {p99:6.2f} ms   max {max(values):6.2f} ms"


async def play_game(http: httpx.AsyncClient, body: dict, rng: random.Random, trips: list, ai: list):
    response = await http.post("/api/games", json=body)
    response.raise_for_status()
    state = response.json()
    while not state["done"]:
        action = rng.choice(state["legal"])["action"]
        start = time.perf_counter()
        response = await http.post(
            f"/api/games/{state['game_id']}/actions",
            json={"action": action, "move": state["move"]},
        )
        trips.append(1000 * (time.perf_counter() - start))
        response.raise_for_status()
        before = state["move"]
        state = response.json()
        replies = state["move"] - before - 1
        if replies == 1:  # one AI play answered this one (2p): its decision time alone
            ai.append(state["ai_ms"])
    return state


async def run(args: argparse.Namespace, base: str, pid: int) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=120) as http:
        for endgame in (False, True):
            trips: list[float] = []
            ai: list[float] = []
            rng = random.Random(args.seed)
            start = time.perf_counter()
            for g in range(args.games):
                body = {"opponent": "bastra_2p", "endgame": endgame, "seed": args.seed + g}
                await play_game(http, body, rng, trips, ai)
            label = "network + endgame search" if endgame else "network alone"
            print(f"\n{args.games} full 2p games vs bastra_2p, {label} "
                  f"({len(ai)} AI replies, {time.perf_counter() - start:.1f} s)")  # fmt: skip
            print(f"  AI decision (server)  {percentiles(ai)}   target p95 < {TARGET_MS:.0f} ms")
            print(f"  play round trip       {percentiles(trips)}")

        trips = []
        start = time.perf_counter()
        body = {"opponent": "bastra_2p", "endgame": False, "rules": {"max_rounds": 1}}
        finals = await asyncio.gather(
            *(play_game(http, body, random.Random(k), trips, []) for k in range(args.clients))
        )
        wall = time.perf_counter() - start
        ok = sum(1 for f in finals if f["done"])
        print(f"\n{args.clients} clients at once, one-round games: {ok}/{args.clients} finished, "
              f"{len(trips)} plays in {wall:.1f} s, no errors")  # fmt: skip
        print(f"  play round trip       {percentiles(trips)}")

        before = rss_mib(pid)
        for k in range(args.abandoned):
            response = await http.post("/api/games", json={"opponent": "greedy"})
            response.raise_for_status()
            if k == args.abandoned // 5:
                early = rss_mib(pid)
        after = rss_mib(pid)
        print(f"\n{args.abandoned} games created and abandoned (server holds at most "
              f"{args.max_games}): resident memory {before:.0f} MiB before, {early:.0f} MiB after "
              f"{args.abandoned // 5 + 1}, {after:.0f} MiB after all")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--abandoned", type=int, default=1000)
    parser.add_argument("--max-games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    port = free_port()
    command = [sys.executable, "-m", "agents.serve", "--port", str(port),
               "--max-games", str(args.max_games)]  # fmt: skip
    server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        print(server.stdout.readline().strip())  # "Bastra table at ..." once it is up
        base = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                httpx.get(base + "/api/options", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        asyncio.run(run(args, base, server.pid))
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
