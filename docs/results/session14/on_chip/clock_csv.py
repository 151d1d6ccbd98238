#!/usr/bin/env python3
"""The on-chip kernel's section clock (onchip_clock.py's lines) of two calls side by side, as CSV:
    python3 clock_csv.py A_DIR B_DIR HIDDEN > sections_hHIDDEN.csv
Each DIR holds clock_hHIDDEN.txt; cycles a step at 1980 MHz, block 0's thread 0."""
import sys

SECTIONS = [
    "step start: label, this step's batch", "forward, first layer: product",
    "forward, first layer: columns out, next batch out, columns in",
    "forward, other hidden layers: products", "forward, other hidden layers: columns out and in",
    "output layer: logits", "output layer: softmax, loss, dZ",
    "output layer: dZ below, SGD, bias", "backward: partial products out",
    "backward: SGD of the hidden layers, bias", "backward: waiting for the partials",
    "backward: partials added, ReLU'", "first layer: SGD, bias"]


def cycles(path):
    line = [l for l in open(path) if l.startswith("onchip")][-1]
    return [float(x.split(":")[1]) for x in line.split("cycles/step:")[1].split()]


a_dir, b_dir, hidden = sys.argv[1:4]
a, b = cycles(f"{a_dir}/clock_h{hidden}.txt"), cycles(f"{b_dir}/clock_h{hidden}.txt")
print("section,before_cycles,after_cycles,batch,hidden,sm_clock_mhz,date,gpu")
for name, x, y in list(zip(SECTIONS, a, b)) + [("step", sum(a), sum(b))]:
    print(f'"{name}",{x:.0f},{y:.0f},32,{hidden},1980,2026-11-24,NVIDIA H100 80GB HBM3')
