#!/usr/bin/env python3
"""PyTorch's side of the comparison: the chapters' model, data, precision, initial weights and
batch order, trained by PyTorch three ways and timed on the GPU.

    python3 bench/pytorch_mlp.py --out OUT [--batches 32,256]
        [--hiddens 128,256,512,1024,2048,4096,8192]
        [--variants pytorch_eager,pytorch_compile,pytorch_cudagraph] [--data-dir DIR]
        [--lr 0.05] [--seed 42] [--windows 3] [--window-steps 200] [--warmup-steps 20]
        [--append] [--quick]
    python3 bench/pytorch_mlp.py --self-test [--data-dir DIR]     (numpy only, no torch, no GPU)

The model is the trainers' 784-h-h-h-10 ReLU MLP with softmax cross-entropy (mean over the
batch) and plain SGD. Weights are fp32 and every GEMM runs on fp16 operands with fp32
accumulation (torch.autocast float16, reduced-precision reductions off). Images are scaled and
standardised with the train statistics exactly as common/dataset.cpp does and kept on the GPU in
fp16, as the trainers keep them. Initial weights and the per-epoch shuffle are the trainers'
SplitMix64 streams (common/rng.hpp, common/model.cpp) ported bit for bit, so loss curves compare
step by step. The batch gather runs on the GPU, no step waits for the host, and losses stay in a
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

--self-test prints values to diff against the C++ (a SplitMix64 test vector, below(), the first
shuffle draw, initial weights of 784-1024-1024-1024-10 at seed 42 in C's %a and %.9g, epoch
orders, and with MNIST in --data-dir the pixel statistics and three normalised pixels) and checks
the vectorised weight generator against the scalar one.
"""
import argparse
import csv
import datetime
import functools
import gc
import math
import statistics
import subprocess
import sys
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
IMAGE_SIDE = 28
PIXELS = IMAGE_SIDE * IMAGE_SIDE
CLASSES = 10
LOSS_BATCH, LOSS_HIDDEN = 32, 1024
VARIANTS = ["pytorch_eager", "pytorch_compile", "pytorch_cudagraph"]
COMPILE_MODES = ["max-autotune", "max-autotune-no-cudagraphs"]
COLUMNS = ["date", "gpu", "sm_clock_mhz", "driver", "cuda", "torch", "implementation", "kind",
           "batch", "hidden", "steps_timed", "ms_per_step", "ms_per_epoch", "repeats"]
DEFAULT_DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "mnist"
# Hidden widths above this get proportionally shorter windows (a step at 8192 is ~4x longer).
FULL_WINDOW_HIDDEN = 2048

# common/rng.hpp
MASK64 = (1 << 64) - 1
GOLDEN_GAMMA = 0x9E3779B97F4A7C15
MIX_1 = 0xBF58476D1CE4E5B9
MIX_2 = 0x94D049BB133111EB
STREAM_MULTIPLIER = 0xD1B54A32D192ED03
INIT_STREAM = 0
SHUFFLE_STREAM = 1
DRAW_CHUNK = 1 << 22  # vectorised draws per numpy pass


class DataError(Exception):
    """Missing or malformed IDX files; the message names the file."""


class Diverged(RuntimeError):
    """A non-finite training loss: no other compile mode would help."""


# --- SplitMix64, initial weights and batch order: common/rng.hpp and common/model.cpp ---------

class SplitMix64:
    """common/rng.hpp's generator with Python integers masked to 64 bits."""

    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + GOLDEN_GAMMA) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * MIX_1) & MASK64
        z = ((z ^ (z >> 27)) * MIX_2) & MASK64
        return z ^ (z >> 31)

    def below(self, bound):
        """Uniform in [0, bound): the high 64 bits of the 128-bit product."""
        return (self.next() * bound) >> 64

    def uniform01(self):
        return np.float32(self.next() >> 40) * np.float32(2.0 ** -24)


def stream(seed, stream_id):
    return SplitMix64(SplitMix64(seed ^ ((stream_id * STREAM_MULTIPLIER) & MASK64)).next())


@functools.lru_cache(maxsize=None)
def epoch_order(count, seed, epoch):
    """The order in which epoch `epoch` visits the samples (Fisher-Yates), as int64; cached, as
    every measurement of a batch size walks the same epochs."""
    order = list(range(count))
    rng = stream(seed, SHUFFLE_STREAM + epoch)
    for i in range(count - 1, 0, -1):
        j = rng.below(i + 1)
        order[i], order[j] = order[j], order[i]
    return np.array(order, dtype=np.int64)


def splitmix64_draws(seed_state, first, count):
    """What next() returns on calls first+1 ... first+count of SplitMix64(seed_state), at once:
    the state after call i is seed_state + i * gamma, so every draw is independent of the last."""
    calls = np.arange(first + 1, first + count + 1, dtype=np.uint64)
    z = np.uint64(seed_state) + calls * np.uint64(GOLDEN_GAMMA)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(MIX_1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(MIX_2)
    return z ^ (z >> np.uint64(31))


def uniform_block(seed_state, first, count, bound):
    """(2 * uniform01() - 1) * bound for `count` draws from call `first` on, in float32."""
    out = np.empty(count, dtype=np.float32)
    for start in range(0, count, DRAW_CHUNK):
        size = min(DRAW_CHUNK, count - start)
        u = (splitmix64_draws(seed_state, first + start, size) >> np.uint64(40)).astype(
            np.float32) * np.float32(2.0 ** -24)
        out[start:start + size] = (np.float32(2) * u - np.float32(1)) * bound
    return out


def init_params(sizes, seed):
    """[(weights [out, in], bias [out]), ...] as model.cpp draws them: PyTorch's nn.Linear
    default, uniform in +-1/sqrt(fan_in), layer by layer, weights before bias."""
    seed_state = stream(seed, INIT_STREAM).state
    drawn = 0
    params = []
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        bound = np.float32(1) / np.sqrt(np.float32(fan_in))
        weights = uniform_block(seed_state, drawn, fan_out * fan_in, bound)
        drawn += fan_out * fan_in
        bias = uniform_block(seed_state, drawn, fan_out, bound)
        drawn += fan_out
        params.append((weights.reshape(fan_out, fan_in), bias))
    return params


def layer_sizes(hidden):
    return [PIXELS, hidden, hidden, hidden, CLASSES]


# --- MNIST: common/idx.cpp and common/dataset.cpp ----------------------------------------------

def read_idx(path, rank):
    """An unsigned-byte IDX file with `rank` dimensions, checked against its header."""
    try:
        data = path.read_bytes()
    except OSError:
        raise DataError(f"{path}: cannot open (run data/fetch.sh first?)")
    header = 4 + 4 * rank
    if len(data) < header:
        raise DataError(f"{path}: truncated header: {len(data)} bytes")
    magic = int.from_bytes(data[:4], "big")
    expected_magic = 0x08 << 8 | rank
    if magic != expected_magic:
        raise DataError(f"{path}: bad magic 0x{magic:08x}, expected 0x{expected_magic:08x} "
                        f"({rank}-d ubyte)")
    dims = [int.from_bytes(data[4 + 4 * d:8 + 4 * d], "big") for d in range(rank)]
    if 0 in dims:
        raise DataError(f"{path}: dimension {dims.index(0)} is zero")
    expected_size = header + math.prod(dims)
    if len(data) != expected_size:
        problem = "truncated" if len(data) < expected_size else "trailing bytes"
        raise DataError(f"{path}: size {len(data)} bytes, header promises {expected_size} "
                        f"({problem})")
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(dims)


def read_split(data_dir, prefix):
    """(pixels [count, 784] uint8, labels [count] uint8) of train or t10k."""
    images_path = data_dir / f"{prefix}-images-idx3-ubyte"
    labels_path = data_dir / f"{prefix}-labels-idx1-ubyte"
    images = read_idx(images_path, 3)
    labels = read_idx(labels_path, 1)
    if images.shape[1:] != (IMAGE_SIDE, IMAGE_SIDE):
        raise DataError(f"{images_path}: images are {images.shape[1]}x{images.shape[2]}, "
                        f"expected 28x28")
    if len(labels) != len(images):
        raise DataError(f"{labels_path}: {len(labels)} labels for {len(images)} images")
    if labels.max() >= CLASSES:
        raise DataError(f"{labels_path}: label {labels.max()} is not a digit 0-9")
    return images.reshape(len(images), PIXELS), labels


def pixel_statistics(pixels, source):
    """Mean and deviation of pixels / 255 as float32, summed in float64 one pixel after another
    as dataset.cpp does (np.sum would add in pairs and may round the last bit differently)."""
    total = squares = 0.0
    flat = pixels.reshape(-1)
    for start in range(0, flat.size, DRAW_CHUNK):
        x = flat[start:start + DRAW_CHUNK].astype(np.float64) / 255.0
        total = float(np.add.accumulate(np.concatenate(([total], x)))[-1])
        squares = float(np.add.accumulate(np.concatenate(([squares], x * x)))[-1])
    n = float(flat.size)
    mean = total / n
    std = math.sqrt(max(squares / n - mean * mean, 0.0))
    if not std > 0:
        raise DataError(f"{source}: train images are constant")
    return np.float32(mean), np.float32(std)


def normalise(pixels, mean, std):
    """(pixel / 255 - mean) / std in float32, as dataset.cpp computes it."""
    return (pixels.astype(np.float32) / np.float32(255) - mean) / std


# --- self-test -----------------------------------------------------------------------------------

def c_hex(value):
    """A float as C's printf("%a") writes it, e.g. -0x1.6ec95cp-7."""
    mantissa, exponent = float(value).hex().split("p")
    return f"{mantissa.rstrip('0').rstrip('.')}p{exponent}"


def print_value(name, value):
    print(f"{name} {c_hex(value)} {float(value):.9g}")


def self_test(data_dir):
    """Prints what a C++ program using rng.hpp, model.cpp and dataset.cpp prints for the same
    calls (tests/python_tools_test.sh holds the C++ output); returns 1 if the vectorised draws
    disagree with the scalar generator."""
    rng = SplitMix64(0)
    for i in range(3):
        print(f"splitmix64(0) next {i}: 0x{rng.next():016x}")
    rng = SplitMix64(7)
    for i in range(3):
        print(f"splitmix64(7) below(60000) {i}: {rng.below(60000)}")
    print(f"stream(42,1) next: 0x{stream(42, SHUFFLE_STREAM).next():016x}")

    params = init_params(layer_sizes(1024), 42)
    flat = {f"{kind}{layer}": array.reshape(-1) for layer, (w, b) in enumerate(params)
            for kind, array in (("w", w), ("b", b))}
    for name, index in [("w0", 0), ("w0", 1), ("w0", 2), ("w0", 802815), ("b0", 0), ("b0", 1023),
                        ("w1", 0), ("w1", 1048575), ("b2", 5), ("w3", 0), ("w3", 10239),
                        ("b3", 9)]:
        print_value(f"{name}[{index}]", flat[name][index])
    for epoch in range(2):
        order = epoch_order(TRAIN_IMAGES, 42, epoch)
        print(f"order e{epoch}: " + " ".join(str(order[i]) for i in [0, 1, 2, 3, 4, 5, 6, 7, 31,
                                                                       32, 59999]))
    if all((data_dir / name).exists() for name in ["train-images-idx3-ubyte",
                                                   "t10k-images-idx3-ubyte"]):
        train_pixels, _ = read_split(data_dir, "train")
        test_pixels, _ = read_split(data_dir, "t10k")
        mean, std = pixel_statistics(train_pixels, data_dir)
        print_value("pixel_mean", mean)
        print_value("pixel_std", std)
        print_value("train[0][0]", normalise(train_pixels[0], mean, std)[0])
        print_value("train[0][156]", normalise(train_pixels[0], mean, std)[156])
        print_value("test[0][202]", normalise(test_pixels[0], mean, std)[202])
    else:
        print(f"pixel statistics: skipped, no MNIST in {data_dir}", file=sys.stderr)

    scalar = stream(42, INIT_STREAM)
    bound = np.float32(1) / np.sqrt(np.float32(PIXELS))
    expected = [(np.float32(2) * scalar.uniform01() - np.float32(1)) * bound for _ in range(1000)]
    if not np.array_equal(np.array(expected, dtype=np.float32), flat["w0"][:1000]):
        print("error: vectorised draws differ from SplitMix64.next()", file=sys.stderr)
        return 1
    print("vectorised draws match the scalar generator on 1000 weights", file=sys.stderr)
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


def make_schedule(batch, steps_needed, seed):
    """([steps, batch] rows of whole-batch steps over as many epochs as needed, on the GPU; the
    partial last batch of epoch 0 or None)."""
    full = TRAIN_IMAGES // batch
    epochs = max(1, math.ceil(steps_needed / full))
    orders = [epoch_order(TRAIN_IMAGES, seed, e) for e in range(epochs)]
    schedule = np.concatenate([order[:full * batch].reshape(full, batch) for order in orders])
    partial = orders[0][full * batch:] if TRAIN_IMAGES % batch else None
    return (torch.from_numpy(schedule).cuda(),
            None if partial is None else torch.from_numpy(partial.copy()).cuda())


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
        self.seed = args.seed

    def window(self, hidden):
        return max(2, round(self.window_steps * min(1.0, FULL_WINDOW_HIDDEN / hidden)))


class Measurement:
    """One variant at one batch and hidden width: builds, warms up, times, records the loss."""

    def __init__(self, settings, data, init, batch, hidden):
        self.settings = settings
        self.data = data
        self.init = init
        self.batch = batch
        self.hidden = hidden
        self.window = settings.window(hidden)
        self.with_losses = (batch, hidden) == (LOSS_BATCH, LOSS_HIDDEN)
        steps_needed = settings.warmup + settings.windows * self.window
        if self.with_losses:
            steps_needed = max(steps_needed, settings.loss_steps)
        self.schedule, self.partial_rows = make_schedule(batch, steps_needed, settings.seed)

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

    def run(self, data):
        for hidden in self.args.hiddens:
            begin = time.perf_counter()
            init = [torch.from_numpy(array).cuda() for layer in
                    init_params(layer_sizes(hidden), self.args.seed) for array in layer]
            print(f"hidden {hidden}: initial weights drawn in {time.perf_counter() - begin:.1f} s",
                  flush=True)
            for batch in self.args.batches:
                measurement = Measurement(self.settings, data, init, batch, hidden)
                for variant in self.args.variants:
                    label = f"{variant} batch {batch} hidden {hidden}"
                    try:
                        self.measure(measurement, variant)
                    except Exception as error:
                        self.results.fail(label, error)
                    release()
            del init
            release()


def load_train_on_gpu(data_dir):
    """The normalised train images in fp16 and the labels as int64, on the GPU."""
    pixels, labels = read_split(data_dir, "train")
    if len(pixels) != TRAIN_IMAGES:
        raise DataError(f"{data_dir}: {len(pixels)} train images, expected {TRAIN_IMAGES}")
    mean, std = pixel_statistics(pixels, data_dir)
    images = normalise(pixels, mean, std).astype(np.float16)
    return (torch.from_numpy(images).cuda(),
            torch.from_numpy(labels.astype(np.int64)).cuda())


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
                        help="print values to compare with the C++; needs numpy only")
    args = parser.parse_args()
    if not args.self_test:
        if args.out is None:
            parser.error("--out is required")
        if min(args.windows, args.window_steps, args.warmup_steps) < 1 or not args.lr > 0:
            parser.error("--windows, --window-steps, --warmup-steps and --lr must be positive")
        if not 0 <= args.seed <= MASK64:
            parser.error("--seed must be in [0, 2^64)")
        if args.batches and max(args.batches) > TRAIN_IMAGES:
            parser.error(f"--batches: at most {TRAIN_IMAGES}")
    args.batches = args.batches or [32, 256]
    args.hiddens = args.hiddens or ([1024] if args.quick else
                                    [128, 256, 512, 1024, 2048, 4096, 8192])
    return args


def main():
    args = parse_args()
    if args.self_test:
        try:
            return self_test(args.data_dir)
        except DataError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
    import_torch()
    # The chapters accumulate in fp32 everywhere: no fp16 reductions inside cuBLAS either.
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        data = load_train_on_gpu(args.data_dir)
    except DataError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    results = Results(args.out, args.append)
    sweep = Sweep(args, results)
    print(f"{sweep.record['gpu']}, torch {torch.__version__}, CUDA {torch.version.cuda}; "
          f"variants {','.join(args.variants)}; batches {args.batches}; hiddens {args.hiddens}"
          + ("; --quick" if args.quick else ""), flush=True)
    sweep.run(data)
    print(f"wrote {results.path}", flush=True)
    if results.failures:
        print(f"{results.failures} measurement(s) failed", flush=True)
    return 1 if results.failures else 0


if __name__ == "__main__":
    sys.exit(main())
