#!/usr/bin/env python3
"""PyTorch's side of the comparison: the chapters' model, data, precision, initial weights and
batch order, trained by PyTorch three ways and timed on the GPU.

    python3 bench/pytorch_mlp.py --out OUT [--batches 32,256]
        [--hiddens 128,256,512,1024,2048,4096,8192]
        [--variants pytorch_eager,pytorch_compile,pytorch_cudagraph] [--data-dir DIR]
        [--build-dir BUILD] [--lr 0.05] [--seed 42] [--windows 3] [--window-steps 200]
        [--warmup-steps 20] [--append] [--quick]
    python3 bench/pytorch_mlp.py --self-test [--data-dir DIR] [--build-dir BUILD]
        (numpy only, no torch, no GPU)

The model is the trainers' 784-h-h-h-10 ReLU MLP with softmax cross-entropy (mean over the
batch) and plain SGD. Weights are fp32 and every GEMM runs on fp16 operands with fp32
accumulation (torch.autocast float16, reduced-precision reductions off). What the trainers start
from comes from the C++ itself: BUILD/common/trainer_inputs (common/trainer_inputs.cpp), given
the trainers' options, writes the initial weights and biases, every epoch's batch order and the
train images normalised as common/dataset.cpp does, as .npy files into a temporary folder. The
images are kept on the GPU in fp16, as the trainers keep them, so loss curves compare step by
step. The batch gather runs on the GPU, no step waits for the host, and losses stay in a
GPU tensor until the timed region has ended. What autocast does differently from the trainers:
biases enter the GEMM epilogue as fp16, logits are fp16 before the fp32 loss, and gradients of
weights and biases come out of fp16 GEMMs as fp16 before the fp32 update (the trainers keep
those three in fp32), so the curves agree closely rather than bit for bit.

Variants:
  pytorch_eager      module call, loss.backward(), torch.optim.SGD(foreach=True) step
  pytorch_compile    the same with the module (gather, forward, loss) under
                     torch.compile(mode="max-autotune", fullgraph=True, dynamic=False) and
                     torch.compiler.cudagraph_mark_step_begin() before each step. If that mode
                     fails, the rest of the run uses "max-autotune-no-cudagraphs" and its rows
                     say so in the implementation column: pytorch_compile_no_cudagraphs.
  pytorch_cudagraph  the whole step (gather, forward, loss, backward, SGD update through
                     torch._foreach_add_) captured once with torch.cuda.graph after warm-up on
                     a side stream; a device counter picks the step's row of a [steps, batch]
                     schedule and advances inside the graph, so a step is one replay.

Timing: after warm-up (which includes compilation and autotuning, reported separately), CUDA
events around --windows windows of full-batch steps; the median ms per step is kept. Where the
batch does not divide 60000 (batch 256: 234 full batches and one of 96), the last, partial batch
is timed the same way in windows of its own (its own compiled shape, its own captured graph), and
    ms_per_step  = (full_batches x full-batch median + partial-batch median) / ceil(60000 / batch),
the mean step of an epoch as the trainers report it, and ms_per_epoch = ms_per_step x
ceil(60000 / batch). steps_timed is the number of full-batch steps per window; repeats the number
of windows; sm_clock_mhz and driver come from nvidia-smi right after the timed windows.

Writes:
  OUT/comparison_pytorch.csv   date,gpu,sm_clock_mhz,driver,cuda,torch,implementation,kind,
                               batch,hidden,steps_timed,ms_per_step,ms_per_epoch,repeats
                               (kind "pytorch"), rewritten after every measurement; --append
                               keeps the rows of an earlier run except those measured again
  OUT/loss_IMPLEMENTATION.csv  implementation,batch,hidden,step,loss: every step of the first
                               epoch at batch 32, hidden 1024, from the initial weights
  OUT/pytorch_mlp_errors.txt   the traceback of every failed measurement, if any
A failed measurement prints one error line; the others still run and the exit status is 1.

--quick: a smoke test of every code path in little time: 2 windows of 4 steps, 3 warm-up steps,
20 loss steps, and unless given otherwise batches 32,256 and hidden 1024 (max-autotune still
compiles three shapes: batch 32, 256 and the partial 96).

--self-test runs trainer_inputs for 784-1024-1024-1024-10 at seed 42 over two epochs with
--checksums, reads its files as a measurement does, and checks what PyTorch would train from
against the checksums the C++ prints: every initial weight and bias in nn.Linear's layout, and
both epochs' batches at batch 32 (sample ids, fp16 images, labels), bit for bit. It prints its
lines and exits 1 on any difference.
"""
import argparse
import csv
import datetime
import difflib
import gc
import math
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from arguments import integer_list

try:
    import numpy as np
except ImportError as missing:
    sys.exit(f"error: pytorch_mlp.py needs numpy ({missing})")

torch = None  # imported by import_torch(): --self-test runs without it

TRAIN_IMAGES = 60000
PIXELS = 28 * 28
CLASSES = 10
LOSS_BATCH, LOSS_HIDDEN = 32, 1024
VARIANTS = ["pytorch_eager", "pytorch_compile", "pytorch_cudagraph"]
COMPILE_MODES = ["max-autotune", "max-autotune-no-cudagraphs"]
COLUMNS = ["date", "gpu", "sm_clock_mhz", "driver", "cuda", "torch", "implementation", "kind",
           "batch", "hidden", "steps_timed", "ms_per_step", "ms_per_epoch", "repeats"]
ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = ROOT / "data" / "mnist"
DEFAULT_BUILD_DIR = ROOT / "build"
# Hidden widths above this get proportionally shorter windows (a step at 8192 is ~4x longer).
FULL_WINDOW_HIDDEN = 2048
SELF_TEST_EPOCHS = 2
MASK64 = (1 << 64) - 1
CHECKSUM_CHUNK = 1 << 22  # elements per numpy pass


class InputsError(Exception):
    """trainer_inputs is missing or failed (its error line), or wrote something unexpected."""


class Diverged(RuntimeError):
    """A non-finite training loss: no other compile mode would help."""


# --- what the trainers start from, written by common/trainer_inputs.cpp --------------------------

def layer_sizes(hidden):
    return [PIXELS, hidden, hidden, hidden, CLASSES]


def write_trainer_inputs(args, folder, hidden, epochs, train_split, checksums=False):
    """Runs BUILD/common/trainer_inputs with the trainers' options, writing into `folder`;
    returns the lines it prints (with checksums, theirs)."""
    tool = args.build_dir / "common" / "trainer_inputs"
    if not tool.is_file():
        raise InputsError(f"{tool} not found (ninja -C {args.build_dir} common/trainer_inputs)")
    command = [str(tool), "--out-dir", str(folder), "--data-dir", str(args.data_dir),
               "--hidden", str(hidden), "--seed", str(args.seed), "--epochs", str(epochs)]
    command += ["--train-split"] * train_split + ["--checksums"] * checksums
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines() or [f"exit status {result.returncode}"]
        raise InputsError(f"{tool.name}: {lines[-1].removeprefix('error: ')}")
    return result.stdout.splitlines()


def load_params(folder, hidden):
    """[w0, b0, w1, b1, ...] in the order of nn.Sequential's parameters: weights [out, in] as
    nn.Linear holds them, biases [out]."""
    return [np.load(folder / f"{kind}{layer}.npy")
            for layer in range(len(layer_sizes(hidden)) - 1) for kind in "wb"]


def load_orders(folder):
    """[epochs, 60000]: each epoch's sample ids in the order the trainers visit them."""
    return np.load(folder / "order.npy").astype(np.int64)


def load_split(folder):
    """(train images [60000, 784] in fp16, labels [60000] as int64), as the trainers hold them."""
    images = np.load(folder / "train_images.npy").astype(np.float16)
    labels = np.load(folder / "train_labels.npy").astype(np.int64)
    if len(images) != TRAIN_IMAGES:
        raise InputsError(f"{len(images)} train images, expected {TRAIN_IMAGES}")
    return images, labels


def epochs_needed(batch, steps):
    return max(1, math.ceil(steps / (TRAIN_IMAGES // batch)))


def make_schedule(batch, steps_needed, orders):
    """([steps, batch] sample ids of whole-batch steps over as many epochs as needed; the partial
    last batch of epoch 0 or None), from the trainers' epoch orders."""
    full = TRAIN_IMAGES // batch
    epochs = epochs_needed(batch, steps_needed)
    if len(orders) < epochs:
        raise InputsError(f"order.npy holds {len(orders)} epochs, {epochs} needed")
    schedule = orders[:epochs, :full * batch].reshape(epochs * full, batch)
    partial = orders[0, full * batch:] if TRAIN_IMAGES % batch else None
    return schedule, partial


def checksum_line(name, values):
    """As trainer_inputs --checksums prints it: the sum over i of (i + 1) x the bits of element i
    in C order, modulo 2^64; floats by their float32 bit pattern (fp16 widens exactly)."""
    flat = np.ascontiguousarray(values).reshape(-1)
    if flat.dtype.kind == "f":
        flat = flat.astype(np.float32).view(np.uint32)
    total = 0
    for start in range(0, flat.size, CHECKSUM_CHUNK):
        part = flat[start:start + CHECKSUM_CHUNK].astype(np.uint64)
        index = np.arange(start + 1, start + part.size + 1, dtype=np.uint64)
        total = (total + int((part * index).sum(dtype=np.uint64))) & MASK64
    return f"{name} {'x'.join(map(str, values.shape))} {total:016x}"


def self_test(args):
    """What a measurement at batch 32, hidden 1024 would train from, against trainer_inputs'
    checksums (the module's docstring says which); returns 1 on any difference."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        expected = write_trainer_inputs(args, folder, LOSS_HIDDEN, SELF_TEST_EPOCHS,
                                        train_split=True, checksums=True)
        params = load_params(folder, LOSS_HIDDEN)
        images, labels = load_split(folder)
        steps = SELF_TEST_EPOCHS * (TRAIN_IMAGES // LOSS_BATCH)
        schedule, _ = make_schedule(LOSS_BATCH, steps, load_orders(folder))
    actual = [checksum_line(f"{'wb'[i % 2]}{i // 2}", array) for i, array in enumerate(params)]
    for epoch, rows in enumerate(schedule.reshape(SELF_TEST_EPOCHS, -1)):
        actual += [checksum_line(f"order e{epoch}", rows),
                   checksum_line(f"images e{epoch}", images[rows]),
                   checksum_line(f"labels e{epoch}", labels[rows])]
    print("\n".join(actual))
    if actual != expected:
        print("error: PyTorch's inputs differ from the C++ (- trainer_inputs, + pytorch_mlp.py):",
              file=sys.stderr)
        print("\n".join(difflib.unified_diff(expected, actual, lineterm="", n=0)),
              file=sys.stderr)
        return 1
    print(f"{len(actual)} checksums equal to trainer_inputs': initial parameters, "
          f"{SELF_TEST_EPOCHS} epochs of batches", file=sys.stderr)
    return 0


# --- the PyTorch side ----------------------------------------------------------------------------

def import_torch():
    global torch
    try:
        import torch as imported
    except ImportError as error:
        raise SystemExit(f"error: cannot import torch ({error}); only --self-test runs without it")
    if not imported.cuda.is_available():
        raise SystemExit("error: PyTorch sees no CUDA device")
    torch = imported


def make_module(hidden, images, labels):
    """The model with the batch gather and the loss: module(rows) -> mean cross-entropy."""
    nn = torch.nn

    class MlpLoss(nn.Module):
        def __init__(self):
            super().__init__()
            sizes = layer_sizes(hidden)
            layers = []
            for fan_in, fan_out in zip(sizes, sizes[1:]):
                layers += [nn.Linear(fan_in, fan_out, device="cuda"), nn.ReLU()]
            self.mlp = nn.Sequential(*layers[:-1])
            self.register_buffer("images", images, persistent=False)
            self.register_buffer("labels", labels, persistent=False)

        def forward(self, rows):
            x = self.images.index_select(0, rows)
            y = self.labels.index_select(0, rows)
            # No weight-cast cache: each weight is cast once per step anyway, and a CUDA graph
            # must not capture a cache.
            with torch.autocast("cuda", dtype=torch.float16, cache_enabled=False):
                logits = self.mlp(x)
            return torch.nn.functional.cross_entropy(logits.float(), y)

    return MlpLoss()


def restore(params, init):
    with torch.no_grad():
        for param, value in zip(params, init):
            param.copy_(value)


class StepRunner:
    """pytorch_eager and pytorch_compile: one Python call per step and torch.optim.SGD."""

    def __init__(self, module, call, schedule, partial_rows, lr, init, mark_steps):
        self.call = call
        # One tensor per step rather than views into the schedule: a compiled module then sees
        # the same storage offset (0) at every call.
        self.rows = [row.clone() for row in schedule]
        self.partial_rows = partial_rows
        self.params = list(module.parameters())
        self.init = init
        self.optimizer = torch.optim.SGD(self.params, lr=lr, foreach=True)
        self.mark_steps = mark_steps
        self.losses = torch.zeros(len(schedule), device="cuda")
        self.partial_loss = torch.zeros((), device="cuda")
        self.step_index = 0

    def _step(self, rows):
        self.optimizer.zero_grad(set_to_none=True)
        if self.mark_steps:
            torch.compiler.cudagraph_mark_step_begin()
        loss = self.call(rows)
        loss.backward()
        self.optimizer.step()
        return loss.detach()

    def steps(self, count):
        for _ in range(count):
            slot = self.step_index % len(self.rows)
            self.losses[slot] = self._step(self.rows[slot])
            self.step_index += 1

    def partial_steps(self, count):
        for _ in range(count):
            self.partial_loss.copy_(self._step(self.partial_rows))

    def warm_up(self, count):
        """Runs `count` steps; returns the seconds of the first, which compiles."""
        return first_of_timed(self.steps, count)

    def warm_up_partial(self, count):
        return first_of_timed(self.partial_steps, count)

    def restart(self):
        restore(self.params, self.init)
        self.step_index = 0


class GraphRunner:
    """pytorch_cudagraph: one captured graph per batch shape; a step is one replay."""

    def __init__(self, module, schedule, partial_rows, lr, init):
        self.module = module
        self.schedule = schedule
        self.partial_rows = partial_rows
        self.params = list(module.parameters())
        self.lr = lr
        self.init = init
        self.counter = torch.zeros(1, dtype=torch.int64, device="cuda")
        self.losses = torch.zeros(len(schedule), device="cuda")
        self.partial_loss = torch.zeros((), device="cuda")
        self.stream = torch.cuda.Stream()
        self.graph = self.partial_graph = None

    def _update(self, rows):
        loss = self.module(rows)
        grads = torch.autograd.grad(loss, self.params)
        with torch.no_grad():
            torch._foreach_add_(self.params, grads, alpha=-self.lr)  # SGD(foreach=True)'s update
        return loss.detach()

    def _full_step(self):
        loss = self._update(self.schedule.index_select(0, self.counter).view(-1))
        self.losses.index_copy_(0, self.counter, loss.view(1))
        self.counter.add_(1).remainder_(len(self.schedule))

    def _partial_step(self):
        self.partial_loss.copy_(self._update(self.partial_rows))

    def _capture(self, body, warmup):
        """Runs body `warmup` times on the side stream, then captures it on that stream."""
        begin = time.perf_counter()
        self.stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.stream):
            for _ in range(warmup):
                body()
        torch.cuda.current_stream().wait_stream(self.stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=self.stream):
            body()
        torch.cuda.synchronize()
        return graph, time.perf_counter() - begin

    def steps(self, count):
        for _ in range(count):
            self.graph.replay()

    def partial_steps(self, count):
        for _ in range(count):
            self.partial_graph.replay()

    def warm_up(self, count):
        """Warm-up and capture; returns their seconds. The counter stands at `count` after."""
        self.graph, seconds = self._capture(self._full_step, count)
        return seconds

    def warm_up_partial(self, count):
        self.partial_graph, seconds = self._capture(self._partial_step, count)
        return seconds

    def restart(self):
        restore(self.params, self.init)
        self.counter.zero_()


def first_of_timed(run, count):
    """run(1), timed to its end on the GPU, then run(count - 1); returns the first's seconds."""
    begin = time.perf_counter()
    run(1)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - begin
    run(count - 1)
    return seconds


def median_ms_per_step(launch, windows, steps):
    """Median over `windows` CUDA-event windows of the ms per step; launch(n) enqueues n steps."""
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    per_step = []
    for _ in range(windows):
        torch.cuda.synchronize()
        start.record()
        launch(steps)
        stop.record()
        stop.synchronize()
        per_step.append(start.elapsed_time(stop) / steps)
    return statistics.median(per_step)


def gpu_clock_and_driver():
    """(SM clock in MHz, driver version) from nvidia-smi: of this process's GPU by its PCI
    address, else of the first GPU; ('', 'unknown') without nvidia-smi."""
    command = ["nvidia-smi", "--query-gpu=clocks.sm,driver_version",
               "--format=csv,noheader,nounits"]
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    attempts = [command]
    if hasattr(props, "pci_bus_id"):
        attempts.insert(0, command + [f"--id={props.pci_domain_id:08x}:{props.pci_bus_id:02x}:"
                                      f"{props.pci_device_id:02x}.0"])
    for attempt in attempts:
        try:
            output = subprocess.run(attempt, capture_output=True, text=True, timeout=30,
                                    check=True)
            clock, driver = [field.strip() for field in output.stdout.splitlines()[0].split(",")]
            return int(clock), driver
        except (OSError, subprocess.SubprocessError, ValueError, IndexError):
            continue
    return "", "unknown"


class Settings:
    """Step counts of one run (--quick shrinks them)."""

    def __init__(self, args):
        self.windows = 2 if args.quick else args.windows
        self.window_steps = 4 if args.quick else args.window_steps
        self.warmup = 3 if args.quick else args.warmup_steps
        self.loss_steps = 20 if args.quick else TRAIN_IMAGES // LOSS_BATCH
        self.lr = args.lr

    def window(self, hidden):
        return max(2, round(self.window_steps * min(1.0, FULL_WINDOW_HIDDEN / hidden)))

    def steps_needed(self, batch, hidden):
        """Warm-up and timed steps; at the loss curves' configuration, the loss steps if more."""
        steps = self.warmup + self.windows * self.window(hidden)
        if (batch, hidden) == (LOSS_BATCH, LOSS_HIDDEN):
            steps = max(steps, self.loss_steps)
        return steps


class Measurement:
    """One variant at one batch and hidden width: builds, warms up, times, records the loss."""

    def __init__(self, settings, data, init, orders, batch, hidden):
        self.settings = settings
        self.data = data
        self.init = init
        self.batch = batch
        self.hidden = hidden
        self.window = settings.window(hidden)
        self.with_losses = (batch, hidden) == (LOSS_BATCH, LOSS_HIDDEN)
        schedule, partial = make_schedule(batch, settings.steps_needed(batch, hidden), orders)
        self.schedule = torch.from_numpy(np.ascontiguousarray(schedule)).cuda()
        self.partial_rows = None if partial is None else torch.from_numpy(partial.copy()).cuda()

    def runner(self, variant, compile_mode):
        module = make_module(self.hidden, *self.data)
        params = list(module.parameters())
        restore(params, self.init)
        args = (self.schedule, self.partial_rows, self.settings.lr, self.init)
        if variant == "pytorch_cudagraph":
            return GraphRunner(module, *args)
        if variant == "pytorch_eager":
            return StepRunner(module, module, *args, mark_steps=False)
        torch._dynamo.mark_static_address(module.images)
        torch._dynamo.mark_static_address(module.labels)
        compiled = torch.compile(module, mode=compile_mode, fullgraph=True, dynamic=False)
        return StepRunner(module, compiled, *args, mark_steps=compile_mode == COMPILE_MODES[0])

    def run(self, variant, compile_mode):
        """(ms per full step, ms per partial step or None, warm-up seconds, losses or None)."""
        s = self.settings
        runner = self.runner(variant, compile_mode)
        skips = cudagraph_skips()
        warm = [runner.warm_up(s.warmup)]
        ms_full = median_ms_per_step(runner.steps, s.windows, self.window)
        ms_partial = None
        if self.partial_rows is not None:
            warm.append(runner.warm_up_partial(s.warmup))
            ms_partial = median_ms_per_step(runner.partial_steps, s.windows,
                                            max(2, self.window // 4))
        clock = gpu_clock_and_driver()
        if compile_mode == COMPILE_MODES[0] and cudagraph_skips() > skips:
            print(f"  warning: torch.compile ran parts of {variant} without CUDA graphs (see "
                  f"its 'skipping cudagraphs' message)", flush=True)
        check_finite(runner)
        losses = None
        if self.with_losses:
            runner.restart()
            runner.steps(s.loss_steps)
            losses = runner.losses[:s.loss_steps].tolist()
            check_finite(runner)
        return ms_full, ms_partial, warm, clock, losses


def cudagraph_skips():
    """How often Inductor has declined CUDA graphs for a compiled graph in this process."""
    from torch._dynamo.utils import counters
    return counters["inductor"]["cudagraph_skips"]


def check_finite(runner):
    if not (torch.isfinite(runner.losses).all() and torch.isfinite(runner.partial_loss)):
        raise Diverged("training loss is not finite (diverged: try a smaller --lr)")


def release():
    """Frees compiled graphs and cached memory between measurements."""
    torch._dynamo.reset()
    gc.collect()
    torch.cuda.empty_cache()


def epoch_time(batch, ms_full, ms_partial):
    """(ms per step, ms per epoch) of an epoch of full batches and, if any, one partial one."""
    steps = math.ceil(TRAIN_IMAGES / batch)
    total = (TRAIN_IMAGES // batch) * ms_full + (ms_partial or 0.0)
    return total / steps, total


def read_rows(path):
    if not path.exists():
        return []
    with path.open(newline="") as file:
        return list(csv.DictReader(file))


def write_csv(path, columns, rows):
    with path.open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def key(row):
    return str(row["implementation"]), str(row["batch"]), str(row["hidden"])


class Results:
    """comparison_pytorch.csv, rewritten after every measurement; the loss CSVs; the error log."""

    def __init__(self, out, append):
        self.out = out
        self.path = out / "comparison_pytorch.csv"
        self.kept = read_rows(self.path) if append else []
        self.rows = []
        self.failures = 0
        self.error_log = out / "pytorch_mlp_errors.txt"
        if self.error_log.exists():
            self.error_log.unlink()

    def add(self, row):
        self.rows.append(row)
        measured = {key(r) for r in self.rows}
        kept = [r for r in self.kept if key(r) not in measured]
        write_csv(self.path, COLUMNS, kept + self.rows)

    def losses(self, implementation, losses):
        rows = [{"implementation": implementation, "batch": LOSS_BATCH, "hidden": LOSS_HIDDEN,
                 "step": step, "loss": f"{loss:.6g}"} for step, loss in enumerate(losses, 1)]
        write_csv(self.out / f"loss_{implementation}.csv",
                  ["implementation", "batch", "hidden", "step", "loss"], rows)

    def fail(self, label, error):
        self.failures += 1
        lines = str(error).strip().splitlines() or [""]
        print(f"error: {label}: {type(error).__name__}: {lines[0]} (traceback in "
              f"{self.error_log})", flush=True)
        with self.error_log.open("a") as log:
            log.write(f"=== {label}\n{traceback.format_exc()}\n")


class Sweep:
    """Every variant over the grid, with the compile-mode fallback remembered across configs."""

    def __init__(self, args, results):
        self.args = args
        self.settings = Settings(args)
        self.results = results
        self.compile_modes = list(COMPILE_MODES)
        self.record = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
                       "gpu": torch.cuda.get_device_name(), "cuda": torch.version.cuda,
                       "torch": torch.__version__, "kind": "pytorch"}

    def run_variant(self, measurement, variant):
        """Measures one variant; pytorch_compile falls back to its second mode on failure."""
        if variant != "pytorch_compile":
            return variant, measurement.run(variant, None)
        while True:
            mode = self.compile_modes[0]
            name = "pytorch_compile" if mode == COMPILE_MODES[0] else \
                "pytorch_compile_no_cudagraphs"
            try:
                return name, measurement.run(variant, mode)
            except Diverged:
                raise
            except Exception as error:
                if len(self.compile_modes) == 1:
                    raise
                print(f"  torch.compile mode {mode} failed ({type(error).__name__}: "
                      f"{(str(error).strip().splitlines() or [''])[0]}); using "
                      f"{self.compile_modes[1]} from now on", flush=True)
                self.compile_modes.pop(0)
                release()

    def measure(self, measurement, variant):
        batch, hidden = measurement.batch, measurement.hidden
        name, (ms_full, ms_partial, warm, (clock, driver), losses) = self.run_variant(
            measurement, variant)
        ms_per_step, ms_per_epoch = epoch_time(batch, ms_full, ms_partial)
        self.results.add({**self.record, "sm_clock_mhz": clock, "driver": driver,
                          "implementation": name, "batch": batch, "hidden": hidden,
                          "steps_timed": measurement.window,
                          "ms_per_step": round(ms_per_step, 6),
                          "ms_per_epoch": round(ms_per_epoch, 4), "repeats": self.settings.windows})
        if losses is not None:
            self.results.losses(name, losses)
        partial = "" if ms_partial is None else \
            f"; partial batch of {TRAIN_IMAGES % batch}: {ms_partial:.4f} ms"
        print(f"{name:<30} batch {batch:>4} hidden {hidden:>5}: {ms_per_epoch:10.1f} ms/epoch "
              f"({ms_full:.4f} ms/step, median of {self.settings.windows} x "
              f"{measurement.window} steps{partial}; warm-up "
              f"{' + '.join(f'{s:.1f}' for s in warm)} s; SM {clock} MHz)"
              + ("; loss curve written" if losses is not None else ""), flush=True)

    def run(self):
        """Every hidden width: its initial parameters and batch orders from trainer_inputs (the
        train split too, the first time), then every batch size and variant."""
        data = None
        for hidden in self.args.hiddens:
            begin = time.perf_counter()
            epochs = max(epochs_needed(batch, self.settings.steps_needed(batch, hidden))
                         for batch in self.args.batches)
            with tempfile.TemporaryDirectory() as scratch:
                folder = Path(scratch)
                write_trainer_inputs(self.args, folder, hidden, epochs, train_split=data is None)
                if data is None:
                    data = [torch.from_numpy(array).cuda() for array in load_split(folder)]
                init = [torch.from_numpy(array).cuda() for array in load_params(folder, hidden)]
                orders = load_orders(folder)
            print(f"hidden {hidden}: initial parameters and {epochs} epochs' batch order from "
                  f"trainer_inputs in {time.perf_counter() - begin:.1f} s", flush=True)
            for batch in self.args.batches:
                measurement = Measurement(self.settings, data, init, orders, batch, hidden)
                for variant in self.args.variants:
                    label = f"{variant} batch {batch} hidden {hidden}"
                    try:
                        self.measure(measurement, variant)
                    except Exception as error:
                        self.results.fail(label, error)
                    release()
            del init
            release()


def variant_list(text):
    values = text.split(",")
    unknown = [v for v in values if v not in VARIANTS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown variant {', '.join(unknown)} "
                                         f"(expected some of {','.join(VARIANTS)})")
    return values


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="folder for the CSVs")
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    parser.add_argument("--build-dir", type=Path, default=DEFAULT_BUILD_DIR,
                        help="the build holding common/trainer_inputs")
    parser.add_argument("--batches", type=integer_list, help="default 32,256")
    parser.add_argument("--hiddens", type=integer_list,
                        help="default 128,256,512,1024,2048,4096,8192 (--quick: 1024)")
    parser.add_argument("--variants", type=variant_list, default=VARIANTS)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--windows", type=int, default=3)
    parser.add_argument("--window-steps", type=int, default=200,
                        help=f"steps per window up to hidden {FULL_WINDOW_HIDDEN}, fewer above")
    parser.add_argument("--warmup-steps", type=int, default=20)
    parser.add_argument("--append", action="store_true",
                        help="keep the rows of an existing comparison_pytorch.csv")
    parser.add_argument("--quick", action="store_true", help="tiny step counts: a smoke test")
    parser.add_argument("--self-test", action="store_true",
                        help="check the inputs read against the C++; needs numpy only")
    args = parser.parse_args()
    if not args.self_test:
        if args.out is None:
            parser.error("--out is required")
        if min(args.windows, args.window_steps, args.warmup_steps) < 1 or not args.lr > 0:
            parser.error("--windows, --window-steps, --warmup-steps and --lr must be positive")
        if args.batches and max(args.batches) > TRAIN_IMAGES:
            parser.error(f"--batches: at most {TRAIN_IMAGES}")
    args.batches = args.batches or [32, 256]
    args.hiddens = args.hiddens or ([1024] if args.quick else
                                    [128, 256, 512, 1024, 2048, 4096, 8192])
    return args


def main():
    args = parse_args()
    try:
        if args.self_test:
            return self_test(args)
        import_torch()
        # The chapters accumulate in fp32 everywhere: no fp16 reductions inside cuBLAS either.
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
        args.out.mkdir(parents=True, exist_ok=True)
        results = Results(args.out, args.append)
        sweep = Sweep(args, results)
        print(f"{sweep.record['gpu']}, torch {torch.__version__}, CUDA {torch.version.cuda}; "
              f"variants {','.join(args.variants)}; batches {args.batches}; hiddens "
              f"{args.hiddens}" + ("; --quick" if args.quick else ""), flush=True)
        sweep.run()
    except InputsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"wrote {results.path}", flush=True)
    if results.failures:
        print(f"{results.failures} measurement(s) failed", flush=True)
    return 1 if results.failures else 0


if __name__ == "__main__":
    sys.exit(main())
