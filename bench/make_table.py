#!/usr/bin/env python3
"""The README's performance table, generated from the latest benchmark run.

    .venv/bin/python bench/make_table.py [--start | --record] [--print]

``--start`` (``make bench`` does this before the first benchmark) notes the commit the
benchmarks measure and whether the tree has uncommitted changes (``bench/results/.started``).
``--record`` (after the benchmarks) gathers what they just wrote
(``bench/results/{core,services,control,bridge}.json``) into one file
``bench/results/run-<UTC date>.json`` with the date, the machine, that commit and the
uncommitted-changes flag (refused if HEAD moved during the run); that file is committed.  Then
the table between the ``bench-table`` markers of ``README.md`` is rewritten from the latest
``run-*.json`` (``--print``: printed instead), the measured commit written under it; every
figure of the table comes from that one run.  Each use says how many commits the code has moved
on since the measured one (a stale table shows; test_bench_table warns too).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
PARTS = ("core", "services", "control", "bridge")
BEGIN, END = "<!-- bench-table:begin (bench/make_table.py) -->", "<!-- bench-table:end -->"


def machine() -> dict:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"platform": platform.platform(), "cpu": cpu, "cpus": os.cpu_count(),
            "python": platform.python_version(), "load_avg": list(os.getloadavg()), **code()}


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def code() -> dict:
    """``commit`` (HEAD) and ``uncommitted_changes`` (tracked files differ from it)."""
    try:
        return {"commit": _git("rev-parse", "HEAD"),
                "uncommitted_changes": bool(_git("status", "--porcelain", "--untracked-files=no"))}
    except (OSError, subprocess.CalledProcessError):
        return {"commit": "", "uncommitted_changes": False}


def commits_since(commit: str) -> int | None:
    """How many commits HEAD is ahead of ``commit`` (None: not in this clone's history)."""
    try:
        return int(_git("rev-list", "--count", f"{commit}..HEAD"))
    except (OSError, subprocess.CalledProcessError, ValueError):
        return None


def start() -> dict:
    """``bench/results/.started``: the code the benchmarks about to run measure."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    now = code()
    (RESULTS / ".started").write_text(json.dumps(now) + "\n")
    return now


def record() -> Path:
    """One file for this run: the four benchmarks' results, the date, the machine and the
    measured code (the commit at ``--start``; uncommitted changes at its start or end)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    started = RESULTS / ".started"  # written by `make bench` before the first benchmark
    measured = code()
    if started.is_file() and started.read_text().strip():
        begun = json.loads(started.read_text())
        if begun["commit"] != measured["commit"]:
            raise SystemExit(f"make_table: HEAD moved during the run ({begun['commit'][:10]} at "
                             f"the start, {measured['commit'][:10]} now): run `make bench` again")
        measured["uncommitted_changes"] |= bool(begun["uncommitted_changes"])
    results = {}
    for part in PARTS:
        path = RESULTS / f"{part}.json"
        if not path.is_file():
            raise SystemExit(f"make_table: {path} missing: run the benchmarks first (make bench)")
        # a file left from an earlier run would mix runs in one table
        if started.is_file() and path.stat().st_mtime < started.stat().st_mtime:
            raise SystemExit(f"make_table: {path} is older than this run (it failed?)")
        results[part] = json.loads(path.read_text())
    out = RESULTS / f"run-{now.strftime('%Y%m%dT%H%M%SZ')}.json"
    out.write_text(json.dumps({"date": now.isoformat(timespec="seconds"),
                               "machine": {**machine(), **measured}, "results": results},
                              indent=1) + "\n")
    return out


def latest() -> Path:
    runs = sorted(RESULTS.glob("run-*.json"))
    if not runs:
        raise SystemExit("make_table: no bench/results/run-*.json: run `make bench`")
    return runs[-1]


def table(run: dict, name: str) -> str:
    """Markdown: the rows of the README's performance table, every figure from ``run``."""
    core, svc, ctl, br = (run["results"][p] for p in PARTS)
    s7, b7 = core["single"]["7"], core["batch_id"]["7"]
    r, us = s7["ratio"], s7["us"]
    rk4 = core["rk4_vs_mujoco"]
    one, ratios = svc["single"], svc["single_ratios"]
    loop = ctl["loop_latency"]
    rt, ls = br["realtime"], br["lockstep"]
    batch2 = b7.get("2thread")
    rows = [
        ("inverse dynamics, `robot.inverse_dynamics` / `robot.kernels.rnea`", "",
         f"`pin.rnea` {us['pin.rnea']:.2f} us", f"{r['ID/rnea']:.2f} / {r['kernels ID/rnea']:.2f}",
         "≤ 0.5 / 0.4"),
        ("forward dynamics (ABA), public / kernels", "", f"`pin.aba` {us['pin.aba']:.2f} us",
         f"{r['FD/aba']:.2f} / {r['kernels FD/aba']:.2f}", "≤ 0.5"),
        ("mass matrix (CRBA), public / kernels", "", f"`pin.crba` {us['pin.crba']:.2f} us",
         f"{r['M/crba']:.2f} / {r['kernels M/crba']:.2f}", "≤ 0.8 / 0.6"),
        ("gravity, public", "", f"`pin.computeGeneralizedGravity` {us['pin.gravity']:.2f} us",
         f"{r['g/gravity']:.2f}", "≤ 0.5"),
        ("batch inverse dynamics per state, 1 / 2 threads (medians)", "", "`pin.rnea`",
         f"{b7['1thread']['ratio']:.3f} / " + (f"{batch2['ratio']:.3f}" if batch2 else "-"),
         "≤ 0.25 / 0.1"),
    ]
    if "panda" in core["single"]:  # issue 32: a 7-DoF arm from example-robot-data
        rp = core["single"]["panda"]["ratio"]
        rows.append(("Panda (example-robot-data): ID / FD / M / g, public", "", "Pinocchio",
                     f"{rp['ID/rnea']:.2f} / {rp['FD/aba']:.2f} / {rp['M/crba']:.2f} / {rp['g/gravity']:.2f}",
                     "≤ 0.5 / 0.5 / 0.8 / 0.5"))
    if "48" in core["single"]:
        r48 = core["single"]["48"]["ratio"]
        rows.append(("48 DoF: ID / FD / M", "", "Pinocchio",
                     f"{r48['ID/rnea']:.2f} / {r48['FD/aba']:.2f} / {r48['M/crba']:.2f}", ""))
    rows += [
        ("10 s at 1 kHz, RK4, one jitted call", f"{rk4['ours_s'] * 1e3:.1f} ms",
         f"MuJoCo `mj_step` loop {rk4['mujoco_loop_s'] * 1e3:.1f} ms", f"{rk4['ratio']:.2f}",
         "≤ 1.0"),
        ("`/rbd/inverse_dynamics`, 1 state, p50", f"{one['id']['p50_ms']:.2f} ms",
         f"empty `std_srvs/Trigger` {one['trigger']['p50_ms']:.2f} ms",
         f"{ratios['id/trigger']['p50']:.2f} ({ratios['id/trigger_lean']['p50']:.2f} × a Trigger "
         "on our `LeanExecutor`)", "≤ 0.8 (issue 32; issue 5: ≤ 1.2)"),
        ("`DynamicsClient.inverse_dynamics`, 1 state, p50",
         f"{one['id_dynamics_client']['p50_ms']:.2f} ms",
         f"the same Trigger {one['trigger_in_client_run']['p50_ms']:.2f} ms",
         f"{ratios['id_dynamics_client/trigger']['p50']:.2f}", ""),
        ("`/rbd/inverse_dynamics`, 10 000 states", f"{svc['id_10000']['id']['p50_ms']:.1f} ms",
         f"same-size echo {svc['id_10000']['echo']['p50_ms']:.1f} ms",
         f"{svc['id_10000_ratios']['id/echo']['p50']:.2f}", "≤ 1.5 × echo, ≤ 30 ms"),
        ("`/rbd/forward_simulate`, 10 s at 1 kHz", f"{svc['sim']['sim_10000_rows']['p50_ms']:.0f} ms",
         f"same-size echo {svc['sim']['echo']['p50_ms']:.1f} ms; RK4 alone "
         f"{svc['sim']['server_compute_time_ms']:.0f} ms",
         f"{svc['sim']['sim_10000_rows']['p50_ms'] / svc['sim']['server_compute_time_ms']:.2f} × RK4 alone",
         "≤ 1.2 × RK4 alone, ≤ 100 ms"),
        ("computed torque, node callback incl. messages",
         f"{ctl['callback_us_arm7']['computed_torque']['no_publish']:.1f} us", "", "", "≤ 20 us"),
        ("control loop through DDS, p50", f"{loop['computed_torque_arm7']['median_us'] / 1e3:.2f} ms",
         f"trivial echo node on rclpy's executor {loop['echo_floor']['median_us'] / 1e3:.2f} ms",
         f"{loop['ratio']['block_median']:.2f}", ""),
        (f"bridge realtime {rt['duration_s']:.0f} s at 1 kHz (`rt_priority` {rt['rt_priority']}"
         + (", refused here)" if rt.get("rt_priority_refused") else ")"),
         f"RTF {rt['rtf']:.3f}, {rt['missed_pct']:.2f} % missed", "", "", "RTF ≥ 0.99, < 1 %"),
        ("bridge lockstep with a controller in another process",
         f"{ls['steps_per_s']:.0f} steps/s", "", "", ""),
    ]
    m = run["machine"]
    head = (f"From `{name}` ({run['date']}, {m['cpus']} × {m['cpu'] or m['platform']}, load "
            f"average {m['load_avg'][0]:.1f} at the end); ratio < 1 = faster than the "
            "peer, measured interleaved with it in the same run.")
    lines = [head, "", "| what (7 DoF unless said) | ours | peer | ratio | target |",
             "| --- | --- | --- | --- | --- |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += ["", provenance(run)]
    return "\n".join(lines)


def provenance(run: dict) -> str:
    """The line under the table: the measured commit and whether the tree was clean."""
    m = run["machine"]
    tree = ("**with uncommitted changes** (not reproducible from the commit)"
            if m.get("uncommitted_changes") else "a clean tree")
    return (f"Measured code: commit `{m['commit'][:12] or 'unknown'}`, {tree}.  "
            "`python bench/make_table.py --print` says how many commits the code has moved on "
            "since; `make bench` measures the current one.")


def age_line(path: Path, run: dict) -> str:
    n = commits_since(run["machine"]["commit"]) if run["machine"]["commit"] else None
    when = ("a commit not in this clone's history" if n is None else
            "the current commit" if n == 0 else f"a commit {n} commits behind HEAD")
    return f"{path.relative_to(ROOT)} measured {when}"


def update_readme(text: str, readme: Path) -> None:
    old = readme.read_text()
    if BEGIN not in old or END not in old:
        raise SystemExit(f"make_table: {readme} has no {BEGIN} ... {END} markers")
    a, b = old.index(BEGIN) + len(BEGIN), old.index(END)
    readme.write_text(old[:a] + "\n" + text + "\n" + old[b:])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--start", action="store_true",
                    help="note the code the benchmarks are about to measure, and stop")
    ap.add_argument("--record", action="store_true", help="gather this run's results first")
    ap.add_argument("--print", action="store_true", help="print the table, leave README.md")
    ap.add_argument("--readme", default=str(ROOT / "README.md"))
    args = ap.parse_args(argv)
    if args.start:
        now = start()
        print(f"benchmarking commit {now['commit'][:12]}"
              f"{' with uncommitted changes' if now['uncommitted_changes'] else ''}")
        return 0
    if args.record:
        print(f"recorded {record().relative_to(ROOT)}")
    path = latest()
    run = json.loads(path.read_text())
    text = table(run, str(path.relative_to(ROOT)))
    if args.print:
        print(text)
    else:
        update_readme(text, Path(args.readme))
        print(f"README.md performance table from {path.relative_to(ROOT)}")
    print(age_line(path, run), file=sys.stderr if args.print else sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
