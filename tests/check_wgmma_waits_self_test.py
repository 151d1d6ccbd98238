#!/usr/bin/env python3
"""tests/check_wgmma_waits.py on machine code written by hand, in the shape of a consumer
warpgroup's K loop (chapters 09-13): the committed order passes, and the same loop with its wait
dropped, with a wait that leaves two groups pending, with the last stage given back before the
final wait, or with a block barrier (chapter 08's hand-back) right after the wgmmas, fails; a
shared-memory store after the wgmmas passes behind a block barrier and fails without one.
Needs no GPU and no CUDA toolkit (meson test, suite cpu)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_fences  # noqa: E402
import check_wgmma_waits  # noqa: E402


def function(name, *lines):
    body = "".join(f"\n        /*{0x100 + 0x10 * i:04x}*/   {text} ;   /* 0x0 */"
                   for i, text in enumerate(lines))
    return f"\n        Function : {name}{body}"


# The loop starts at 0x110; a copy loop of the producer (BRA.U.ANY back to 0x100) holds no HGMMA.
LOOP_TOP = ["UTMALDG.2D [UR8], [UR6]", "@P0 BRA.U.ANY 0x100",
            "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR10+0x30000], R6", "WARPGROUP.ARRIVE",
            "HGMMA.64x256x16.F32 R24, gdesc[UR12].tnspB, R24, gsb0"]
WAIT_1 = "WARPGROUP.DEPBAR.LE gsb0, 0x1"
WAIT_2 = "WARPGROUP.DEPBAR.LE gsb0, 0x2"
WAIT_0 = "WARPGROUP.DEPBAR.LE gsb0, 0x0"
HAND_BACK = "@!P0 SYNCS.ARRIVE.TRANS64.A1T0 RZ, [R2+URZ+0x30020], RZ"
BACK_EDGE = "@!P0 BRA 0x120"
END = "EXIT"

DUMP = (function("waited", *LOOP_TOP, WAIT_1, HAND_BACK, BACK_EDGE, WAIT_0, HAND_BACK, END) +
        function("unwaited", *LOOP_TOP, HAND_BACK, BACK_EDGE, WAIT_0, HAND_BACK, END) +
        function("two_pending", *LOOP_TOP, WAIT_2, HAND_BACK, BACK_EDGE, WAIT_0, HAND_BACK, END) +
        function("last_early", *LOOP_TOP, WAIT_1, HAND_BACK, BACK_EDGE, HAND_BACK, WAIT_0, END) +
        function("block_barrier", *LOOP_TOP, "BAR.SYNC.DEFER_BLOCKING 0x0", BACK_EDGE, END) +
        function("no_wgmma", "SYNCS.ARRIVE.TRANS64.A1T0 RZ, [R2], RZ", END) +
        function("store_behind_barrier", *LOOP_TOP, WAIT_0, "BAR.SYNC.DEFER_BLOCKING 0x0",
                 "STS.U8 [R5+0x1000], R7", "STS.U8 [R5+0x1001], R8", END) +
        function("store_unbarriered", *LOOP_TOP, WAIT_0, "FMUL R24, R24, R3",
                 "@P1 STS.U8 [R5+0x1000], R7", END))


def faults(body):
    return [check_wgmma_waits.fault(body, i) for i, (_, text) in enumerate(body)
            if check_wgmma_waits.HAND_BACK.match(text)]


def stores(body):
    return [check_wgmma_waits.unbarriered(body, i) for i, (_, text) in enumerate(body)
            if check_wgmma_waits.STORE.match(text)]


def main():
    bodies = dict(check_fences.functions(DUMP, addresses=True))
    failures = []

    def check(condition, what):
        if not condition:
            failures.append(what)

    check(len(bodies) == 8, f"eight functions read, not {len(bodies)}")
    check(faults(bodies["waited"]) == [None, None], "the committed order passes")
    check(faults(bodies["unwaited"])[0] is not None, "a hand-back with no wait fails")
    check(faults(bodies["two_pending"])[0] is not None, "a wait leaving two groups fails")
    check(faults(bodies["last_early"])[1] is not None, "the last stage before the final wait fails")
    check(faults(bodies["block_barrier"]) != [None], "a block barrier right after wgmmas fails")
    check(faults(bodies["no_wgmma"]) == [None], "a function without wgmma has nothing to wait for")
    check(stores(bodies["store_behind_barrier"]) == [None, None], "stores behind a barrier pass")
    check(stores(bodies["store_unbarriered"])[0] is not None,
          "a store after the wgmmas with only this warp's wait before it fails")
    for what in failures:
        print(f"FAIL {what}")
    print(f"check_wgmma_waits_self_test: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
