#!/usr/bin/env python3
"""Every global atomic add in a binary's machine code comes right after a GPU-scope fence, and an
acquire comes after each add whose count the thread reads.

    check_fences.py BINARY [--kernel NAME]...

Chapter 13's split-K blocks and the grid barrier of chapters 16-17 publish their stores through an
atomic add: a block stores, then counts itself in with a release (chapter 13: __threadfence()
before the add; chapter 16: atom.add.release). Without the release another SM may see the count
before the stores; on the H100 that race is too narrow for any run of the GEMM or training tests
to show (tools/mutants.txt: 13_no_fence_before_arrival and 16_no_release_fence_in_barrier passed
both). The machine code shows it every time: __threadfence() compiles to MEMBAR.SC.GPU
(then ERRBAR, CGAERRBAR, CCTL.IVALL), a release atomic to MEMBAR.ALL.GPU (then ERRBAR, CGAERRBAR)
before the atomic, and the fence must be the last memory or synchronising instruction before each
ATOMG...ADD, ATOM...ADD (generic address) or RED...ADD.

The acquire side: the block that reads the count (chapter 13's last arrival, every block waiting
at the grid barrier) must not read the others' data before an acquire, or it may read lines its
L1 cached before they were written. After each add that returns the count into a register, a
CCTL.IVALL (the acquire load of the barrier's wait loop, LD.E.STRONG.GPU + CCTL.IVALL:
docs/results/alternatives/persistent_step/grid_sync_sass_barrier.txt) or a GPU-scope fence
(chapter 13's second __threadfence()) must come before the next BAR.SYNC, ordinary global load or
exit.

--kernel NAME: a function whose name contains NAME must have at least one such atomic add, so the
check cannot pass by finding none. Exit 77 (SKIP) without cuobjdump or without sm_90a machine
code in the binary (a portable build carries PTX only); 1 with one line per fault.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

ATOMIC_ADD = re.compile(r"\b(ATOMG|ATOM|RED|REDG)\.[A-Z0-9.]*\bADD\b")
GPU_FENCE = re.compile(r"\bMEMBAR\.[A-Z.]*GPU\b")
# What must not come between the fence and the atomic: memory, barriers, branches. Everything
# else (arithmetic, and the fence's own ERRBAR, CGAERRBAR, CCTL.IVALL) is skipped looking back.
MEMORY_OR_SYNC = re.compile(
    r"^(LD|ST|ATOM|RED|BAR|MEMBAR|FENCE|SYNCS|UTMA|UBLKCP|BRA|BSSY|BSYNC|WARPSYNC|CALL|RET|EXIT)")
INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[T0-9]\s+)?([A-Z][^;]*);")


def find_cuobjdump():
    found = shutil.which("cuobjdump")
    for home in (os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if not found and home and os.access(os.path.join(home, "bin", "cuobjdump"), os.X_OK):
            found = os.path.join(home, "bin", "cuobjdump")
    return found


def read_sass(binary):
    """(machine code, None) as `cuobjdump -sass` prints it, or (None, exit status) after printing
    why there is none to check: 77 (SKIP) without cuobjdump or without sm_90a machine code, 1
    where cuobjdump fails. Shared with check_tma_stores.py."""
    cuobjdump = find_cuobjdump()
    if not cuobjdump:
        print("SKIP: no cuobjdump (the CUDA toolkit's bin/) to read the machine code with")
        return None, 77
    dump = subprocess.run([cuobjdump, "-sass", binary], capture_output=True, text=True)
    if dump.returncode != 0:
        print(f"error: cuobjdump -sass {binary}: {dump.stderr.strip()}")
        return None, 1
    if "arch = sm_90a" not in dump.stdout:
        print(f"SKIP: {binary} has no sm_90a machine code (a portable build carries PTX)")
        return None, 77
    return dump.stdout, None


def functions(sass, addresses=False):
    """(name, [instruction text]) for every function of the dump; with addresses, (name,
    [(address, instruction text)]). Shared with check_tma_stores.py and check_wgmma_waits.py."""
    name, body = None, []
    for line in sass.splitlines():
        header = re.match(r"\s*Function : (\S+)", line)
        if header:
            if name:
                yield name, body
            name, body = header.group(1), []
        elif name:
            match = INSTRUCTION.search(line)
            if match:
                text = match.group(2).strip()
                body.append((int(match.group(1), 16), text) if addresses else text)
    if name:
        yield name, body


def unfenced(body):
    """Indices of the atomic adds not preceded by a GPU-scope fence."""
    bad = []
    for i, text in enumerate(body):
        if not ATOMIC_ADD.match(text):
            continue
        j = i - 1
        while j >= 0 and not MEMORY_OR_SYNC.match(body[j]):
            j -= 1
        if j < 0 or not GPU_FENCE.match(body[j]):
            bad.append(i)
    return bad


# The acquire side: what the arrival's count lets a thread read. An acquire load compiles to
# LD...STRONG.GPU + CCTL.IVALL (L1 invalidated), a fence after the add to MEMBAR...GPU.
ACQUIRE = re.compile(r"^(CCTL\.IVALL|MEMBAR\.[A-Z.]*GPU)\b")
# What may not come before it: the barrier that hands the count on to the block, an ordinary load
# of the data, the end.
HANDS_ON = re.compile(r"^(BAR\.SYNC|LDG(?![A-Z0-9.]*STRONG)|LD\.(?![A-Z0-9.]*STRONG)|EXIT|RET)")
RETURNING_ADD = re.compile(r"\b(ATOMG|ATOM)\.[A-Z0-9.]*\bADD\b[A-Z0-9.]* (?:U?P[T0-9]+, )?(R\d+)")


def unacquired(body):
    """Indices of the atomic adds whose count the thread reads (a register, not RZ) and after which
    no acquire (CCTL.IVALL or a GPU-scope fence) comes before the next barrier, ordinary load or
    exit."""
    bad = []
    for i, text in enumerate(body):
        if not RETURNING_ADD.match(text):
            continue
        for later in body[i + 1:]:
            if ACQUIRE.match(later):
                break
            if HANDS_ON.match(later):
                bad.append(i)
                break
    return bad


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--kernel", action="append", default=[])
    args = parser.parse_args()
    sass, status = read_sass(args.binary)
    if sass is None:
        return status
    failures, checked, seen = 0, 0, {kernel: 0 for kernel in args.kernel}
    for name, body in functions(sass):
        adds = sum(1 for text in body if ATOMIC_ADD.match(text))
        for kernel in seen:
            if kernel in name:
                seen[kernel] += adds
        for i in unfenced(body):
            print(f"FAIL {name}: instruction {i}, {body[i]}, has no MEMBAR ... GPU before it")
            failures += 1
        for i in unacquired(body):
            print(f"FAIL {name}: instruction {i}, {body[i]}, has no acquire (CCTL.IVALL or "
                  "MEMBAR ... GPU) after it before the next barrier, load or exit")
            failures += 1
        checked += adds
    for kernel, adds in seen.items():
        if adds == 0:
            print(f"FAIL no function named like {kernel} has a global atomic add to check")
            failures += 1
    print(f"fences {os.path.basename(args.binary)}: {checked} atomic adds, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
