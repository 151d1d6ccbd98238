#!/usr/bin/env python3
"""A kernel's TMA stores, in its machine code: published to the copy engine, and waited for.

    check_tma_stores.py BINARY [--kernel NAME]... [--loop-kernel NAME]...

Chapter 14's weight update writes its tiles to shared memory with ordinary stores and hands them to
the copy engine (TMA), which reads them through the async proxy: each thread's stores must be
ordered before that by fence.proxy.async, every thread's before thread 0's store instruction by a
barrier, and the block must not end before its bulk group is done. Without any one of the three
the GEMM test still passed on the H100
(docs/results/profiles/14_weight_update/candidates.txt): the copy engine reads long after the
other warps finish their stores. The machine code shows them every time
(docs/results/profiles/14_weight_update):
    STS ... ; MEMBAR.ALL.CTA ; FENCE.VIEW.ASYNC.S ; BAR.SYNC ; ... UTMASTG ; UTMACMDFLUSH ;
    DEPBAR.LE SB0, 0x0 ; EXIT
Walking each named function in address order: every UTMASTG must come after a FENCE.VIEW.ASYNC.S
that follows the last shared-memory store (STS), and after a BAR.SYNC that follows that fence; no
STS may come after a UTMASTG without a DEPBAR.LE SB0 between them: chapter 10 stores a tile box
after box through two staging buffers, and before it writes one it waits until every store but
the newest has read its buffer (cp.async.bulk.wait_group.read 1), which no run of the GEMM test
showed missing (tools/mutants.txt, 10_staging_rewritten_before_its_store_read); each box's wait
sits between the store before it and its own STS. And, for a --kernel, no EXIT may come after a
UTMASTG without a DEPBAR.LE SB0 between them. A --loop-kernel's stores sit in a loop whose final
wait lies on a path the address-order walk does not follow (chapter 10's kernel: the walk finds
an EXIT after its stores): its exits are not checked.

Each kernel named must name a function with at least one UTMASTG, so the check cannot pass by
finding none. By default, the weight updates as a --kernel (chapter 14's, and chapter 23's
fp8_weight_update_kernel, whose name holds it: its stores sit in a loop, but each is waited for
before the loop goes on, so the walk sees every wait) and the tile loops of chapters 10 and 11 as
--loop-kernels, wherever the binary has them, and at least one TMA store among them. Exit 77
(SKIP) without cuobjdump or without sm_90a machine code; 1 with one line per fault.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_fences import functions, read_sass  # noqa: E402

SHARED_STORE = re.compile(r"^STS\b")
PROXY_FENCE = re.compile(r"^FENCE\.VIEW\.ASYNC\.S\b")
BARRIER = re.compile(r"^BAR\.SYNC\b")
TMA_STORE = re.compile(r"^UTMASTG\b")
BULK_WAIT = re.compile(r"^DEPBAR\.LE SB0\b")
EXIT = re.compile(r"^EXIT\b")
WEIGHT_UPDATE = "weight_update_kernel"  # chapter 14's: stores in no loop, every rule applies
TILE_LOOPS = ["tile_scheduler_gemm_kernel", "clusters_gemm_kernel"]  # 10's, 11's: stores in a loop


def faults(body, final_wait=True):
    """(index, why) for each TMA store not published, each shared store while a TMA store may still
    read, and (final_wait) each exit before the stores' wait."""
    found = []
    fenced = synced = pending = unread = False
    for i, text in enumerate(body):
        if SHARED_STORE.match(text):
            if unread:
                found.append((i, "STS after a TMA store with no DEPBAR.LE SB0 (its read) between"))
            fenced = synced = unread = False
        elif PROXY_FENCE.match(text):
            fenced, synced = True, False
        elif BARRIER.match(text):
            synced = fenced
        elif TMA_STORE.match(text):
            if not fenced:
                found.append((i, "no FENCE.VIEW.ASYNC.S after the last STS"))
            elif not synced:
                found.append((i, "no BAR.SYNC after the proxy fence"))
            pending = unread = True
        elif BULK_WAIT.match(text):
            pending = unread = False
        elif EXIT.match(text) and pending and final_wait:
            found.append((i, "EXIT with TMA stores not waited for (no DEPBAR.LE SB0)"))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--kernel", action="append", default=[])
    parser.add_argument("--loop-kernel", action="append", default=[])
    args = parser.parse_args()
    named = bool(args.kernel or args.loop_kernel)
    kernels = args.kernel if named else [WEIGHT_UPDATE]
    loop_kernels = args.loop_kernel if named else TILE_LOOPS
    sass, status = read_sass(args.binary)
    if sass is None:
        return status
    failures, checked, seen = 0, 0, {kernel: 0 for kernel in kernels + loop_kernels}
    for name, body in functions(sass):
        matches = [kernel for kernel in seen if kernel in name]
        if not matches:
            continue
        stores = sum(1 for text in body if TMA_STORE.match(text))
        for kernel in matches:
            seen[kernel] += stores
        final_wait = any(kernel in name for kernel in kernels)
        for i, why in faults(body, final_wait):
            print(f"FAIL {name}: instruction {i}, {body[i]}: {why}")
            failures += 1
        checked += stores
    for kernel, stores in seen.items():
        if stores == 0 and named:
            print(f"FAIL no function named like {kernel} has a TMA store to check")
            failures += 1
    if checked == 0:
        print("FAIL no TMA store to check")
        failures += 1
    print(f"tma_stores {os.path.basename(args.binary)}: {checked} TMA stores, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
