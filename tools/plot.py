#!/usr/bin/env python3
"""Redraws the chapter figures from the committed CSVs (docs/results/) into docs/figures/.

    python3 tools/plot.py [RESULTS_DIR] [FIGURES_DIR]

Reads only CSVs: <chapter>_steps.csv and <chapter>_epochs.csv written by the trainers
(--out-dir), gemm_<chapter>.csv written by bench_gemm_<chapter> (--csv), and
06_fused_step/epilogue_versions.csv (ms per step of each version of chapter 06's epilogue, taken
from the run logs it names).
"""
import glob
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

SMOOTHING_STEPS = 100
# The GEMM figure shows these benchmark cases (of the ~50 that bench_gemm times), in this order.
HEADLINE_CASES = ["square 4096", "square 8192", "b32 h1024 L2 forward", "b32 h8192 L2 forward",
                  "b256 h8192 L2 forward", "splitk 32x784x8192", "splitk 32x1024x1024"]


def read_all(pattern):
    frames = [pd.read_csv(path) for path in sorted(glob.glob(pattern))]
    return pd.concat(frames, ignore_index=True) if frames else None


def loss_curves(results, figures):
    steps = read_all(os.path.join(results, "*_steps.csv"))
    if steps is None:
        return
    steps["smoothed loss"] = steps.groupby("chapter")["loss"].transform(
        lambda x: x.rolling(SMOOTHING_STEPS, min_periods=1).mean())
    fig, ax = plt.subplots(figsize=(7, 4))
    sns.lineplot(data=steps, x="step", y="smoothed loss", hue="chapter", ax=ax)
    ax.set_yscale("log")
    ax.set_title(f"Training loss (mean of {SMOOTHING_STEPS} steps), batch 32, default model")
    fig.tight_layout()
    fig.savefig(os.path.join(figures, "loss_curves.png"), dpi=120)
    plt.close(fig)


def gemm_throughput(results, figures):
    gemm = read_all(os.path.join(results, "gemm_*.csv"))
    if gemm is None:
        return
    # CUDA-graph replay times where the bench recorded them: the GPU's time without launch gaps.
    graph = "chapter_graph_tflops" in gemm.columns
    ours_column = "chapter_graph_tflops" if graph else "chapter_tflops"
    cublas_column = "cublas_graph_tflops" if graph else "cublas_tflops"
    gemm = gemm[gemm["case"].isin(HEADLINE_CASES)]
    cublas = gemm.groupby("case", as_index=False)[cublas_column].median().rename(
        columns={cublas_column: "tflops"}).assign(kernel="cuBLAS")
    ours = gemm[["case", ours_column, "chapter"]].rename(
        columns={ours_column: "tflops", "chapter": "kernel"})
    bars = pd.concat([ours, cublas], ignore_index=True)
    shapes = gemm.drop_duplicates("case").set_index("case")
    bars["case"] = bars["case"].map(lambda c: f"{c} ({shapes.m[c]}x{shapes.n[c]}x{shapes.k[c]})")
    order = [f"{c} ({shapes.m[c]}x{shapes.n[c]}x{shapes.k[c]})" for c in HEADLINE_CASES
             if c in shapes.index]
    fig, ax = plt.subplots(figsize=(10, 0.6 * len(order) + 1.5))
    sns.barplot(data=bars, y="case", x="tflops", hue="kernel", order=order, orient="h", ax=ax)
    sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1), title="")
    ax.set_xscale("log")
    ax.set_xlabel("TFLOP/s (log scale)" + (", CUDA-graph replay" if graph else ""))
    ax.set_ylabel("")
    ax.set_title(f"GEMM, fp16 in, fp32 accumulate\n{gemm['gpu'].iloc[0]}, {gemm['date'].iloc[0]}")
    fig.tight_layout()
    fig.savefig(os.path.join(figures, "gemm_tflops.png"), dpi=120)
    plt.close(fig)


def epilogue_versions(results, figures):
    path = os.path.join(results, "06_fused_step", "epilogue_versions.csv")
    if not os.path.exists(path):
        return
    versions = pd.read_csv(path)
    versions["model"] = versions.apply(lambda r: f"batch {r.batch}\nhidden {r.hidden}", axis=1)
    # Each version against the first (chapter 05) at the same model: the models' step times span
    # a factor 30, which on one axis would hide the differences between versions.
    baseline = versions.groupby("model")["ms_per_step"].transform("first")
    versions["relative"] = versions["ms_per_step"] / baseline
    fig, ax = plt.subplots(figsize=(10, 4))
    sns.barplot(data=versions, x="model", y="relative", hue="version", ax=ax)
    sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1), title="")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("")
    ax.set_ylabel("ms per step, relative to the first bar")
    ax.set_title("One training step of 784-h-h-h-10: chapter 06, version by version")
    fig.tight_layout()
    fig.savefig(os.path.join(figures, "epilogue_versions.png"), dpi=120)
    plt.close(fig)


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else "docs/results"
    figures = sys.argv[2] if len(sys.argv) > 2 else "docs/figures"
    os.makedirs(figures, exist_ok=True)
    sns.set_theme(style="whitegrid")
    loss_curves(results, figures)
    gemm_throughput(results, figures)
    epilogue_versions(results, figures)


if __name__ == "__main__":
    main()
