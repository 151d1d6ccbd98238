#!/usr/bin/env python3
"""One FP8 training step's kernels, in order, with what each does, from Nsight Compute CSVs.

    maint/fp8_kernel_times.py OUT.csv CHAPTER:LAYERS:NCU.csv [CHAPTER:LAYERS:NCU.csv ...]

Each NCU.csv is `ncu --metrics gpu__time_duration.sum --csv` of a trainer (docs/results/fp8/
README.md); the first whole step in it starts at its first gather_inputs_kernel and ends at the
next. LAYERS is the model (784-8192-8192-8192-10), which numbers the hidden layers' products:
the step enqueues them in the order common/fp8_step.cuh does, and a chapter that quantises C in a
pass of its own follows each product with a finish_fp8_kernel. Writes chapter, layers, order,
kernel, role, duration_us.
"""
import csv
import re
import sys


def products(hidden):
    """The FP8 products of a step with `hidden` hidden layers, in the step's order."""
    names = []
    for l in range(hidden):
        k = " (K = 784)" if l == 0 else ""
        out = "fp16 ReLU output" if l == hidden - 1 else "quantised output"
        names.append((f"layer {l} forward{k}, {out}", l))
    for l in range(hidden - 1, -1, -1):
        if l > 0:
            names.append((f"layer {l} backward data, quantised", l))
        names.append((f"layer {l} weight gradient and SGD", l))
    return names


def short(name):
    """The kernel's name without namespaces' clutter and parameter lists."""
    name = re.sub(r"^void ", "", name)
    name = re.sub(r"\(.*$", "", name)
    return re.sub(r"^<?unnamed>::", "", name).strip()


def step(rows):
    """The kernels of the first whole step: (name, microseconds)."""
    starts = [i for i, (name, _) in enumerate(rows) if name.startswith("gather_inputs_kernel")]
    if len(starts) < 2:
        sys.exit("error: fewer than two gathers: no whole step in the profile")
    return rows[starts[0]:starts[1]]


def read(path):
    table = [r for r in csv.reader(open(path)) if len(r) > 10]
    if not table:
        sys.exit(f"error: {path}: no ncu rows")
    header = table[0]
    name, value, unit = header.index("Kernel Name"), header.index("Metric Value"), header.index(
        "Metric Unit")
    scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}
    return [(short(r[name]), float(r[value].replace(",", "")) * scale[r[unit]]) for r in table[1:]]


def roles(kernels, hidden):
    todo = products(hidden)
    last_product, last_layer, out = None, None, []
    backward = False
    for name, us in kernels:
        if name.startswith("gather_inputs_kernel"):
            role = "gather the batch, quantised"
        elif any(k in name for k in ("fp8_gemm_kernel", "fp8_swap_ab_kernel",
                                      "fp8_weight_update_kernel", "fp8_two_parts_kernel")):
            last_product, last_layer = todo.pop(0)
            update = "weight gradient" in last_product
            role = last_product
            if "fp8_weight_update_kernel" in name:
                role += " (through shared memory)"
            elif update and "QuantisedTiles<1>" in name:
                role += " (kUpdate)"
            elif update and "StoreTiles" in name:
                role = f"layer {last_layer} weight gradient, C stored"
            elif "StoreTiles<0>" in name:
                role = last_product.replace("quantised output", "C stored").replace(
                    "backward data, quantised", "backward data, C stored")
        elif name.startswith("finish_fp8_kernel"):
            what = "SGD and the weights' copies" if "weight gradient" in last_product else "quantised"
            role = f"layer {last_layer}: C read back, {what} (finish_fp8_kernel)"
        elif name.startswith("softmax_cross_entropy_kernel"):
            role = "softmax and loss"
        elif name.startswith("output_backward_kernel"):
            role = f"output layer backward data into layer {hidden - 1}, quantised"
            backward = True
        elif name.startswith("fp8_bias_sgd_kernel"):
            role = f"layer {last_layer} bias SGD"
        elif name.startswith("bias_sgd_kernel"):
            role = "output layer bias SGD"
        elif name.startswith("advance_scaling_kernel"):
            role = "advance the scales"
        elif "sum_splits" in name:
            role = "output layer: sum of the split-K parts"
        else:
            role = ("output layer weight gradient and SGD (fp16)" if backward else
                    "output layer forward (fp16)")
        out.append((name, role, us))
    if todo:
        sys.exit(f"error: {len(todo)} FP8 products of the step not in the profile")
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1], "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["chapter", "layers", "order", "kernel", "role", "duration_us"])
        for spec in sys.argv[2:]:
            chapter, layers, path = spec.split(":", 2)
            hidden = len(layers.split("-")) - 2
            for i, (name, role, us) in enumerate(roles(step(read(path)), hidden), 1):
                w.writerow([chapter, layers, i, name, role, f"{us:.1f}"])


if __name__ == "__main__":
    main()
