#!/usr/bin/env python3
"""Times every trainer of a build, chapter by chapter and cuBLAS, on one GPU, over a grid of
batch sizes and hidden widths, then hands the same grid to the PyTorch script.

    python3 bench/compare.py --out OUT [--build-dir build] [--batches 32,256]
        [--hiddens 128,256,512,1024,2048,4096,8192] [--implementations 04_cp_async,cublas]
        [--data-dir DIR] [--epoch-budget-ms 2000] [--no-pytorch] [--pytorch-variants V1,V2]

Implementations: every chapter trainer BUILD/chapters/train_NN_name and BUILD/bench/train_cublas.
Each run trains the 784-h-h-h-10 model with the trainer's defaults (lr 0.05, seed 42, as the
PyTorch script must) for 3 epochs; the first is warm-up (module loading, cuBLAS heuristics, clocks
ramping up) and is dropped, the other two are timed.

Writes:
  OUT/comparison.csv        one row per run: date,gpu,sm_clock_mhz,driver,cuda,torch,
                            implementation,kind,batch,hidden,steps_timed,ms_per_step,ms_per_epoch,
                            repeats. steps_timed: steps timed per epoch; ms_per_step: median over
                            the timed epochs; ms_per_epoch: ms_per_step x ceil(60000 / batch), the
                            steps of a whole epoch; repeats: epochs timed; sm_clock_mhz: at the end
                            of the last timed epoch; torch: empty (PyTorch's rows fill it).
  OUT/loss_IMPL.csv         the first epoch's loss at every step at batch 32, hidden 1024:
                            implementation,batch,hidden,step,loss.
  OUT/runs/IMPL/bB_hH/      each run's own CSVs and printout, for tracing any number back.
  OUT/comparison_pytorch.csv  written by bench/pytorch_mlp.py, run last where it exists.

Prints one line per run and a table at the end. A failed run prints its error line and is left
out; the script then carries on and exits 1 at the end.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from arguments import integer_list

TRAIN_IMAGES = 60000
EPOCHS = 3  # the first one is warm-up
# The steps of a short first run that estimates a configuration's time per step (its second
# epoch, after warm-up): few, since at hidden 8192 a step of chapter 01 takes a third of a second.
PROBE_STEPS = 5
# The configuration whose loss curves are kept. It always trains whole epochs, so that the curves
# cover the whole first epoch (every chapter so far runs one in under 2 s on an H100).
LOSS_BATCH, LOSS_HIDDEN = 32, 1024
RUN_TIMEOUT_S = 900
COLUMNS = ["date", "gpu", "sm_clock_mhz", "driver", "cuda", "torch", "implementation", "kind",
           "batch", "hidden", "steps_timed", "ms_per_step", "ms_per_epoch", "repeats"]


class RunFailed(Exception):
    pass


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path, help="folder for the CSVs")
    parser.add_argument("--build-dir", default=Path("build"), type=Path)
    parser.add_argument("--batches", default=[32, 256], type=integer_list)
    parser.add_argument("--hiddens", default=[128, 256, 512, 1024, 2048, 4096, 8192],
                        type=integer_list)
    parser.add_argument("--implementations", type=lambda text: text.split(","),
                        help="comma-separated, e.g. 04_cp_async,cublas (default: all built)")
    parser.add_argument("--data-dir", help="MNIST folder (default: the trainers' own)")
    parser.add_argument("--epoch-budget-ms", default=2000.0, type=float,
                        help="train at most about this long per epoch (--max-steps)")
    parser.add_argument("--no-pytorch", action="store_true", help="skip bench/pytorch_mlp.py")
    parser.add_argument("--pytorch-variants",
                        help="passed to bench/pytorch_mlp.py --variants (default: all of its own; "
                             "torch.compile's autotuning takes about a minute per shape)")
    return parser.parse_args()


def find_trainers(build_dir, wanted):
    """{implementation: trainer path}: the chapters in order, then cuBLAS."""
    candidates = sorted((build_dir / "chapters").glob("train_*"))
    candidates.append(build_dir / "bench" / "train_cublas")
    # Meson keeps each target's objects in a folder train_NAME.p beside it: executables only.
    trainers = {path.name[len("train_"):]: path for path in candidates
                if path.is_file() and os.access(path, os.X_OK)}
    if not trainers:
        sys.exit(f"error: no trainers in {build_dir}/chapters or {build_dir}/bench (build first)")
    if wanted:
        missing = [name for name in wanted if name not in trainers]
        if missing:
            sys.exit(f"error: no trainer for {', '.join(missing)} in {build_dir} "
                     f"(built: {', '.join(trainers)})")
        trainers = {name: trainers[name] for name in wanted}
    return trainers


def train(trainer, out_dir, batch, hidden, epochs, max_steps, data_dir):
    """Runs the trainer; returns its epochs and steps CSVs. Raises RunFailed with its error line."""
    command = [str(trainer), "--batch", str(batch), "--hidden", str(hidden),
               "--epochs", str(epochs), "--out-dir", str(out_dir), "--no-eval"]
    if max_steps is not None:
        command += ["--max-steps", str(max_steps)]
    if data_dir:
        command += ["--data-dir", data_dir]
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise RunFailed(f"error: {trainer.name} ran longer than {RUN_TIMEOUT_S} s")
    (out_dir / "log.txt").write_text(" ".join(command) + "\n" + result.stdout + result.stderr)
    if result.returncode != 0:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        raise RunFailed(lines[-1] if lines else f"error: exit status {result.returncode}")
    name = trainer.name[len("train_"):]
    # A driver version such as 580.65 would otherwise be read as a number.
    return (pd.read_csv(out_dir / f"{name}_epochs.csv", dtype={"driver": str}),
            pd.read_csv(out_dir / f"{name}_steps.csv"))


def choose_max_steps(trainer, batch, hidden, budget_ms, data_dir):
    """--max-steps for a run: whole epochs where they fit in budget_ms, otherwise as many steps as
    fit, estimated from a short first run; None for whole epochs."""
    steps_per_epoch = math.ceil(TRAIN_IMAGES / batch)
    if (batch, hidden) == (LOSS_BATCH, LOSS_HIDDEN):
        return None
    with tempfile.TemporaryDirectory() as scratch:
        epochs, _ = train(trainer, Path(scratch), batch, hidden, 2, PROBE_STEPS, data_dir)
    ms_per_step = epochs["ms_per_step"].iloc[-1]
    fitting = max(1, int(budget_ms / ms_per_step))
    return None if fitting >= steps_per_epoch else fitting


def runtime_version(number):
    """13000 -> '13.0', as cudaRuntimeGetVersion encodes it."""
    return f"{number // 1000}.{number % 1000 // 10}"


def summarize(implementation, batch, hidden, epochs):
    timed = epochs[epochs["epoch"] > 1]
    last = timed.iloc[-1]
    ms_per_step = float(timed["ms_per_step"].median())
    return {
        "date": last["date"], "gpu": last["gpu"], "sm_clock_mhz": int(last["sm_clock_mhz"]),
        "driver": last["driver"], "cuda": runtime_version(int(last["cuda_runtime"])), "torch": "",
        "implementation": implementation,
        "kind": "cublas" if implementation == "cublas" else "chapter",
        "batch": batch, "hidden": hidden, "steps_timed": int(last["steps"]),
        "ms_per_step": ms_per_step,
        "ms_per_epoch": ms_per_step * math.ceil(TRAIN_IMAGES / batch),
        "repeats": len(timed),
    }


def write_losses(out, implementation, steps):
    first = steps[steps["epoch"] == 1]
    pd.DataFrame({"implementation": implementation, "batch": LOSS_BATCH, "hidden": LOSS_HIDDEN,
                  "step": first["step"], "loss": first["loss"]}).to_csv(
        out / f"loss_{implementation}.csv", index=False)


def run_pytorch(args, script):
    """The PyTorch script on the same grid; returns False if it failed."""
    command = [sys.executable, str(script), "--out", str(args.out),
               "--build-dir", str(args.build_dir),
               "--batches", ",".join(map(str, args.batches)),
               "--hiddens", ",".join(map(str, args.hiddens))]
    if args.pytorch_variants:
        command += ["--variants", args.pytorch_variants]
    if args.data_dir:
        command += ["--data-dir", args.data_dir]
    print("\n" + " ".join(command), flush=True)
    status = subprocess.run(command).returncode
    if status != 0:
        print(f"error: {script.name} exited with status {status}", flush=True)
    return status == 0


def print_table(out, with_pytorch):
    """ms per epoch, implementations side by side; PyTorch's rows too if its script ran."""
    paths = [out / "comparison.csv"] + ([out / "comparison_pytorch.csv"] if with_pytorch else [])
    frames = [pd.read_csv(path) for path in paths if path.exists()]
    rows = pd.concat(frames, ignore_index=True)
    if rows.empty:
        return
    table = rows.pivot_table(index=["batch", "hidden"], columns="implementation",
                             values="ms_per_epoch", sort=False)
    print(f"\nms per epoch ({rows['gpu'].iloc[0]}, {rows['date'].iloc[0]}):")
    print(table.to_string(float_format=lambda ms: f"{ms:.1f}"))


def main():
    args = parse_args()
    trainers = find_trainers(args.build_dir, args.implementations)
    args.out.mkdir(parents=True, exist_ok=True)
    rows, failures = [], 0
    pd.DataFrame(rows, columns=COLUMNS).to_csv(args.out / "comparison.csv", index=False)
    for implementation, trainer in trainers.items():
        for batch in args.batches:
            for hidden in args.hiddens:
                label = f"{implementation:<16} batch {batch:>4} hidden {hidden:>5}"
                run_dir = args.out / "runs" / implementation / f"b{batch}_h{hidden}"
                try:
                    max_steps = choose_max_steps(trainer, batch, hidden, args.epoch_budget_ms,
                                                 args.data_dir)
                    epochs, steps = train(trainer, run_dir, batch, hidden, EPOCHS, max_steps,
                                          args.data_dir)
                except RunFailed as error:
                    print(f"{label}: FAILED: {error}", flush=True)
                    failures += 1
                    continue
                row = summarize(implementation, batch, hidden, epochs)
                rows.append(row)
                # Rewritten after every run, so that an interrupted sweep keeps what it measured.
                pd.DataFrame(rows, columns=COLUMNS).to_csv(args.out / "comparison.csv",
                                                           index=False)
                if (batch, hidden) == (LOSS_BATCH, LOSS_HIDDEN):
                    write_losses(args.out, implementation, steps)
                print(f"{label}: {row['ms_per_epoch']:10.1f} ms/epoch ({row['ms_per_step']:.4f} "
                      f"ms/step, {row['steps_timed']} steps x {row['repeats']} epochs timed, "
                      f"SM {row['sm_clock_mhz']} MHz)", flush=True)
    pytorch_script = Path(__file__).resolve().parent / "pytorch_mlp.py"
    with_pytorch = not args.no_pytorch and pytorch_script.exists()
    pytorch_ok = run_pytorch(args, pytorch_script) if with_pytorch else True
    print_table(args.out, with_pytorch)
    if failures:
        print(f"\n{failures} run(s) failed", flush=True)
    return 0 if failures == 0 and pytorch_ok else 1


if __name__ == "__main__":
    sys.exit(main())
