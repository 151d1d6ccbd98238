#!/usr/bin/env python3
"""Sums the warp-stall samples of an ncu source page (ncu -i REP --page source --csv
--print-source sass, gzipped) by reason, and lists the instructions with the most samples.
    python3 ncu_stalls.py SOURCE.csv.gz [TOP]"""
import sys

import pandas as pd

d = pd.read_csv(sys.argv[1], skiprows=1)
top = int(sys.argv[2]) if len(sys.argv) > 2 else 12
cols = [c for c in d.columns if c.startswith("stall_") and "Not Issued" not in c]
for c in cols:
    d[c] = pd.to_numeric(d[c].astype(str).str.replace(",", ""), errors="coerce").fillna(0)
total = d[cols].sum().sort_values(ascending=False)
print(f"{int(total.sum())} stall samples; share by reason:")
for reason, n in total.items():
    if n / total.sum() >= 0.005:
        print(f"  {reason[6:]:<20} {100 * n / total.sum():5.1f}%")
d["all"] = d[cols].sum(axis=1)
print(f"the {top} instructions with the most samples (address offset from the kernel's first):")
base = int(d["Address"].iloc[0], 16)
for _, r in d.sort_values("all", ascending=False).head(top).iterrows():
    reasons = sorted(((r[c], c) for c in cols if r[c] > 0), reverse=True)[:2]
    print(f"  +0x{int(r['Address'], 16) - base:05x} {str(r['Source']).strip()[:48]:<48} "
          f"{100 * r['all'] / total.sum():5.1f}%  " +
          ", ".join(f"{c[6:]} {100 * v / r['all']:.0f}%" for v, c in reasons))
