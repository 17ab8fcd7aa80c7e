"""The report: the machine header, the table, the JSON and the roofline plot."""
from __future__ import annotations

import importlib.util
import math
import os
import platform as _platform

import numpy as np

try:  # torch is a peer, never a requirement
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

from .cases import COPY_BYTES


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return _platform.processor() or _platform.machine()


def mem_gib() -> float | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    except (ValueError, OSError):
        return None


def _fmt_time(s: float | None, tiny: bool) -> str:
    if s is None or not math.isfinite(s):
        return "-"
    if tiny:
        return f"{s * 1e6:.2f} µs"
    return f"{s * 1e3:.2f} ms" if s < 10 else f"{s:.2f} s"


def annotate(results: list[dict]) -> None:
    for rec in results:
        bw = rec.get("copy_bytes_per_s")
        for info in rec["tools"].values():
            if "median_s" in info and rec.get("bytes") and bw:
                info["roofline"] = rec["bytes"] / bw / info["median_s"]


def format_table(header: dict, results: list[dict], peers: list[str]) -> str:
    bw = header["copy_bandwidth"]["bytes_per_s"]
    lines = [
        f"# ptocpu bench — {header['date']}",
        "",
        f"- machine: {header['machine']['cpu']} ({header['machine']['cores']} cores, "
        f"{header['machine']['memory_gib']:.1f} GiB), {header['machine']['system']}",
        f"- threads: {header['threads']} (ptocpu, torch and numpy; numpy's take / copies / ufunc.at are single-threaded)",
        f"- copy bandwidth: {bw / 1e9:.1f} GB/s (read + write; median of {header['copy_bandwidth']['runs']} copies "
        f"timed inside the cases' round-robins, range {header['copy_bandwidth']['low'] / 1e9:.1f}-"
        f"{header['copy_bandwidth']['high'] / 1e9:.1f}) — {header['copy_bandwidth']['method']}, "
        f"{COPY_BYTES >> 20} MiB fp32 into a preallocated buffer, all threads; chosen at the start as the faster of "
        + ", ".join(f"{k} {v / 1e9:.1f} GB/s" for k, v in header["copy_bandwidth"]["start"].items()),
        f"- versions: ptocpu {header['versions']['ptocpu']} ({header['versions']['simd']}), "
        + ", ".join(f"{k} {v}" for k, v in header["versions"].items() if k not in ("ptocpu", "simd")),
        "- roofline = (bytes moved / copy bandwidth) / time, with the copy bandwidth of the same case's round-robin "
        "(column `copy GB/s`); speedup = peer median / ptocpu median (same run); times are medians "
        "(TINY: per call, from Python)",
        "",
    ]
    cols = ["case", "op", "dtype", "MB moved", "copy GB/s", "ptocpu", "roofline"]
    for p in peers:
        cols += [p, f"{p} roofline", f"vs {p}"]
    cols += ["runs", "check"]
    lines.append("| " + " | ".join(cols) + " |")
    lines.append("|" + "|".join(" --- " for _ in cols) + "|")
    for rec in results:
        tools = rec["tools"]
        p = tools.get("ptocpu", {})
        row = [rec["id"], rec["op"], rec["dtype"], f"{rec['bytes'] / 1e6:.0f}" if rec.get("bytes") and not rec["tiny"]
               else "-", f"{rec['copy_bytes_per_s'] / 1e9:.1f}" if rec.get("copy_bytes_per_s") else "-"]
        if rec.get("status") not in ("ok", "MISMATCH"):
            row += [rec.get("status", "-"), "-"] + ["-", "-", "-"] * len(peers) + ["-", "-"]
            lines.append("| " + " | ".join(row) + " |")
            continue
        row += [_fmt_time(p.get("median_s"), rec["tiny"]),
                f"{p['roofline']:.2f}" if "roofline" in p else "-"]
        checks = []
        for peer in peers:
            info = tools.get(peer)
            if not info:
                row += ["-", "-", "-"]
                continue
            if "median_s" not in info:
                row += [info.get("status", "-")[:40], "-", "-"]
                continue
            row += [_fmt_time(info["median_s"], rec["tiny"]),
                    f"{info['roofline']:.2f}" if "roofline" in info else "-",
                    f"{info['speedup']:.2f}x" if "speedup" in info else "WRONG"]
            if info.get("check") != "equal":
                checks.append(f"{peer}: {info.get('check')}")
        row += [str(p.get("runs", "-")), "; ".join(checks) if checks else "equal"]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append("Bytes moved (docs/benchmarks.md): index_select 2·out + index; interleave / deinterleave 2·(inputs); "
                 "scatter_ index + src (index-shaped) + 2·written (add / multiply) or 1·written (None), written = "
                 "one element per index position; strided_slice 2·out; gather 2·out + index; scatter_update 2·(rows written) + "
                 "index; index_add_ 2·source + index; gathermask 2·out. MB = 1e6 bytes, GB/s = 1e9 bytes/s. "
                 "TINY: median over batches of 200 calls of the time per call, each tool on its own tensors.")
    lines.append("")
    lines.append("Cases: " + "; ".join(f"{r['id']} = {r['call']}" for r in results if not r["tiny"]))
    return "\n".join(lines)


def require_matplotlib() -> None:
    """--plot needs matplotlib (the `plot` extra): say so before any case runs, with exit status 1."""
    if importlib.util.find_spec("matplotlib") is None:
        raise SystemExit("ptocpu bench --plot needs matplotlib: pip install 'ptocpu[plot]' (or pip install matplotlib)")


def write_plot(path: str, header: dict, results: list[dict], peers: list[str]) -> str | None:
    """A bar chart of the roofline fraction per case, ptocpu and each peer. None on success."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in results if not r["tiny"] and r.get("status") in ("ok", "MISMATCH")]
    if not rows:
        return "no case with a roofline fraction to plot"
    tools = ["ptocpu"] + peers
    width = 0.8 / len(tools)
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(rows) + 2), 4.5))
    xs = np.arange(len(rows))
    for k, tool in enumerate(tools):
        vals = [r["tools"].get(tool, {}).get("roofline", 0.0) for r in rows]
        ax.bar(xs + (k - (len(tools) - 1) / 2) * width, vals, width, label=tool)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(xs, [r["id"] for r in rows])
    ax.set_ylabel("roofline fraction (1.0 = copy bandwidth)")
    bw = header["copy_bandwidth"]["bytes_per_s"]
    ax.set_title(f"ptocpu bench {header['date']}: {header['threads']} threads, copy {bw / 1e9:.1f} GB/s")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


# --------------------------------------------------------------------------------------------
# entry point

