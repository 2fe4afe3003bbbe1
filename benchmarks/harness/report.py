"""The comparison's outputs: a Markdown table per (placement, ranks, collective) with each library's median
bus bandwidth and Myriad's ratios to the peers, and one PNG of busbw against size (log-log), a panel per
(placement, ranks) and collective."""
from harness.libraries import LIBRARIES, TITLES
from harness.runs import size_label


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "—"


def gbs(v):
    return f"{v:.3f}" if v is not None else "—"


def markdown(results, ceilings, libraries=LIBRARIES):
    """results: {(placement, nranks, collective): {library: {size: median busbw GB/s}}}; a column per library
    of `libraries` and Myriad's ratio to each peer among them."""
    peers = [l for l in libraries if l != "myriad"]
    lines = []
    for (placement, nranks, collective), libs in results.items():
        ceiling = ceilings.get(placement)
        lines.append(f"\n### {collective}, {nranks} ranks, {placement}" + (f" ({ceiling})" if ceiling else ""))
        lines.append("| size | " + " | ".join(f"{TITLES[l]} GB/s" for l in libraries) +
                     "".join(f" | Myriad/{TITLES[p]}" for p in peers) + " |")
        lines.append("|---:|" + "---:|" * (len(libraries) + len(peers)))
        for size in sorted(libs["myriad"]):
            values = {l: libs.get(l, {}).get(size) for l in libraries}
            lines.append(f"| {size_label(size)} | " + " | ".join(gbs(values[l]) for l in libraries) +
                         "".join(f" | {ratio(values['myriad'], values[p])}" for p in peers) + " |")
    return "\n".join(lines) + "\n"


def plot(results, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator

    setups = sorted({(p, n) for p, n, _ in results}, key=lambda s: (s[0] != "shm", s[1]))
    collectives = list(dict.fromkeys(c for _, _, c in results))
    fig, axes = plt.subplots(len(setups), len(collectives), figsize=(4 * len(collectives), 3.2 * len(setups)),
                             squeeze=False, sharex=True)
    for i, (placement, nranks) in enumerate(setups):
        for j, collective in enumerate(collectives):
            ax = axes[i][j]
            for library, series in results.get((placement, nranks, collective), {}).items():
                sizes = sorted(series)
                ax.plot(sizes, [series[s] for s in sizes], marker="o", markersize=3, label=TITLES[library])
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_locator(LogLocator(base=4))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: size_label(int(round(x)))))
            ax.set_yscale("log")
            ax.set_title(f"{collective}, {nranks} ranks, {placement}", fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
            if j == 0:
                ax.set_ylabel("busbw (GB/s)")
            if i == len(setups) - 1:
                ax.set_xlabel("message size (bytes)")
            ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
