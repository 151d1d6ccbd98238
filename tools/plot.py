#!/usr/bin/env python3
"""Redraws the chapter figures from the committed CSVs (docs/results/) into docs/figures/.

    python3 tools/plot.py [RESULTS_DIR] [FIGURES_DIR]

Reads only CSVs: <chapter>_steps.csv and <chapter>_epochs.csv written by the trainers
(--out-dir), gemm_<chapter>.csv written by bench_gemm_<chapter> (--csv).
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
    cublas = gemm.drop_duplicates("case")[["case", "cublas_tflops"]].rename(
        columns={"cublas_tflops": "tflops"}).assign(kernel="cuBLAS")
    ours = gemm[["case", "chapter_tflops", "chapter"]].rename(
        columns={"chapter_tflops": "tflops", "chapter": "kernel"})
    bars = pd.concat([ours, cublas], ignore_index=True)
    bars["case"] = bars["case"] + " (" + bars["case"].map(
        gemm.drop_duplicates("case").set_index("case").apply(
            lambda r: f"{r.m}x{r.n}x{r.k}", axis=1)) + ")"
    fig, ax = plt.subplots(figsize=(8, 0.45 * bars["case"].nunique() + 1.5))
    sns.barplot(data=bars, y="case", x="tflops", hue="kernel", orient="h", ax=ax)
    ax.set_xscale("log")
    ax.set_xlabel("TFLOP/s (log scale)")
    ax.set_ylabel("")
    gpu = gemm["gpu"].iloc[0]
    ax.set_title(f"GEMM, fp16 in, fp32 accumulate: {gpu}")
    fig.tight_layout()
    fig.savefig(os.path.join(figures, "gemm_tflops.png"), dpi=120)
    plt.close(fig)


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else "docs/results"
    figures = sys.argv[2] if len(sys.argv) > 2 else "docs/figures"
    os.makedirs(figures, exist_ok=True)
    sns.set_theme(style="whitegrid")
    loss_curves(results, figures)
    gemm_throughput(results, figures)


if __name__ == "__main__":
    main()
