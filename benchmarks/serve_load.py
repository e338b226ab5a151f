"""The web app under load: many clients against the strongest 2p player, and reads meanwhile.

    python benchmarks/serve_load.py [--clients 50] [--waves 2] [--json docs/serve_load.json]

Starts ``python -m agents.serve`` as its own process on a free loopback port, twice: first with
the AI's moves run on the event loop, as the app ran them before it moved them to threads (this
script swaps ``agents.apps.serve.off_loop`` for a direct call, in that process only), then as
shipped. Each time, after two warm-up games (the first searched moves of a process compile or
load the kernels), ``--clients`` clients play one-round 2p games against ``--opponent``
(``bastra_2p:infer``: the shipped model with its inference search) all at once, ``--waves``
times, while a prober reads the state of idle games (``GET /api/games/{id}``) every
``--probe-ms``. It prints, for both servers side by side:

- those reads' latency while the clients' requests were in flight (the AIs thinking): p50, p95
  and the worst, beside the 100 ms target;
- errors: any response other than 2xx, any failed request, a wave past ``--timeout``;
- corrupted games: each finished game's record (``GET /api/games/{id}/record``) is played again
  with the engine from its seed and moves and must give the same plays and scores; each round
  plays every card of the deck once, and its sides' cards add up to 52; every state a client
  received must be the record's table at that move (its hand, the board, the scores);
- leaks: a state may name no card but its seat's own hand, the board and cards played face up;
- the server's resident memory after the warm-up and after each wave (the store holds
  ``--clients`` + 8 games, so each wave's games push out the last wave's).

The figures go to ``--json``; ``docs/web.md`` quotes them. ``tests/test_serve_load.py`` runs the
same clients and checks, smaller, against a server in the test's own process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.evaluation.replay import build_record  # noqa: E402
from bastra_env import Rules  # noqa: E402

TARGET_MS = 100.0
CARD = re.compile(r'"([2-9TJQKA][CDHS])"')
"""A card's name as a JSON string (the rules' names: ``"TD"`` is the ten of diamonds)."""
SECRET_KEYS = {"hands", "deck", "seed", "game_seed", "deal"}
"""Keys no state may carry before the game is over."""
ON_LOOP = """\
import sys
import agents.apps.serve as serve

async def on_loop(work, *args):  # the AI's moves on the event loop, as before the threads
    return work(*args)

serve.off_loop = on_loop
sys.exit(serve.main(sys.argv[1:]))
"""


@dataclass
class Wave:
    """What the clients and the prober of one wave saw."""

    reads_ms: list[float] = field(default_factory=list)
    """Idle games' state reads started while some client request was in flight."""
    errors: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Corrupted games and leaked cards."""
    games: list[tuple[int, list[dict[str, Any]], dict[str, Any]]] = field(default_factory=list)
    """(seat, every state the client received, the finished game's record)."""
    in_flight: int = 0
    plays: int = 0
    wall_s: float = 0.0


# ------------------------------------------------------------------------------------ checks
def check_state(state: dict[str, Any], record: dict[str, Any], seat: int) -> list[str]:
    """What is wrong with one state a client received, seen against the finished game's record:
    cards it names that the seat could not know, or a table other than the record's at that
    move."""
    problems = []
    where = f"game {state['game_id'][:6]} move {state['move']}"
    if set(state) & SECRET_KEYS:
        problems.append(f"{where}: the state carries {sorted(set(state) & SECRET_KEYS)}")
    steps, move = record["steps"], state["move"]
    public = set(state["hand"]) | set(state["board"])  # the hand is checked below
    for step in steps[:move]:
        public.update([step["card"], *step["takes"]])
    named = set(CARD.findall(json.dumps(state)))
    if named - public:
        problems.append(f"{where}: names hidden cards {sorted(named - public)}")
    if move < len(steps):
        before = steps[move]["before"]
        table = (sorted(before["hands"][seat]), sorted(before["board"]), before["scores"])
    else:
        table = ([], sorted(state["board"]), record["final"]["scores"])
    if (sorted(state["hand"]), sorted(state["board"]), state["scores"]) != table:
        problems.append(f"{where}: hand, board or scores differ from the record's")
    for play in state["recent"]:
        step = steps[play["move"]]
        if (play["seat"], play["card"], play["takes"]) != (step["seat"], step["card"],
                                                            step["takes"]):  # fmt: skip
            problems.append(f"{where}: play {play['move']} differs from the record's")
    return problems


def check_record(record: dict[str, Any]) -> list[str]:
    """What is wrong with a finished game's record: the engine, given its seed and moves, must
    play the same game; each round plays every card once and its sides' cards add up to 52."""
    where = f"record of seed {record['game_seed']}"
    moves = [(s["seat"], s["action"], None) for s in record["steps"]]
    names = [p["name"] for p in record["players"]]
    try:
        again = build_record(Rules.from_dict(record["rules"]), record["game_seed"], moves, names)
    except ValueError as error:
        return [f"{where}: does not play again ({error})"]
    problems = []
    played = [(s["seat"], s["card"], s["takes"]) for s in record["steps"]]
    if played != [(s["seat"], s["card"], s["takes"]) for s in again["steps"]]:
        problems.append(f"{where}: the plays differ when played again")
    if again["final"] != record["final"] or not record["final"]["done"]:
        problems.append(f"{where}: the final {record['final']} is not {again['final']}")
    for result in record["round_results"]:
        steps = [s for s in record["steps"] if s["round"] == result["round"]]
        cards = [s["card"] for s in steps] + steps[0]["before"]["board"]
        if len(cards) != 52 or len(set(cards)) != 52 or sum(result["cards"]) != 52:
            problems.append(f"{where}: round {result['round']} does not play the deck once")
    return problems


def check_wave(wave: Wave) -> None:
    """Adds the problems of every game a wave finished to ``wave.problems``."""
    for seat, states, record in wave.games:
        wave.problems += check_record(record)
        for state in states:
            wave.problems += check_state(state, record, seat)


# ------------------------------------------------------------------------------------ clients
async def request(http: httpx.AsyncClient, wave: Wave, method: str, path: str, **kw: Any) -> Any:
    """One client request, counted in flight while it lasts; None (and an error) unless 2xx."""
    wave.in_flight += 1
    try:
        response = await http.request(method, path, **kw)
    except httpx.HTTPError as error:
        wave.errors.append(f"{method} {path}: {type(error).__name__} {error}")
        return None
    finally:
        wave.in_flight -= 1
    if not response.is_success:
        wave.errors.append(f"{method} {path}: {response.status_code} {response.text[:200]}")
        return None
    return response.json()


async def play_game(http: httpx.AsyncClient, wave: Wave, body: dict[str, Any], seed: int) -> None:
    """One client: a game created with ``body``, random legal plays to its end, its record."""
    state = await request(http, wave, "POST", "/api/games", json=body)
    states = []
    rng = random.Random(seed)
    while state is not None:
        states.append(state)
        if state["done"]:
            break
        action = rng.choice(state["legal"])["action"]
        state = await request(http, wave, "POST", f"/api/games/{state['game_id']}/actions",
                              json={"action": action, "move": state["move"]})  # fmt: skip
        wave.plays += 1
    if state is not None:
        record = await request(http, wave, "GET", f"/api/games/{state['game_id']}/record")
        if record is not None:
            wave.games.append((body["seat"], states, record))


async def probe(http: httpx.AsyncClient, wave: Wave, ids: list[str], every_s: float) -> None:
    """Reads the idle games' states in turn until cancelled; keeps the latency of each read
    started while a client request was in flight."""
    for k in range(10**9):
        game_id = ids[k % len(ids)]
        busy = wave.in_flight > 0
        start = time.perf_counter()
        try:
            response = await http.get(f"/api/games/{game_id}")
        except httpx.HTTPError as error:
            wave.errors.append(f"GET /api/games/{game_id}: {type(error).__name__} {error}")
            continue
        took = 1000 * (time.perf_counter() - start)
        if response.status_code != 200 or response.json()["game_id"] != game_id:
            wave.errors.append(f"GET /api/games/{game_id}: {response.status_code}")
        elif busy:
            wave.reads_ms.append(took)
        await asyncio.sleep(every_s)


def game_body(k: int, opponent: str, rounds: int, seed: int) -> dict[str, Any]:
    """Client ``k``'s game: seats alternate, so half the games start with the AI's move."""
    return {"opponent": opponent, "seat": k % 2, "seed": seed + k, "rules": {"max_rounds": rounds}}


async def load_wave(
    base: str,
    clients: int,
    opponent: str,
    rounds: int = 1,
    seed: int = 0,
    probes: int = 4,
    probe_ms: float = 20.0,
    timeout: float = 900.0,
) -> Wave:
    """``clients`` clients play a game each at once against the server at ``base`` while a
    prober reads ``probes`` idle games (made first); then every game is checked."""
    wave = Wave()
    # idle connections let go before the server's keep-alive (5 s) does: no request races a close
    limits = httpx.Limits(max_connections=clients + 8, keepalive_expiry=2.0)
    async with httpx.AsyncClient(base_url=base, timeout=timeout, limits=limits) as http, \
            httpx.AsyncClient(base_url=base, timeout=timeout) as reader:  # fmt: skip
        idle = []
        for k in range(probes):
            body = {"opponent": "greedy", "seat": 0, "seed": seed - 1 - k}
            state = await request(http, wave, "POST", "/api/games", json=body)
            if state is not None:
                idle.append(state["game_id"])
        prober = asyncio.create_task(probe(reader, wave, idle, probe_ms / 1000))
        start = time.perf_counter()
        games = [play_game(http, wave, game_body(k, opponent, rounds, seed), seed + k)
                 for k in range(clients)]  # fmt: skip
        try:
            await asyncio.wait_for(asyncio.gather(*games), timeout)
        except asyncio.TimeoutError:
            wave.errors.append(f"the wave ran past {timeout:.0f} s")
        wave.wall_s = time.perf_counter() - start
        prober.cancel()
        await asyncio.gather(prober, return_exceptions=True)
    if len(wave.games) != clients:
        wave.errors.append(f"{clients - len(wave.games)} of {clients} games did not finish")
    check_wave(wave)
    return wave


# ------------------------------------------------------------------------------------ servers
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def serve_and_load(
    on_loop: bool, args: argparse.Namespace, log: Any
) -> tuple[list[Wave], list[float]]:
    """One server process (its errors written to ``log``) under two warm-up games, then
    ``args.waves`` waves: the waves, warm-up first, and its resident memory after each."""
    port = free_port()
    options = ["--port", str(port), "--max-games", str(args.clients + 8)]
    command = [sys.executable, "-c", ON_LOOP] if on_loop else [sys.executable, "-m", "agents.serve"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    server = subprocess.Popen([*command, *options], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=log)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                httpx.get(base + "/api/options", timeout=2).raise_for_status()
                break
            except httpx.HTTPError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.2)
        waves = [asyncio.run(load_wave(base, 2, args.opponent, seed=args.seed - 100, probes=1))]
        rss = [rss_mib(server.pid)]
        for w in range(args.waves):
            wave = asyncio.run(load_wave(base, args.clients, args.opponent, args.rounds,
                                         seed=args.seed + 1000 * w, probes=args.probes,
                                         probe_ms=args.probe_ms, timeout=args.timeout))  # fmt: skip
            rss.append(rss_mib(server.pid))
            waves.append(wave)
            print(f"  wave {w + 1}: {len(wave.games)} games, {wave.plays} plays in "
                  f"{wave.wall_s:.1f} s, {len(wave.reads_ms)} reads, {len(wave.errors)} errors, "
                  f"{len(wave.problems)} problems, {rss[-1]:.0f} MiB", flush=True)  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=30)
    return waves, rss


def run_server(on_loop: bool, args: argparse.Namespace) -> dict[str, Any]:
    """The figures of one server process under load (``serve_and_load``)."""
    label = "on the event loop (before)" if on_loop else "off the loop, as shipped (after)"
    print(f"the AI's moves {label}", flush=True)
    with tempfile.TemporaryFile("w+") as log:
        (warm, *waves), rss = serve_and_load(on_loop, args, log)
        log.seek(0)
        said = log.read().strip()
    if said:
        print("  the server said:\n" + "\n".join(said.splitlines()[-20:]))
    reads = [ms for wave in waves for ms in wave.reads_ms]
    errors = [e for wave in [warm, *waves] for e in wave.errors]
    problems = [p for wave in [warm, *waves] for p in wave.problems]
    p50, p95 = np.percentile(reads, [50, 95]) if reads else (float("nan"),) * 2
    return {
        "server": label,
        "games": sum(len(wave.games) for wave in waves),
        "plays": sum(wave.plays for wave in waves),
        "wall_s": [round(wave.wall_s, 1) for wave in waves],
        "reads": len(reads),
        "read_p50_ms": round(float(p50), 1),
        "read_p95_ms": round(float(p95), 1),
        "read_max_ms": round(max(reads, default=float("nan")), 1),
        "errors": len(errors),
        "error_examples": errors[:5],
        "corrupted_or_leaked": len(problems),
        "problem_examples": problems[:5],
        "rss_mib": [round(r) for r in rss],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50, help="games played at once")
    parser.add_argument("--waves", type=int, default=2, help="times the clients play, per server")
    parser.add_argument("--opponent", default="bastra_2p:infer")
    parser.add_argument("--rounds", type=int, default=1, help="rounds a game lasts")
    parser.add_argument("--probes", type=int, default=4, help="idle games the prober reads")
    parser.add_argument("--probe-ms", type=float, default=20.0, help="pause between reads")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds a wave may take")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--only", choices=["before", "after"], help="run one server only")
    parser.add_argument("--json", metavar="FILE", help="write the figures here")
    args = parser.parse_args()
    print(f"{args.clients} clients x {args.waves} waves of one-round 2p games vs {args.opponent}, "
          f"{os.cpu_count()} cores", flush=True)  # fmt: skip
    runs = {}
    for name, on_loop in (("before", True), ("after", False)):
        if args.only in (None, name):
            runs[name] = run_server(on_loop, args)
    print(f"\n{'':34}" + "".join(f"{name:>22}" for name in runs))
    rows = [
        ("state read p50 while AIs think", lambda r: f"{r['read_p50_ms']:.1f} ms"),
        ("state read p95 (target < 100 ms)", lambda r: f"{r['read_p95_ms']:.1f} ms"),
        ("state read, worst", lambda r: f"{r['read_max_ms']:.1f} ms"),
        ("reads measured", lambda r: str(r["reads"])),
        ("games / plays", lambda r: f"{r['games']} / {r['plays']}"),
        ("seconds per wave", lambda r: " ".join(f"{s:.0f}" for s in r["wall_s"])),
        ("errors", lambda r: str(r["errors"])),
        ("corrupted games, leaked cards", lambda r: str(r["corrupted_or_leaked"])),
        ("RSS MiB (warm, after each wave)", lambda r: " ".join(map(str, r["rss_mib"]))),
    ]
    for title, cell in rows:
        print(f"{title:34}" + "".join(f"{cell(r):>22}" for r in runs.values()))
    for run in runs.values():
        for line in run["error_examples"] + run["problem_examples"]:
            print(f"  {run['server']}: {line}")
    if args.json:
        figures = {
            "command": "python benchmarks/serve_load.py " + " ".join(sys.argv[1:]),
            "clients": args.clients, "waves": args.waves, "opponent": args.opponent,
            "rounds": args.rounds, "probe_ms": args.probe_ms, "cores": os.cpu_count(),
            "target_p95_ms": TARGET_MS, **runs,
        }  # fmt: skip
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
