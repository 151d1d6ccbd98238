#!/usr/bin/env python3
"""Draws the comparison of the chapters, cuBLAS and PyTorch from its CSVs, and the table of the
newest chapter's speed-up over PyTorch.

    python3 tools/plot_comparison.py [--results docs/results/comparison]
        [--gemm-results DIR] [--figures docs/figures]

Reads only CSVs; each is optional, and a figure whose inputs are missing is skipped with a
message:
  RESULTS/comparison.csv          bench/compare.py: chapters and cuBLAS (kind chapter, cublas)
  RESULTS/comparison_pytorch.csv  bench/pytorch_mlp.py: the PyTorch variants (kind pytorch)
  RESULTS/loss_*.csv              the first epoch's loss at every step, one implementation each
  GEMM/gemm_*.csv                 bench_gemm_<chapter> --csv (GEMM: --gemm-results, default
                                  RESULTS); CUDA-graph replay times where the file has them
Writes into FIGURES:
  comparison_time.png      ms per epoch against the hidden width, log-log, a panel per batch
  comparison_speedup.png   the newest chapter's speed-up over each PyTorch variant
  comparison_loss.png      the smoothed loss curves, and each one's distance from the newest
                           chapter's
  comparison_gemm.png      TFLOP/s of every chapter and cuBLAS, a group of bars per GEMM shape
  comparison_table.md      the speed-up table in Markdown for the README, also printed
"""
import argparse
import glob
import os
import re
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator  # noqa: E402

SMOOTHING_STEPS = 100  # at most; a tenth of a shorter curve
# The GEMM figure's shapes (of the ~50 that bench_gemm times), in this order, where present.
GEMM_CASES = ["square 4096", "square 8192", "b32 h1024 L2 forward", "b32 h8192 L2 forward",
              "b256 h8192 L2 forward", "splitk 32x784x8192", "splitk 32x1024x1024"]
CHAPTER_NAME = re.compile(r"^(\d+)_")
# bench/pytorch_mlp.py's variants from the least to the most effort; others follow by name.
PYTORCH_ORDER = ["pytorch_eager", "pytorch_compile", "pytorch_compile_no_cudagraphs",
                 "pytorch_cudagraph"]


def read_csvs(paths):
    """The CSVs concatenated, or None if there are none."""
    # A driver version such as 580.65 would otherwise be read as a number.
    frames = [pd.read_csv(path, dtype={"driver": str}) for path in paths]
    return pd.concat(frames, ignore_index=True) if frames else None


def kind_of(implementation):
    if implementation.startswith("pytorch"):
        return "pytorch"
    return "cublas" if implementation == "cublas" else "chapter"


def newest_chapter(implementations):
    """The chapter with the highest number, or None."""
    chapters = [name for name in implementations if CHAPTER_NAME.match(name)]
    return max(chapters, key=lambda name: (int(CHAPTER_NAME.match(name).group(1)), name),
               default=None)


def implementation_order(implementations):
    """Chapters by number, then cuBLAS, then the PyTorch variants."""
    rank = {"chapter": 0, "cublas": 1, "pytorch": 2}

    def key(name):
        variant = PYTORCH_ORDER.index(name) if name in PYTORCH_ORDER else len(PYTORCH_ORDER)
        return rank[kind_of(name)], variant, name

    return sorted(set(implementations), key=key)


def kind_order(implementations):
    """The kinds present, chapters first: seaborn's line styles in a fixed order."""
    kinds = {kind_of(name) for name in implementations}
    return [kind for kind in ["chapter", "cublas", "pytorch"] if kind in kinds]


def provenance(frame):
    """'GPU, date' from the gpu and date columns (several of each joined with ' / ')."""
    gpus = " / ".join(sorted(frame["gpu"].dropna().astype(str).unique()))
    dates = " / ".join(sorted(frame["date"].dropna().astype(str).unique()))
    return f"{gpus}, {dates}"


def save(figure, figures, name):
    path = os.path.join(figures, name)
    figure.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(figure)
    print(f"wrote {path}")


def log_y(ax, unit="", subs=(1, 2, 5)):
    """Log y axis labelled in plain numbers at subs x 10^n."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}{unit}"))
    ax.yaxis.set_minor_locator(NullLocator())


def hidden_axes(grid, hiddens, unit="", subs=(1, 2, 5)):
    """Log2 x axis with a tick at each measured hidden width; log y axis."""
    for ax in grid.axes.flat:
        ax.set_xscale("log", base=2)
        ax.set_xticks(hiddens)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax.xaxis.set_minor_locator(NullLocator())
        log_y(ax, unit, subs)


def plot_time(timings, colors, figures):
    """(a) ms per epoch against the hidden width, one line per implementation."""
    grid = sns.relplot(data=timings, x="hidden", y="ms_per_epoch", hue="implementation",
                       hue_order=implementation_order(timings["implementation"]), palette=colors,
                       style="kind",
                       style_order=kind_order(timings["implementation"]), markers=True,
                       kind="line", col="batch", height=4.2, aspect=1.05,
                       facet_kws={"sharey": False})
    hidden_axes(grid, sorted(timings["hidden"].unique()))
    grid.set_axis_labels("hidden width h of 784-h-h-h-10", "ms per epoch (log scale)")
    grid.set_titles("batch {col_name}")
    grid.figure.suptitle(f"One training epoch (60000 images), fp16 GEMMs, fp32 weights\n"
                         f"{provenance(timings)}", y=1.07)
    save(grid.figure, figures, "comparison_time.png")


def speedups(timings, chapter):
    """PyTorch's rows with `speedup`: their ms per epoch / the chapter's at that batch and
    hidden."""
    ours = timings[timings["implementation"] == chapter][["batch", "hidden", "ms_per_epoch"]]
    pytorch = timings[timings["kind"] == "pytorch"]
    merged = pytorch.merge(ours, on=["batch", "hidden"], suffixes=("", "_chapter"))
    return merged.assign(speedup=merged["ms_per_epoch"] / merged["ms_per_epoch_chapter"])


def plot_speedup(ratios, chapter, colors, figures):
    """(b) the newest chapter's speed-up over each PyTorch variant, a line at 1x."""
    grid = sns.relplot(data=ratios, x="hidden", y="speedup", hue="implementation",
                       hue_order=implementation_order(ratios["implementation"]), palette=colors,
                       marker="o",
                       kind="line", col="batch", height=4.2, aspect=1.05)
    hidden_axes(grid, sorted(ratios["hidden"].unique()), unit="x", subs=(1, 1.5, 2, 3, 5, 7))
    for ax in grid.axes.flat:
        ax.axhline(1, color="black", linewidth=1, linestyle="--")
    grid.set_axis_labels("hidden width h of 784-h-h-h-10",
                         f"PyTorch time / {chapter} time (log scale)")
    grid.set_titles("batch {col_name}")
    grid.figure.suptitle(f"Speed-up of {chapter} over PyTorch per epoch (above 1x: {chapter} is "
                         f"faster)\n{provenance(ratios)}", y=1.07)
    save(grid.figure, figures, "comparison_speedup.png")


def speedup_table(ratios, chapter, timings):
    """Markdown: per batch and hidden, the chapter's ms per epoch and each PyTorch variant's with
    its ratio."""
    variants = implementation_order(ratios["implementation"])
    lines = [f"{chapter} against PyTorch, ms per epoch ({provenance(timings)}); in brackets "
             f"PyTorch's time / {chapter}'s: above 1x the chapter is faster.", "",
             "| batch | hidden | " + " | ".join([chapter] + variants) + " |",
             "|---:|---:|" + "---:|" * (len(variants) + 1)]
    for (batch, hidden), group in ratios.groupby(["batch", "hidden"]):
        by_variant = group.set_index("implementation")
        cells = [f"{group['ms_per_epoch_chapter'].iloc[0]:.1f}"]
        for variant in variants:
            if variant in by_variant.index:
                row = by_variant.loc[variant]
                cells.append(f"{row['ms_per_epoch']:.1f} ({row['speedup']:.2f}x)")
            else:
                cells.append("-")
        lines.append(f"| {batch} | {hidden} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def smoothed_losses(losses):
    """The loss curves with `smoothed` (rolling mean, shorter over the first steps) and
    `distance` (the full-window mean of the step-by-step difference from the newest chapter's
    curve, else the first implementation's); and the window."""
    longest = losses.groupby("implementation")["step"].count().max()
    window = min(SMOOTHING_STEPS, max(1, longest // 10))
    losses = losses.sort_values(["implementation", "step"]).copy()
    by_implementation = losses.groupby("implementation")["loss"]
    losses["smoothed"] = by_implementation.transform(
        lambda x: x.rolling(window, min_periods=1).mean())
    names = implementation_order(losses["implementation"])
    reference = newest_chapter(names) or names[0]
    reference_curve = losses[losses["implementation"] == reference].set_index("step")["loss"]
    losses["distance"] = (losses["loss"] - losses["step"].map(reference_curve)).groupby(
        losses["implementation"]).transform(lambda x: x.rolling(window).mean())
    return losses, window, reference


def plot_losses(losses, timings, colors, figures):
    """(c) every implementation's first-epoch loss, smoothed, and its distance from the newest
    chapter's."""
    losses = losses.assign(kind=losses["implementation"].map(kind_of))
    losses, window, reference = smoothed_losses(losses)
    order = implementation_order(losses["implementation"])
    figure, (left, right) = plt.subplots(1, 2, figsize=(13, 4.5))
    for ax, column in [(left, "smoothed"), (right, "distance")]:
        sns.lineplot(data=losses, x="step", y=column, hue="implementation", hue_order=order,
                     palette=colors,
                     style="kind", style_order=kind_order(order), ax=ax,
                     legend=ax is right)
        ax.set_xlabel("step of the first epoch")
    log_y(left)
    left.set_ylabel(f"training loss, mean of {window} steps (log scale)")
    right.axhline(0, color="black", linewidth=1)
    right.set_ylabel(f"loss minus {reference}'s, mean of {window} steps")
    sns.move_legend(right, "upper left", bbox_to_anchor=(1.02, 1), title="")
    batch = " / ".join(str(b) for b in sorted(losses["batch"].unique()))
    hidden = " / ".join(str(h) for h in sorted(losses["hidden"].unique()))
    where = f"\n{provenance(timings)}" if timings is not None else ""
    figure.suptitle(f"Training loss over the first epoch, batch {batch}, hidden {hidden}, same "
                    f"initial weights and batch order (rolling mean of {window} steps){where}")
    figure.tight_layout()
    save(figure, figures, "comparison_loss.png")


def gemm_bars(gemm):
    """One row per shape and kernel (each chapter, cuBLAS) with its TFLOP/s, from CUDA-graph
    replay times where the file recorded them, else from the host-timed ones."""
    flops = 2.0 * gemm["m"] * gemm["n"] * gemm["k"]
    timed = {}
    for who in ["chapter", "cublas"]:
        ms = gemm[f"{who}_ms"]
        if f"{who}_graph_ms" in gemm.columns:
            ms = gemm[f"{who}_graph_ms"].fillna(ms)
        timed[who] = flops / (ms * 1e9)
    shape = gemm["m"].astype(str) + "x" + gemm["n"].astype(str) + "x" + gemm["k"].astype(str)
    gemm = gemm.assign(label=gemm["case"].map(lambda case: textwrap.fill(case, 12)) + "\n(" +
                       shape + ")")
    ours = pd.DataFrame({"label": gemm["label"], "kernel": gemm["chapter"],
                         "tflops": timed["chapter"]})
    cublas = pd.DataFrame({"label": gemm["label"], "tflops": timed["cublas"]}).groupby(
        "label", as_index=False, sort=False)["tflops"].median().assign(kernel="cuBLAS")
    return pd.concat([ours, cublas], ignore_index=True)


def plot_gemm(gemm, colors, figures):
    """(d) grouped bars: TFLOP/s of every chapter and cuBLAS per GEMM shape."""
    gemm = gemm[gemm["case"].isin(GEMM_CASES)]
    if gemm.empty:
        print(f"skipped comparison_gemm.png: none of the cases {', '.join(GEMM_CASES)} in the "
              f"GEMM CSVs")
        return
    gemm = gemm.assign(case=pd.Categorical(gemm["case"], GEMM_CASES)).sort_values("case")
    gemm["case"] = gemm["case"].astype(str)
    bars = gemm_bars(gemm)
    order = list(dict.fromkeys(bars["label"]))
    kernels = implementation_order(gemm["chapter"]) + ["cuBLAS"]
    graph = "chapter_graph_ms" in gemm.columns
    figure, ax = plt.subplots(figsize=(1.9 * len(order) + 3, 5))
    sns.barplot(data=bars, x="label", y="tflops", hue="kernel", order=order, hue_order=kernels,
                palette={**colors, "cuBLAS": colors["cublas"]}, ax=ax)
    sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1), title="")
    log_y(ax)
    ax.set_xlabel("")
    ax.set_ylabel("TFLOP/s (log scale)")
    timing = "CUDA-graph replay times where recorded" if graph else "host-timed launches"
    ax.set_title(f"GEMM throughput, fp16 in, fp32 accumulate ({timing})\n{provenance(gemm)}")
    save(figure, figures, "comparison_gemm.png")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default="docs/results/comparison",
                        help="folder of comparison.csv, comparison_pytorch.csv, loss_*.csv")
    parser.add_argument("--gemm-results", help="folder of gemm_*.csv (default: --results)")
    parser.add_argument("--figures", default="docs/figures")
    return parser.parse_args()


def palette(frames):
    """One colour per implementation, the same in every figure."""
    names = set()
    for frame, column in frames:
        if frame is not None:
            names.update(frame[column].unique())
    order = implementation_order(names | {"cublas"})
    return dict(zip(order, sns.color_palette("tab10" if len(order) <= 10 else "husl",
                                             len(order))))


def plot_timings(timings, results, colors, figures):
    """(a), (b) and the table, from comparison.csv and comparison_pytorch.csv."""
    if timings is None:
        print(f"skipped comparison_time.png, comparison_speedup.png, comparison_table.md: no "
              f"comparison.csv or comparison_pytorch.csv in {results}")
        return
    plot_time(timings, colors, figures)
    chapter = newest_chapter(timings["implementation"].unique())
    ratios = speedups(timings, chapter) if chapter else pd.DataFrame()
    if ratios.empty:
        print("skipped comparison_speedup.png, comparison_table.md: they need a chapter's and "
              "PyTorch's rows at the same batch and hidden")
        return
    plot_speedup(ratios, chapter, colors, figures)
    table = speedup_table(ratios, chapter, timings)
    print("\n" + table)
    path = os.path.join(figures, "comparison_table.md")
    with open(path, "w") as file:
        file.write(table)
    print(f"wrote {path}")


def main():
    args = parse_args()
    results = args.results
    gemm_dir = args.gemm_results or results
    os.makedirs(args.figures, exist_ok=True)
    sns.set_theme(style="whitegrid")

    timings = read_csvs([os.path.join(results, name) for name in
                         ["comparison.csv", "comparison_pytorch.csv"]
                         if os.path.exists(os.path.join(results, name))])
    if timings is not None and timings.empty:
        timings = None
    losses = read_csvs(sorted(glob.glob(os.path.join(results, "loss_*.csv"))))
    gemm = read_csvs(sorted(glob.glob(os.path.join(gemm_dir, "gemm_*.csv"))))
    colors = palette([(timings, "implementation"), (losses, "implementation"),
                      (gemm, "chapter")])

    plot_timings(timings, results, colors, args.figures)
    if losses is None:
        print(f"skipped comparison_loss.png: no loss_*.csv in {results}")
    else:
        plot_losses(losses, timings, colors, args.figures)
    if gemm is None:
        print(f"skipped comparison_gemm.png: no gemm_*.csv in {gemm_dir}")
    else:
        plot_gemm(gemm, colors, args.figures)


if __name__ == "__main__":
    main()
