#!/usr/bin/env python3
"""Draws the comparison of the chapters, cuBLAS and PyTorch from its CSVs, and the table of the
newest chapter's speed-up over PyTorch.

    python3 tools/plot_comparison.py [--results docs/results/comparison] [--figures docs/figures]

Reads only CSVs; each is optional, and a figure whose inputs are missing is skipped with a
message:
  RESULTS/comparison.csv          bench/compare.py: chapters and cuBLAS (kind chapter, cublas)
  RESULTS/comparison_pytorch.csv  bench/pytorch_mlp.py: the PyTorch variants (kind pytorch)
  RESULTS/loss_*.csv              the first epoch's loss at every step, one implementation each
Writes into FIGURES:
  comparison_time.png      ms per epoch against the hidden width, log-log, a panel per batch
  comparison_speedup.png   the newest chapter's speed-up over each PyTorch variant
  comparison_loss.png      the reference loss curve and every other curve's difference from it
                           (curves equal at every step drawn once)
  comparison_table.md      the speed-up table in Markdown for the README, also printed
A point missing from a curve (a batch and hidden width without a row) is marked on the figure,
and so is a chapter of the repository that the CSVs do not have. tools/plot.py draws its loss
figure with plot_loss_differences() from here.
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
NOTE_WIDTH = 110  # characters a line of a note under a figure, at most
CHAPTER_NAME = re.compile(r"^(\d+)_")
CHAPTERS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "chapters")
# Colours: the chapters along a colour-blind-safe sequential scale in ladder order, cuBLAS black,
# PyTorch's variants in Okabe and Ito's vermillion, orange and reddish purple.
CUBLAS_COLOR = "#000000"
PYTORCH_COLORS = ["#D55E00", "#E69F00", "#CC79A7", "#56B4E9"]
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
    # No "Software" entry (the matplotlib version): the bytes then depend on the drawing only.
    figure.savefig(path, dpi=120, bbox_inches="tight", metadata={"Software": None})
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


def repository_chapters():
    """The chapters of this repository (chapters/NN_name), in order."""
    return sorted(name for name in os.listdir(CHAPTERS_DIR) if CHAPTER_NAME.match(name))


def absent_chapters(names):
    """The repository's chapters that are not among `names`."""
    return [chapter for chapter in repository_chapters() if chapter not in set(names)]


def note_absent_chapters(figure, names):
    """A line under the figure naming the repository's chapters that its CSVs do not have."""
    absent = absent_chapters(names)
    if absent:
        # Wrapped, so that a long list does not widen the figure.
        note = "\n".join(textwrap.wrap(f"Not in these CSVs: {', '.join(absent)}.", NOTE_WIDTH))
        figure.text(0.01, -0.03, note, fontsize=11, ha="left", va="top", color="#444444")
        print(f"noted absent chapters: {', '.join(absent)}")


def mark_missing(grid, frame, colors, top=True):
    """Writes 'not measured' at the hidden width where an implementation of a panel has no row
    though other implementations of the panel have one, in the implementation's colour, at the
    top of the panel or at its bottom."""
    for batch, ax in grid.axes_dict.items():
        panel = frame[frame["batch"] == batch]
        hiddens = set(panel["hidden"])
        marks = 0
        for name in implementation_order(panel["implementation"]):
            measured = set(panel.loc[panel["implementation"] == name, "hidden"])
            for hidden in sorted(hiddens - measured):
                y = 0.97 - 0.12 * marks if top else 0.03 + 0.12 * marks
                ax.text(hidden, y, f"{name}:\nnot measured", color=colors[name],
                        transform=ax.get_xaxis_transform(), ha="right",
                        va="top" if top else "bottom", fontsize=9,
                        bbox=dict(facecolor="white", edgecolor=colors[name], pad=2))
                marks += 1
                print(f"marked missing point: {name} at batch {batch}, hidden {hidden}")


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
    mark_missing(grid, timings, colors, top=False)
    note_absent_chapters(grid.figure, timings["implementation"])
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
    mark_missing(grid, ratios, colors)
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


def coinciding_groups(curves, order):
    """The names of `curves` (name -> Series of loss by step) in groups whose curves are equal at
    every step, each group and the groups in `order`."""
    groups = []
    for name in order:
        for group in groups:
            if curves[group[0]].equals(curves[name]):
                group.append(name)
                break
        else:
            groups.append([name])
    return groups


def group_label(group):
    """'05_split_k = 06_fused_step = ...' on lines of at most two names."""
    lines = [" = ".join(group[i:i + 2]) for i in range(0, len(group), 2)]
    return " =\n".join(lines)


def plot_loss_differences(curves, colors, window, title, xlabel, figures, name,
                          epoch_steps=None, absent=()):
    """The reference loss curve (smoothed, top) and every other curve's difference from it
    (smoothed, bottom). Curves equal at every step are one group, drawn once. The reference is
    the group of the newest chapter (else the first curve), named by its first member, the
    chapter whose arithmetic the later ones kept (the committed step CSVs of chapters 05-08 are
    equal bit for bit). `absent`: names without a curve, noted on the figure."""
    order = implementation_order(curves)
    groups = coinciding_groups(curves, order)
    newest = newest_chapter(order)
    reference_group = next(group for group in groups if newest in group) if newest else groups[0]
    reference = reference_group[0]
    smooth = lambda series: series.rolling(window, min_periods=1).mean()  # noqa: E731
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(11, 8), sharex=True,
                                         gridspec_kw={"height_ratios": [1, 1.4]})
    top.plot(curves[reference].index, smooth(curves[reference]), color=colors[reference],
             linewidth=1.5)
    log_y(top)
    top.set_ylabel(f"loss, mean of {window} steps\n(log scale)")
    top.set_title(f"The reference: {reference}'s loss", fontsize=12, loc="left")
    bottom.axhline(0, color=colors[reference], linewidth=3,
                   label=group_label(reference_group) + "\n(the reference)")
    styles = {"chapter": "-", "cublas": "--", "pytorch": ":"}
    for group in groups:
        if group is reference_group:
            continue
        difference = curves[group[0]] - curves[reference]
        bottom.plot(difference.index, smooth(difference), color=colors[group[0]],
                    linestyle=styles[kind_of(group[0])], linewidth=1.4, label=group_label(group))
    bottom.set_ylabel(f"loss minus {reference}'s,\nmean of {window} steps")
    bottom.set_xlabel(xlabel)
    bottom.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=10, frameon=False,
                  labelspacing=0.9)
    if epoch_steps:
        last = max(series.index.max() for series in curves.values())
        for ax in (top, bottom):
            for boundary in range(epoch_steps, last, epoch_steps):
                ax.axvline(boundary, color="#999999", linewidth=0.8, linestyle="--")
        for boundary in range(0, last, epoch_steps):
            top.text(boundary + epoch_steps / 2, 0.95, f"epoch {boundary // epoch_steps + 1}",
                     transform=top.get_xaxis_transform(), ha="center", va="top", fontsize=10,
                     color="#666666")
    same = [group for group in groups if len(group) > 1]
    lines = [f"Equal at every step, drawn once: {'; '.join(' = '.join(g) for g in same)}."
             if same else "No two curves are equal at every step."]
    if absent:
        lines.append(f"No curve in these CSVs: {', '.join(absent)}.")
    lines = [wrapped for line in lines for wrapped in textwrap.wrap(line, NOTE_WIDTH)]
    figure.text(0.01, 0.005, "\n".join(lines), fontsize=10, ha="left", va="bottom",
                color="#444444")
    figure.suptitle(title, fontsize=13)
    figure.tight_layout(rect=(0, 0.025 * (len(lines) + 1), 1, 1))
    for group in same:
        print(f"equal at every step: {' = '.join(group)}")
    save(figure, figures, name)


def plot_losses(losses, timings, colors, figures):
    """(c) the reference's first-epoch loss and every other implementation's difference from
    it."""
    longest = losses.groupby("implementation")["step"].count().max()
    window = min(SMOOTHING_STEPS, max(1, longest // 10))
    curves = {name: rows.set_index("step")["loss"].sort_index()
              for name, rows in losses.groupby("implementation")}
    batch = " / ".join(str(b) for b in sorted(losses["batch"].unique()))
    hidden = " / ".join(str(h) for h in sorted(losses["hidden"].unique()))
    plot_loss_differences(
        curves, colors, window,
        f"Training loss over the first epoch, batch {batch}, hidden {hidden}, same initial "
        f"weights and batch order\n{provenance(timings) if timings is not None else ''}",
        "step of the first epoch", figures, "comparison_loss.png",
        absent=absent_chapters(curves))


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default="docs/results/comparison",
                        help="folder of comparison.csv, comparison_pytorch.csv, loss_*.csv")
    parser.add_argument("--figures", default="docs/figures")
    return parser.parse_args()


def palette(names):
    """One colour per implementation, the same in every figure: the repository's chapters (and
    any other chapter named) along viridis in order, cuBLAS black, the PyTorch variants in
    PYTORCH_ORDER's order."""
    names = set(names)
    chapters = implementation_order(set(repository_chapters()) |
                                    {name for name in names if kind_of(name) == "chapter"})
    colors = dict(zip(chapters, sns.color_palette("viridis", len(chapters) + 1)))
    colors["cublas"] = CUBLAS_COLOR
    pytorch = implementation_order({name for name in names if kind_of(name) == "pytorch"})
    for i, name in enumerate(pytorch):
        colors[name] = PYTORCH_COLORS[i % len(PYTORCH_COLORS)]
    return colors


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
    os.makedirs(args.figures, exist_ok=True)
    sns.set_theme(style="whitegrid")

    timings = read_csvs([os.path.join(results, name) for name in
                         ["comparison.csv", "comparison_pytorch.csv"]
                         if os.path.exists(os.path.join(results, name))])
    if timings is not None and timings.empty:
        timings = None
    losses = read_csvs(sorted(glob.glob(os.path.join(results, "loss_*.csv"))))
    names = set()
    for frame in (timings, losses):
        if frame is not None:
            names.update(frame["implementation"].unique())
    colors = palette(names)

    plot_timings(timings, results, colors, args.figures)
    if losses is None:
        print(f"skipped comparison_loss.png: no loss_*.csv in {results}")
    else:
        plot_losses(losses, timings, colors, args.figures)


if __name__ == "__main__":
    main()
