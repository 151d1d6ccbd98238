#!/usr/bin/env python3
"""Redraws the chapter figures from the committed CSVs (docs/results/) into docs/figures/.

    python3 tools/plot.py [RESULTS_DIR] [FIGURES_DIR]

Reads only CSVs: training/*steps.csv.gz and training/<chapter>_epochs.csv written by the trainers
(--out-dir; the steps gzipped, one file a chapter or several chapters' in one, told apart by their
chapter column), gemm/cases/<chapter>/median.csv written by bench/median_runs.py (each
chapter's GEMM against cuBLAS, the median of three processes), and
alternatives/06_fused_step/epilogue_versions.csv (ms per step of
each version of chapter 06's epilogue, taken from the run logs it names) and
fp8_accumulation/error_vs_k.csv. Writes:
  loss_curves.png        the reference chapter's loss over the whole run, and every other
                         chapter's difference from it (chapters equal at every step drawn once;
                         a chapter of the repository without a CSV named)
  gemm_tflops.png        TFLOP/s of each chapter and of cuBLAS (cuBLAS timed beside every
                         chapter: the median over the chapters, their range as a line) at the
                         headline shapes; a shape a chapter has no row for is marked "not timed"
  epilogue_versions.png  chapter 06's epilogue, version by version
  fp8_error_vs_k.png     the FP8 product's largest error as K grows, promoted into fp32 every K
                         tile and accumulated in the tensor cores
                         (fp8_accumulation/error_vs_k.csv, from `test_gemm_fp8 sweep`)
"""
import glob
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from plot_comparison import (absent_chapters, implementation_order, palette,  # noqa: E402
                             plot_loss_differences, save)

SMOOTHING_STEPS = 100
# The GEMM figure shows these benchmark cases (of the ~50 that bench_gemm times), in this order.
HEADLINE_CASES = ["square 4096", "square 8192", "b32 h1024 L2 forward", "b32 h8192 L2 forward",
                  "b256 h8192 L2 forward", "splitk 32x784x8192", "splitk 32x1024x1024"]


def read_all(pattern):
    frames = [pd.read_csv(path) for path in sorted(glob.glob(pattern))]
    return pd.concat(frames, ignore_index=True) if frames else None


def loss_curves(results, figures):
    steps = read_all(os.path.join(results, "training", "*steps.csv.gz"))
    if steps is None:
        return
    curves = {chapter: rows.set_index("step")["loss"].sort_index()
              for chapter, rows in steps.groupby("chapter")}
    epoch_steps = int(steps[steps["epoch"] == steps["epoch"].min()]["step"].max())
    title = f"Training loss over {steps['epoch'].nunique()} epochs"
    # The model, batch and GPU from the runs' epoch CSVs, where there are any.
    epochs = read_all(os.path.join(results, "training", "*_epochs.csv"))
    if epochs is not None:
        join = lambda column: " / ".join(str(v) for v in sorted(epochs[column].unique()))  # noqa
        title += (f", {join('layers')}, batch {join('batch')}, same initial weights and batch "
                  f"order\n{join('gpu')}")
    plot_loss_differences(curves, palette(curves), SMOOTHING_STEPS, title, "step", figures,
                          "loss_curves.png", epoch_steps=epoch_steps,
                          absent=absent_chapters(curves))


def gemm_throughput(results, figures):
    gemm = read_all(os.path.join(results, "gemm", "cases", "*", "median.csv"))
    if gemm is None:
        return
    # CUDA-graph replay times: the GPU's time without launch gaps.
    ours_column, cublas_column = "chapter_graph_tflops", "cublas_graph_tflops"
    gemm = gemm[gemm["case"].isin(HEADLINE_CASES)]
    cases = [c for c in HEADLINE_CASES if c in set(gemm["case"])]
    chapters = implementation_order(gemm["chapter"].unique())
    colors = palette(chapters)
    kernels = chapters + ["cuBLAS"]
    shapes = gemm.drop_duplicates("case").set_index("case")
    bar = 0.8 / len(kernels)
    fig, ax = plt.subplots(figsize=(11, 0.14 * len(cases) * len(kernels) + 1.8))
    for i, case in enumerate(cases):
        rows = gemm[gemm["case"] == case]
        for j, kernel in enumerate(kernels):
            y = i + (j - (len(kernels) - 1) / 2) * bar
            if kernel == "cuBLAS":  # one per chapter: the median, and the range as a line
                values = rows[cublas_column]
                ax.barh(y, values.median(), height=bar, color=colors["cublas"],
                        label="cuBLAS" if i == 0 else None)
                ax.plot([values.min(), values.max()], [y, y], color="#999999", linewidth=2.5,
                        solid_capstyle="butt")
                ax.text(values.max() * 1.08, y, "cuBLAS", va="center", fontsize=8)
                continue
            value = rows.loc[rows["chapter"] == kernel, ours_column]
            if value.empty:
                ax.text(0.02, y, f"{kernel}: not timed", transform=ax.get_yaxis_transform(),
                        va="center", ha="left", fontsize=8, color="#444444")
                print(f"gemm_tflops.png: no row for {kernel} at '{case}', marked not timed")
                continue
            ax.barh(y, value.iloc[0], height=bar, color=colors[kernel],
                    label=kernel if i == 0 else None)
            # The chapter's number at the bar's end: neighbouring colours are close.
            ax.text(value.iloc[0] * 1.08, y, kernel[:2], va="center", fontsize=8)
    ax.set_yticks(range(len(cases)))
    ax.set_yticklabels([f"{c}\n({shapes.m[c]} x {shapes.n[c]} x {shapes.k[c]})" for c in cases])
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(right=max(gemm[ours_column].max(), gemm[cublas_column].max()) * 3)
    ax.set_xlabel("TFLOP/s (log scale), CUDA-graph replay, median of 3 processes\n"
                  "cuBLAS: bar the median over the chapters' runs, grey line their range")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    ax.grid(axis="y", visible=False)
    dates = ", ".join(sorted(gemm["date"].unique()))  # chapters may come from different days
    ax.set_title(f"GEMM, fp16 in, fp32 accumulate\n{gemm['gpu'].iloc[0]}, {dates}")
    absent = absent_chapters(chapters)
    if absent:
        fig.text(0.01, 0.005, f"No GEMM CSV: {', '.join(absent)}.", fontsize=10,
                 color="#444444")
    fig.tight_layout(rect=(0, 0.012 if absent else 0, 1, 1))  # the note below the axis label
    save(fig, figures, "gemm_tflops.png")


def epilogue_versions(results, figures):
    path = os.path.join(results, "alternatives", "06_fused_step", "epilogue_versions.csv")
    if not os.path.exists(path):
        return
    versions = pd.read_csv(path)
    versions["model"] = versions.apply(lambda r: f"batch {r.batch}\nhidden {r.hidden}", axis=1)
    # Each version against the first (chapter 05) at the same model: the models' step times span
    # a factor 30, which on one axis would hide the differences between versions.
    baseline = versions.groupby("model")["ms_per_step"].transform("first")
    versions["relative"] = versions["ms_per_step"] / baseline
    fig, ax = plt.subplots(figsize=(10, 4))
    sns.barplot(data=versions, x="model", y="relative", hue="version", palette="colorblind",
                ax=ax)
    sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1), title="")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("")
    ax.set_ylabel("ms per step, relative to the first bar")
    ax.set_title("One training step of 784-h-h-h-10: chapter 06, version by version")
    fig.tight_layout()
    save(fig, figures, "epilogue_versions.png")


def fp8_error_vs_k(results, figures):
    path = os.path.join(results, "fp8_accumulation", "error_vs_k.csv")
    if not os.path.exists(path):
        return
    sweep = pd.read_csv(path).melt(id_vars="k", value_vars=["worst_promoted", "worst_unpromoted"],
                                   var_name="sums", value_name="error")
    sweep["sums"] = sweep["sums"].map({
        "worst_promoted": "promoted into fp32 every K tile (128)",
        "worst_unpromoted": "accumulated in the tensor cores"})
    fig, ax = plt.subplots(figsize=(7, 4))
    sns.lineplot(data=sweep, x="k", y="error", hue="sums", marker="o", palette="colorblind", ax=ax)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("K (products per element)")
    ax.set_ylabel("largest |C - float64| / sum |a b|")
    ax.set_title("FP8 (e4m3) product, 256 x 192 x K, against float64 of its inputs")
    ax.legend(title="")
    fig.tight_layout()
    save(fig, figures, "fp8_error_vs_k.png")


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else "docs/results"
    figures = sys.argv[2] if len(sys.argv) > 2 else "docs/figures"
    os.makedirs(figures, exist_ok=True)
    sns.set_theme(style="whitegrid")
    loss_curves(results, figures)
    gemm_throughput(results, figures)
    epilogue_versions(results, figures)
    fp8_error_vs_k(results, figures)


if __name__ == "__main__":
    main()
