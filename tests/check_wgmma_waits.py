#!/usr/bin/env python3
"""Every stage a warpgroup hands back is handed back after the wgmmas that read it are done.

    check_wgmma_waits.py BINARY

wgmma reads its operands from shared memory asynchronously, after the instruction has issued; a
warpgroup may give a stage back to the producer only once wgmma.wait_group has seen the groups that
read it complete. A stage given back one group early is a race no run of the GEMM test showed on the
H100, not even with the delays of the race-stress build (the tensor cores finish reading long before
the copy engine can refill the stage: tools/mutants.txt, 08_refill_before_its_wgmmas_are_done and
10_stage_returned_with_its_wgmmas_in_flight). The machine code shows it every time. In every
function with HGMMA (QGMMA for FP8), each hand-back, an mbarrier arrival of a consumer
(SYNCS.ARRIVE.TRANS64.A1T0, .RED.A1T0 to another block of the cluster) or a block barrier after
which a stage is refilled (BAR.SYNC), must be preceded, looking back in address order, by a
WARPGROUP.DEPBAR.LE gsb0 of 1 or less (wgmma.wait_group 1: every group but the newest is done, the
newest reading another stage) before any HGMMA, and before the back edge of any loop with HGMMA in
it unless each pass of the loop waits for 0 after its last HGMMA (the stage of a loop's last group
is given back after a wait for 0).

A wait orders only the warp that waits after its wgmmas; another warp may still be ahead of its
own wait. So in a kernel whose stores after the wgmmas reuse an operand's tile (REUSES_OPERANDS:
chapter 23's codes take K tile 0's place), each shared-memory store (STS) must be preceded,
looking back in address order, by a block barrier (BAR.SYNC) before any HGMMA. Other kernels
store into places of their own (chapter 14's masters and copies) and need no barrier there. No
run showed this one missing either: deleting chapter 23's barrier passed every test, plain and
stressed.

Exit 77 (SKIP) without cuobjdump or without sm_90a machine code; 1 with one line per fault, or
where no function with HGMMA gives a stage back, so the check cannot pass by finding none.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_fences import functions, read_sass  # noqa: E402

HAND_BACK = re.compile(r"^(SYNCS\.ARRIVE\.TRANS64(\.RED)?\.A1T0|BAR\.SYNC)\b")
HGMMA = re.compile(r"^[HQ]GMMA\b")  # QGMMA: an FP8 wgmma
REUSES_OPERANDS = ("fp8_weight_update_kernel",)  # names as cuobjdump prints them, in part
STORE = re.compile(r"^(@!?U?P[T0-9]+\s+)?STS\b")
BARRIER = re.compile(r"^BAR\.SYNC\b")
WAIT = re.compile(r"^WARPGROUP\.DEPBAR\.LE gsb0, 0x([0-9a-f]+)")
BRANCH = re.compile(r"^BRA(?:\.[A-Z.]+)? 0x([0-9a-f]+)")


def fault(body, i):
    """Why hand-back i comes too early, or None."""
    for j in range(i - 1, -1, -1):
        address, text = body[j]
        wait = WAIT.match(text)
        if wait:
            pending = int(wait.group(1), 16)
            return None if pending <= 1 else f"after a wait that leaves {pending} groups pending"
        if HGMMA.match(text):
            return f"after HGMMA at {address:#x} with no wait between"
        branch = BRANCH.match(text)
        if branch and int(branch.group(1), 16) < address:  # a loop's back edge
            first = int(branch.group(1), 16)
            loop = [t for a, t in body if first <= a < address]
            if any(HGMMA.match(t) for t in loop):
                # Past the loop, its last group is done only if each pass waits for 0 after its
                # last wgmma.
                for t in reversed(loop):
                    wait = WAIT.match(t)
                    if wait:
                        if int(wait.group(1), 16) == 0:
                            return None
                        break
                    if HGMMA.match(t):
                        break
                return f"after the loop ending at {address:#x}, whose wgmmas no wait for 0 follows"
    return None


def unbarriered(body, i):
    """Why shared-memory store i may overwrite another warp's wgmma operands, or None."""
    for j in range(i - 1, -1, -1):
        address, text = body[j]
        if BARRIER.match(text):
            return None
        if HGMMA.match(text):
            return f"after HGMMA at {address:#x} with no block barrier between"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    args = parser.parse_args()
    sass, status = read_sass(args.binary)
    if sass is None:
        return status
    failures = checked = stores = 0
    for name, body in functions(sass, addresses=True):
        if not any(HGMMA.match(text) for _, text in body):
            continue
        for i, (address, text) in enumerate(body):
            if HAND_BACK.match(text):
                checked += 1
                why = fault(body, i)
            elif STORE.match(text) and any(k in name for k in REUSES_OPERANDS):
                stores += 1
                why = unbarriered(body, i)
            else:
                continue
            if why:
                print(f"FAIL {name}: {address:#x} {text}: {why}")
                failures += 1
    if checked == 0:
        print("FAIL no function with HGMMA hands a stage back: nothing checked")
        failures += 1
    print(f"wgmma_waits {os.path.basename(args.binary)}: {checked} hand-backs, {stores} stores "
          f"checked for a barrier, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
