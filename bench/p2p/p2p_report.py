# SPDX-License-Identifier: BSD-3-Clause
"""Reporting of run-p2p: the text tables, the plots and results.json, from
the results of each peer (objects with name, error, header, results and
failures, see run-p2p's Peer)."""
import datetime
import json
import os
import re
import subprocess

# name, unit, which way is better, title of the table and plot
BENCHMARKS = [
    ("latency", "us", "lower", "one-way latency (half a ping-pong round trip)"),
    ("bw", "MB/s", "higher", "unidirectional bandwidth (window of 64 non-blocking sends)"),
    ("bibw", "MB/s", "higher", "bidirectional bandwidth (sum of both directions)"),
    ("msgrate", "kmsg/s", "higher", "message rate (window of 64 small non-blocking sends)"),
]


def slug(name):
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")


def fmt(v):
    if v is None:
        return "-"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def best_other(values, subject, better, limits):
    """The best value of the MPI peers other than the subject; a limit (the
    raw TCP ping-pong) is a column of its own, not a peer to beat."""
    others = [v for name, v in values.items() if name != subject and name not in limits and v is not None]
    if not others:
        return None
    return min(others) if better == "lower" else max(others)


def tables(peers, args, iperf):
    """The text tables, one per benchmark: rows are sizes, columns peers."""
    lines = []
    limits = {p.name for p in peers if getattr(p, "raw_tcp", False)}
    for bench, unit, better, title in BENCHMARKS:
        if bench not in args.benchmarks:
            continue
        data = {p.name: {s: v for s, _, v in p.results[bench]} for p in peers if p.results.get(bench)}
        names = list(data)
        has_subject = args.subject in data
        sizes = sorted({s for d in data.values() for s in d})
        lines.append(f"== {bench}: {title}, {unit}, {better} is better")
        missing = [p.name for p in peers if p.name not in data and (p.only is None or bench in p.only)]
        if missing:
            lines.append(f"   not measured: {', '.join(missing)} (see the peers below)")
        vs_iperf = unit == "MB/s" and iperf
        if vs_iperf:
            lines.append(f"   (NN%) = share of one iperf3 TCP stream on the same path, {iperf:.0f} MB/s")
        # Ratios to the best MPI peer, and to each peer of --ratio-to on its own.
        extra = [n for n in args.ratio_to if n in data and n != args.subject] if has_subject else []
        head = ["size"] + names + ([f"{args.subject}/best"] if has_subject else []) \
            + [f"{args.subject}/{n}" for n in extra]
        rows = []
        for s in sizes:
            vals = {n: data[n].get(s) for n in names}
            row = [size_label(s)]
            for n in names:
                v = vals[n]
                cell = fmt(v)
                if vs_iperf and v is not None:
                    share = 100 * v / iperf
                    cell += f" ({share:.0f}%)" if share >= 1 else " (<1%)"
                row.append(cell)
            if has_subject:
                mine = vals[args.subject]
                for ref in [best_other(vals, args.subject, better, limits)] + [vals[n] for n in extra]:
                    row.append(f"{mine / ref:.2f}" if mine is not None and ref else "-")
            rows.append(row)
        if not rows:
            lines.append("   no peer produced results")
        else:
            widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
            for r in [head] + rows:
                lines.append("  ".join(c.rjust(w) for c, w in zip(r, widths)).rstrip())
        lines.append("")
    if args.oversubscribe:
        lines.append(f"load: {args.oversubscribe} CPU-bound processes beside every peer's jobs "
                     f"(--oversubscribe), {os.cpu_count()} cores, {autogroup()}")
    lines.append("peers:")
    for p in peers:
        if p.error:
            lines.append(f"  {p.name}: UNAVAILABLE: {p.error}")
            continue
        info = "; ".join(" ".join(h.split()) for h in p.header) or "ran"
        lines.append(f"  {p.name}: {info}")
        for bench, why in p.failures.items():
            lines.append(f"    {bench} FAILED: {why}")
    lines.append(f"  iperf3: {fmt(iperf) + ' MB/s, one TCP stream' if iperf else 'not measured'}"
                 f" ({args.iperf_target})")
    return "\n".join(lines) + "\n"


def size_label(s):
    for div, suffix in ((1 << 20, "M"), (1 << 10, "K")):
        if s >= div and s % div == 0:
            return f"{s // div}{suffix}"
    return str(s)


def write_plots(peers, args, iperf, out_dir, term):
    """One PNG per benchmark; the data files behind them stay next to them."""
    # noenhanced: 'tcp;ofi_rxm' is a name, not a subscript.
    script = [f"set terminal {term} size 900,600 noenhanced", "set datafile missing '-'", "set logscale xy",
              "set xlabel 'message size (bytes)'", "set key top left", "set grid"]
    made = []
    for bench, unit, better, title in BENCHMARKS:
        if bench not in args.benchmarks:
            continue
        with_data = [p for p in peers if p.results.get(bench)]
        if not with_data:
            continue
        dat = os.path.join(out_dir, f"{bench}.dat")
        sizes = sorted({s for p in with_data for s, _, _ in p.results[bench]})
        with open(dat, "w") as f:
            f.write("# size " + " ".join(slug(p.name) for p in with_data) + f"  ({unit})\n")
            for s in sizes:
                vals = [dict((x, v) for x, _, v in p.results[bench]).get(s) for p in with_data]
                f.write(f"{s} " + " ".join("-" if v is None else repr(v) for v in vals) + "\n")
        png = os.path.join(out_dir, f"{bench}.png")
        # Tics at powers of 4, labelled as the tables are (4K, 1M).
        tics, t = [], 1
        while t <= sizes[-1]:
            tics.append(f"'{size_label(t)}' {t}")
            t *= 4
        script.append(f"set xtics ({', '.join(tics)})")
        # Size 0 has no place on a log axis: the table keeps it.
        curves = [f"'{dat}' using ($1>0?$1:1/0):{i + 2} with linespoints title '{p.name}'"
                  for i, p in enumerate(with_data)]
        if unit == "MB/s" and iperf:
            curves.append(f"{iperf!r} with lines dashtype 2 title 'iperf3, 1 TCP stream'")
        script += [f"set output '{png}'", f"set title '{bench}: {title}'", f"set ylabel '{unit}'",
                   "plot " + ", \\\n     ".join(curves)]
        made.append(png)
    if not made:
        return []
    gp = os.path.join(out_dir, "plots.gp")
    with open(gp, "w") as f:
        f.write("\n".join(script) + "\n")
    r = subprocess.run(["gnuplot", gp], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"run-p2p: warning: gnuplot failed: {r.stderr.strip()[-300:]}", flush=True)
        return []
    return [p for p in made if os.path.exists(p)]


def autogroup():
    """Whether the kernel shares the CPU between sessions first (autogroup):
    it decides how ranks compete with the load, so an oversubscribed table
    says it (bench/README.md, "Oversubscribed mode")."""
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            on = f.read().strip() == "1"
    except OSError:
        return "autogroup scheduling not in this kernel"
    return "autogroup scheduling " + ("on (CPU shared between sessions first)" if on else "off")


def save_json(peers, args, iperf, prefix, out_dir):
    doc = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "prefix": prefix, "quick": args.quick, "hosts": args.hosts, "oversubscribe": args.oversubscribe,
        "scheduling": autogroup(),
        "units": {b: u for b, u, _, _ in BENCHMARKS},
        "iperf3_mbps": iperf,
        "peers": {p.name: {"error": p.error, "header": p.header, "failures": p.failures,
                           "results": {b: [list(r) for r in rows] for b, rows in p.results.items()}}
                  for p in peers},
    }
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(doc, f, indent=1)
