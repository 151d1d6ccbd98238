#!/usr/bin/env python3
"""Top SASS lines by warp stall samples from `ncu --page source --csv --print-source sass` output."""
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
head_i = next(i for i, r in enumerate(rows) if any("Warp Stall Sampling (All" in c for c in r))
head = rows[head_i]
col = next(i for i, c in enumerate(head) if "Warp Stall Sampling (All" in c)
src = next((i for i, c in enumerate(head) if c.strip() in ("Source", "# Source")), 1)
addr = 0
keep = [i for i, c in enumerate(head) if "stall" in c.lower() or c in ("Address", "Source")]
data = []
for r in rows[head_i + 1:]:
    try:
        data.append((float(r[col].replace(",", "") or 0), r))
    except (ValueError, IndexError):
        pass
total = sum(d[0] for d in data)
print("columns:", head)
print(f"total samples {total:.0f}, {len(data)} lines")
idx = {i: r for i, (_, r) in enumerate(data)}
for k, (v, r) in enumerate(sorted(data, key=lambda d: -d[0])[:int(sys.argv[2]) if len(sys.argv) > 2 else 50]):
    print(f"{v / total * 100:5.1f}% {r[addr]} {r[src][:90]}")
