"""LangGraph on trellis-bench's workloads: the same graphs, sizes and units, one JSON line each.

Run by `compare` (in a virtualenv with requirements.txt); `--quick` takes fewer samples.
Each line: workload, variant, size, unit, langgraph_ns (median per unit), and extra figures.
"""

import argparse
import json
import operator
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from importlib.metadata import version
from typing import Annotated, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph

ARGS = argparse.ArgumentParser(description=__doc__)
ARGS.add_argument("--quick", action="store_true", help="few samples")
ARGS.add_argument("--json", action="store_true", help="JSON lines (the only output)")
# trellis-bench's PostgreSQL variant has no LangGraph counterpart here: taken and ignored.
ARGS.add_argument("--postgres", metavar="URL")
ARGS.add_argument("workloads", nargs="*")
OPTIONS = ARGS.parse_args()
QUICK = OPTIONS.quick
ONLY = OPTIONS.workloads
LIMIT = {"recursion_limit": 10**7}
# Removed at the end: the checkpoint databases of one run come to several hundred MB.
SCRATCH = tempfile.mkdtemp(prefix="langgraph-bench-")


def samples(full):
    return max(3, -(-full // 8)) if QUICK else full


def median_of(n, run):
    run()  # warm-up
    return statistics.median(run() for _ in range(n))


def emit(workload, variant, size, unit, ns, **extra):
    print(json.dumps({"workload": workload, "variant": variant, "size": size, "unit": unit,
                      "langgraph_ns": ns, **extra}), flush=True)


def bytes_written():
    with open("/proc/self/io") as io:
        for line in io:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    return 0


def resident_kib():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Counter(TypedDict):
    x: Annotated[int, operator.add]


def add_one(_state):
    return {"x": 1}


def nothing(_state):
    return {}


def chain_graph(n):
    g = StateGraph(Counter)
    for i in range(n):
        g.add_node(f"n{i}", add_one)
        g.add_edge(f"n{i}", f"n{i + 1}" if i + 1 < n else END)
    g.add_edge(START, "n0")
    return g


def loop_graph(k, tools=add_one):
    g = StateGraph(Counter)
    g.add_node("model", nothing)
    g.add_node("tools", tools)
    g.add_edge(START, "model")
    g.add_conditional_edges("model", lambda s: "tools" if s["x"] < k else END, ["tools", END])
    g.add_edge("tools", "model")
    return g


def timed(app, state, config=LIMIT, **kwargs):
    started = time.perf_counter_ns()
    result = app.invoke(state, config, **kwargs)
    return time.perf_counter_ns() - started, result


def chain():
    for n in (100, 1000):
        app = chain_graph(n).compile()

        def run():
            ns, result = timed(app, {"x": 0})
            assert result["x"] == n, result
            return ns

        emit("chain", "memory", n, "activation", median_of(samples(31 if n < 1000 else 11), run) / n)


def loop():
    k = 1000
    app = loop_graph(k).compile()

    def run():
        ns, result = timed(app, {"x": 0})
        assert result["x"] == k, result
        return ns

    emit("loop", "memory", k, "activation", median_of(samples(11), run) / (2 * k + 1))


class Fan(TypedDict):
    items: Annotated[list, operator.add]
    total: int


def fanout():
    w = 100
    g = StateGraph(Fan)
    g.add_node("plan", nothing)
    for i in range(w):
        g.add_node(f"b{i}", lambda _s, i=i: {"items": [i]})
        g.add_edge("plan", f"b{i}")
    g.add_node("join", lambda s: {"total": sum(s["items"])})
    g.add_edge([f"b{i}" for i in range(w)], "join")
    g.add_edge(START, "plan")
    g.add_edge("join", END)
    app = g.compile()

    def run():
        ns, result = timed(app, {"items": [], "total": 0})
        assert sorted(result["items"]) == list(range(w)) and result["total"] == w * (w - 1) // 2
        return ns

    emit("fanout", "memory", w, "branch", median_of(samples(51), run) / w)


def memory():
    k = 50_000
    readings = []

    def tools(state):
        if state["x"] in (k // 10, k - 1):
            readings.append(resident_kib())
        return {"x": 1}

    app = loop_graph(k, tools).compile()
    ns, result = timed(app, {"x": 0})
    assert result["x"] == k
    early, late = readings
    emit("memory", "loop", 2 * k + 1, "activation", ns / (2 * k + 1),
         rss_kib_at_tenth=early, rss_kib_at_end=late, rss_kib_growth=late - early)


def sqlite_saver(path, sync):
    connection = sqlite3.connect(path, check_same_thread=False)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute(f"PRAGMA synchronous = {sync}")
    return SqliteSaver(connection)


def thread(n):
    return {"configurable": {"thread_id": f"t{n}"}, **LIMIT}


def loop_ckpt():
    k = 200
    steps = 2 * k + 1
    for variant, sync, n in (("sqlite-full", "FULL", 7), ("sqlite-normal", "NORMAL", 15)):
        counter = iter(range(10**6))

        def run():
            path = os.path.join(SCRATCH, f"loop-{variant}-{next(counter)}.db")
            app = loop_graph(k).compile(checkpointer=sqlite_saver(path, sync))
            ns, result = timed(app, {"x": 0}, thread(0), durability="sync")
            assert result["x"] == k
            return ns

        emit("loop_ckpt", variant, k, "step", median_of(samples(n), run) / steps)


class Chat(TypedDict):
    messages: Annotated[list, operator.add]


def message(n):
    return f"{n:>8} " + "m" * (1024 - 9)


def growing_state():
    points = (10, 500, 2000)
    steps = points[-1] + 1
    marks = []

    def node(state):
        marks.append((time.perf_counter_ns(), bytes_written()))
        return {"messages": [message(len(state["messages"]))]}

    g = StateGraph(Chat)
    g.add_node("model", node)
    g.add_node("tools", node)
    g.add_edge(START, "model")
    g.add_conditional_edges("model", lambda s: "tools" if len(s["messages"]) < steps else END,
                            ["tools", END])
    g.add_conditional_edges("tools", lambda s: "model" if len(s["messages"]) < steps else END,
                            ["model", END])
    counter = iter(range(10**6))
    costs, loads = [], []

    def run():
        marks.clear()
        path = os.path.join(SCRATCH, f"chat-{next(counter)}.db")
        app = g.compile(checkpointer=sqlite_saver(path, "NORMAL"))
        config = thread(0)
        ns, result = timed(app, {"messages": []}, config, durability="sync")
        marks.append((time.perf_counter_ns(), bytes_written()))
        assert len(result["messages"]) == steps
        cost = lambda s: (marks[s][0] - marks[s - 1][0], marks[s][1] - marks[s - 1][1])
        costs.append([cost(point) for point in points])
        # Reading the thread's latest state back, as a process picking it up would.
        times = []
        for _ in range(5):
            started = time.perf_counter_ns()
            state = app.get_state(config)
            times.append(time.perf_counter_ns() - started)
            assert len(state.values["messages"]) == steps
        loads.append(statistics.median(times))
        return ns

    total = median_of(samples(5), run)
    costs, loads = costs[1:], loads[1:]  # not the warm-up
    pick = lambda which, what: statistics.median(c[which][what] for c in costs)
    extra = {}
    for i, point in enumerate(points):
        extra[f"ns_at_step_{point}"] = pick(i, 0)
        extra[f"bytes_at_step_{point}"] = pick(i, 1)
    extra[f"load_latest_ns_at_step_{points[-1]}"] = statistics.median(loads)
    emit("growing_state", "sqlite-normal", points[-1], "step", total / steps, **extra)


class Turns(TypedDict):
    turns: Annotated[int, operator.add]
    said: str


def thread_run():
    runs = 5000
    g = StateGraph(Turns)
    g.add_node("reply", lambda _state: {"turns": 1})
    g.add_edge(START, "reply")
    g.add_edge("reply", END)
    app = g.compile(checkpointer=sqlite_saver(os.path.join(SCRATCH, "threads.db"), "NORMAL"))
    long, short = thread("long"), thread("short")
    for _ in range(runs):
        app.invoke({"turns": 0}, long, durability="sync")
    app.invoke({"turns": 0}, short, durability="sync")

    def turn(config):
        started = time.perf_counter_ns()
        app.invoke({"said": "hi"}, config, durability="sync")
        app.get_state(config)
        return time.perf_counter_ns() - started

    ours = median_of(samples(31), lambda: turn(long))
    assert app.get_state(long).values["turns"] > runs
    emit("thread_run", "sqlite-normal", runs, "run", ours,
         short_thread_ns=median_of(samples(31), lambda: turn(short)))


class Approval(TypedDict):
    x: Annotated[int, operator.add]


def interrupt_resume():
    count = 100
    g = StateGraph(Approval)
    for name in ("a", "b", "c"):
        g.add_node(name, add_one)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    for variant in ("memory", "sqlite-full"):
        counter = iter(range(10**6))

        def run():
            if variant == "memory":
                saver = InMemorySaver()
            else:
                saver = sqlite_saver(os.path.join(SCRATCH, f"approval-{next(counter)}.db"), "FULL")
            app = g.compile(checkpointer=saver, interrupt_before=["c"])
            started = time.perf_counter_ns()
            for n in range(count):
                paused = app.invoke({"x": 0}, thread(n), durability="sync")
                assert paused["x"] == 2, paused
                done = app.invoke(None, thread(n), durability="sync")
                assert done["x"] == 3, done
            return time.perf_counter_ns() - started

        emit("interrupt_resume", variant, count, "cycle", median_of(samples(15), run) / count)


def build():
    n = 1000

    def run():
        started = time.perf_counter_ns()
        chain_graph(n).compile()
        return time.perf_counter_ns() - started

    emit("build", "builder", n, "node", median_of(samples(11), run) / n)


# `server`'s graph, as `langgraph dev` loads it: a → b → c → ask, a question before `ask`.
SERVER_GRAPH = """
import operator
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph


class Approval(TypedDict):
    x: Annotated[int, operator.add]


def step(_state):
    return {"x": 1}


g = StateGraph(Approval)
for name in ("a", "b", "c", "ask"):
    g.add_node(name, step)
g.add_edge(START, "a")
g.add_edge("a", "b")
g.add_edge("b", "c")
g.add_edge("c", "ask")
g.add_edge("ask", END)
graph = g.compile(interrupt_before=["ask"])
"""


def server():
    """LangGraph's development server (`langgraph dev`, its in-memory runtime: the store it
    ships for local use) on trellis-bench's `server` cycle: a run created on a new thread and
    waited for until it pauses before `ask` (one request, `/threads/{id}/runs/wait`, where
    Trellis's client makes two). Rows under trellis's variant names and sizes; `measured` says
    how many runs were timed."""
    import asyncio
    import socket
    import subprocess
    import uuid

    import httpx

    project = os.path.join(SCRATCH, "server")
    os.makedirs(project, exist_ok=True)
    with open(os.path.join(project, "graph.py"), "w") as out:
        out.write(SERVER_GRAPH)
    with open(os.path.join(project, "langgraph.json"), "w") as out:
        json.dump({"dependencies": ["."], "graphs": {"approval": "./graph.py:graph"}}, out)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cli = os.path.join(os.path.dirname(sys.executable), "langgraph")
    log = open(os.path.join(project, "server.log"), "w")
    process = subprocess.Popen([cli, "dev", "--port", str(port), "--no-browser", "--no-reload"],
                               cwd=project, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{base}/ok", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None:
                raise RuntimeError(f"langgraph dev exited: see {log.name}")
            time.sleep(0.1)
        else:
            raise RuntimeError("langgraph dev did not answer /ok within a minute")

        async def cycle(client):
            started = time.perf_counter_ns()
            response = await client.post(
                f"/threads/{uuid.uuid4()}/runs/wait",
                json={"assistant_id": "approval", "input": {"x": 0}, "if_not_exists": "create"})
            response.raise_for_status()
            values = response.json()
            assert values.get("x") == 3, values
            return time.perf_counter_ns() - started

        async def measure(alone_runs, clients, per_client):
            limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
            async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:
                for _ in range(5):
                    await cycle(client)
                alone = [await cycle(client) for _ in range(alone_runs)]

                async def one_client():
                    return [await cycle(client) for _ in range(per_client)]

                started = time.perf_counter_ns()
                together = [t for times in await asyncio.gather(*(one_client() for _ in range(clients)))
                            for t in times]
                return alone, together, time.perf_counter_ns() - started

        def quantile(times, q):
            times = sorted(times)
            return times[round((len(times) - 1) * q)]

        alone_runs, per_client = (30, 10) if QUICK else (300, 80)
        alone, together, wall = asyncio.run(measure(alone_runs, 50, per_client))
        emit("server", "sqlite-1-client", 300, "run", quantile(alone, 0.5),
             measured=len(alone), store="inmem")
        emit("server", "sqlite-50-clients", 4000, "run", wall / len(together),
             measured=len(together), runs_per_s=round(len(together) / (wall / 1e9)), store="inmem")
        emit("server", "sqlite-50-p99", 4000, "run", quantile(together, 0.99),
             measured=len(together), store="inmem")
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


WORKLOADS = [("chain", chain), ("loop", loop), ("fanout", fanout), ("memory", memory),
             ("loop_ckpt", loop_ckpt), ("growing_state", growing_state), ("thread_run", thread_run),
             ("interrupt_resume", interrupt_resume), ("server", server), ("build", build)]

if __name__ == "__main__":
    print(json.dumps({"versions": {"python": sys.version.split()[0],
                                   "langgraph": version("langgraph"),
                                   "langgraph-checkpoint-sqlite": version("langgraph-checkpoint-sqlite")}}),
          flush=True)
    try:
        for name, workload in WORKLOADS:
            if not ONLY or name in ONLY:
                workload()
    finally:
        shutil.rmtree(SCRATCH, ignore_errors=True)
