# Block 0's section clock of chapter 10's on-chip kernel (call1/onchip_clock.py) at batch 32, hidden
# 128, from the logs of calls 1 and 3: cycles a step in each section, sections that repeat per hidden
# layer added up. Writes sections_h128.csv.   python3 sections.py (from this folder)
import csv, re
SECTIONS = [
    "step start: label, wait for the batch",
    "forward, first layer: product",
    "forward, first layer: columns out, next batch out",
    "forward, first layer: waiting for the columns",
    "forward, other hidden layers: products",
    "forward, other hidden layers: columns out",
    "forward, other hidden layers: waiting for the columns",
    "output layer: logits",
    "output layer: softmax, loss, dZ",
    "output layer: dZ of the layer below",
    "output layer: SGD, bias",
    "backward: partial products out",
    "backward: SGD of the hidden layers, bias",
    "backward: waiting for the partials",
    "backward: partials added, ReLU'",
    "first layer: SGD, bias",
]
def clock(log, tree):
    for line in open(log):
        if line.startswith(f"clock {tree} h128:"):
            return [int(v) for v in re.findall(r" \d+:(\d+)", line.split("cycles/step:")[1])]
    raise SystemExit(f"no clock of {tree} in {log}")
columns = {"session_start": clock("call1/log.txt", "a"), "transposed_sgd_two_chains": clock("call1/log.txt", "d"),
           "transposed_sgd_warp_sends_multicast": clock("call3/log.txt", "d")}
with open("sections_h128.csv", "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["section"] + list(columns))
    for i, name in enumerate(SECTIONS):
        w.writerow([name] + [c[i] for c in columns.values()])
    w.writerow(["step"] + [sum(c) for c in columns.values()])
