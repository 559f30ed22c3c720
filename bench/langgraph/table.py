"""Merges trellis-bench's and bench.py's JSON lines into one table (markdown with --markdown).

Usage: table.py TRELLIS.jsonl [LANGGRAPH.jsonl] [--markdown]
"""

import json
import sys


def duration(ns):
    if ns is None:
        return "-"
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns / 1e6:.2f} ms"


def read(path):
    rows, versions = [], {}
    with open(path) as lines:
        for line in lines:
            line = line.strip()
            if not line.startswith("{"):
                continue
            row = json.loads(line)
            if "versions" in row:
                versions = row["versions"]
            else:
                rows.append(row)
    return rows, versions


def main():
    markdown = "--markdown" in sys.argv
    paths = [a for a in sys.argv[1:] if not a.startswith("--")]
    trellis, _ = read(paths[0])
    langgraph, versions = read(paths[1]) if len(paths) > 1 else ([], {})
    theirs = {(r["workload"], r["variant"], r["size"]): r for r in langgraph}
    header = ["workload", "variant", "size", "unit", "trellis", "floor", "vs floor",
              "LangGraph", "LangGraph / trellis", "target"]
    table = []
    for row in trellis:
        other = theirs.get((row["workload"], row["variant"], row["size"]))
        lg = other["langgraph_ns"] if other else None
        ratio = row.get("ratio")
        target = ""
        if "met" in row:
            target = ("met: " if row["met"] else "MISSED: ") + row["target"]
        table.append([row["workload"], row["variant"], str(row["size"]), row["unit"],
                      duration(row["trellis_ns"]), duration(row.get("baseline_ns")),
                      f"{ratio:.2f}x" if ratio else "-", duration(lg),
                      f"{lg / row['trellis_ns']:.0f}x" if lg else "-", target])
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + " --- |" * len(header))
        for line in table:
            print("| " + " | ".join(line) + " |")
    else:
        widths = [max(len(r[i]) for r in table + [header]) for i in range(len(header))]
        for line in [header] + table:
            print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())
    details = []
    for row in trellis:
        other = theirs.get((row["workload"], row["variant"], row["size"]), {})
        if row["workload"] == "growing_state":
            for step in sorted({int(k.rsplit("_", 1)[1]) for k in row if k.startswith("bytes_at_step_")}):
                sides = [("trellis", ""), ("floor", "floor_")]
                parts = [f"{name} {duration(row.get(f'{p}ns_at_step_{step}'))}, "
                         f"{row.get(f'{p}bytes_at_step_{step}', 0):,} bytes" for name, p in sides]
                if f"bytes_at_step_{step}" in other:
                    parts.append(f"LangGraph {duration(other[f'ns_at_step_{step}'])}, "
                                 f"{other[f'bytes_at_step_{step}']:,.0f} bytes")
                details.append(f"growing_state, step {step}: " + "; ".join(parts))
            for key in sorted(k for k in row if k.startswith("load_latest_ns_at_step_")):
                part = f"trellis {duration(row[key])}"
                if key in other:
                    part += f"; LangGraph {duration(other[key])}"
                details.append(f"growing_state, loading the latest state at step {key.rsplit('_', 1)[1]}: {part}")
            if "mean_bytes_per_step" in row:
                details.append("growing_state, bytes written per step over the whole run, whole "
                               f"checkpoints included: trellis {row['mean_bytes_per_step']:,}")
        if row["workload"] == "memory":
            line = f"memory: resident memory grew by {row.get('rss_kib_growth')} KiB over the run"
            if "rss_kib_growth" in other:
                line += f" (LangGraph: {other['rss_kib_growth']:,} KiB)"
            details.append(line)
        if row["workload"] == "editor":
            details.append(f"editor {row['variant']}: {row.get('whole_ms')} ms for the "
                           f"{row['size']:,}-node file")
        for key in (k for k in row if k.startswith("time_vs_")):
            smaller = key.rsplit("_", 1)[1]
            line = (f"compile {row['variant']}: {row['size']:,} nodes take {row[key]}x "
                    f"the time of {int(smaller):,}, a compile per process")
            repeated = row.get(f"in_process_vs_{smaller}")
            if repeated is not None:
                line += f" ({repeated}x repeated in one process, {duration(row.get('in_process_ns'))} a node)"
            details.append(line)
    if details:
        print()
        for line in details:
            print(f"- {line}" if markdown else line)
    if versions:
        print()
        print("LangGraph side: " + ", ".join(f"{k} {v}" for k, v in versions.items()))


if __name__ == "__main__":
    main()
