#!/usr/bin/env python3
"""The numbers the docs quote from tools/ncu_forward.sh's reports: per kernel, the top stall
reasons (cycles per issued instruction), tensor-pipe activity, issue-slot use and occupancy.
   tools/ncu_summary.py NCU_DIR NAME...     (NCU_DIR holds NAME.raw.csv, from ncu.tar.gz)"""
import csv
import os
import sys

METRICS = [
    ("duration (us)", "gpu__time_duration.sum"),
    ("SM clock (GHz)", "sm__cycles_elapsed.avg.per_second"),
    ("HMMA/GMMA pipe active (%)", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
    ("issue slots busy (%)", "sm__issue_active.avg.pct_of_peak_sustained_elapsed"),
    ("warps active (% of 64)", "sm__warps_active.avg.pct_of_peak_sustained_active"),
    ("registers per thread", "launch__registers_per_thread"),
    ("cycles between issues", "smsp__average_warp_latency_per_inst_issued.ratio"),
]
STALL = ("smsp__average_warps_issue_stalled_", "_per_issue_active.ratio")


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: ncu_summary.py NCU_DIR NAME...")
    for name in sys.argv[2:]:
        rows = list(csv.reader(open(os.path.join(sys.argv[1], name + ".raw.csv"))))
        values = dict(zip(rows[0], rows[2]))
        print(f"{name}: {values.get('Kernel Name', '?')[:90]}")
        for label, key in METRICS:
            if key in values:
                print(f"  {label:28s} {values[key]}")
        stalls = sorted(((number(v), k[len(STALL[0]):-len(STALL[1])]) for k, v in values.items()
                         if k.startswith(STALL[0]) and k.endswith(STALL[1]) and number(v)),
                        reverse=True)
        print("  stalls (cycles per issued instruction): " +
              ", ".join(f"{reason} {value:.2f}" for value, reason in stalls[:5]))


if __name__ == "__main__":
    main()
