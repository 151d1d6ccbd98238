#!/usr/bin/env python3
"""tests/check_tma_stores.py on machine code written by hand, in the shape of the weight update's
(docs/results/profiles/14_weight_update): the committed order passes, and the same code without
its proxy fence, without its barrier or without its final wait fails; so does a second box
written before the first box's store has read its buffer (chapter 10's loop of boxes); a loop
kernel's exits are left alone. Needs no GPU and no CUDA
toolkit (meson test, suite cpu)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_fences  # noqa: E402
import check_tma_stores  # noqa: E402

STORES = """
        /*0000*/                   STS.64 [R8+UR8], R16 ;                               /* 0x0 */
        /*0010*/                   STS [R9], R14 ;                                      /* 0x0 */"""
FENCE = """
        /*0020*/                   MEMBAR.ALL.CTA ;                                     /* 0x0 */
        /*0030*/                   FENCE.VIEW.ASYNC.S ;                                 /* 0x0 */"""
BARRIER = """
        /*0040*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;                        /* 0x0 */"""
TMA_STORES = """
        /*0050*/               @P1 EXIT ;                                               /* 0x0 */
        /*0060*/                   UTMASTG.2D [UR8], [UR4] ;                            /* 0x0 */
        /*0070*/                   UTMASTG.2D [UR20], [UR6] ;                           /* 0x0 */
        /*0080*/                   UTMACMDFLUSH ;                                       /* 0x0 */"""
WAIT = """
        /*0090*/                   DEPBAR.LE SB0, 0x0 ;                                 /* 0x0 */"""
END = """
        /*00a0*/                   EXIT ;                                               /* 0x0 */"""


def function(name, *parts):
    return f"\n        Function : {name}" + "".join(parts)


DUMP = (function("published", STORES, FENCE, BARRIER, TMA_STORES, WAIT, END) +
        function("unfenced", FENCE, STORES, BARRIER, TMA_STORES, WAIT, END) +
        function("unsynced", STORES, BARRIER, FENCE, TMA_STORES, WAIT, END) +
        function("unwaited", STORES, FENCE, BARRIER, TMA_STORES, END) +
        function("boxes", STORES, FENCE, BARRIER, TMA_STORES, WAIT, STORES, FENCE, BARRIER,
                 TMA_STORES, WAIT, END) +
        function("rewritten", STORES, FENCE, BARRIER, TMA_STORES, STORES, FENCE, BARRIER,
                 TMA_STORES, WAIT, END))


def main():
    bodies = dict(check_fences.functions(DUMP))
    failures = []

    def check(condition, what):
        if not condition:
            failures.append(what)

    check(set(bodies) == {"published", "unfenced", "unsynced", "unwaited", "boxes", "rewritten"},
          f"every function read: {list(bodies)}")
    faults = {name: check_tma_stores.faults(body) for name, body in bodies.items()}
    check(faults.get("published") == [], f"the committed order passes: {faults.get('published')}")
    check(faults.get("boxes") == [], f"box after box, each waited for, passes: {faults.get('boxes')}")
    for name, why, stores in [("unfenced", "FENCE.VIEW.ASYNC.S", 2), ("unsynced", "BAR.SYNC", 2),
                              ("unwaited", "DEPBAR", 1)]:
        found = faults.get(name, [])
        check(len(found) == stores and all(why in text for _, text in found),
              f"{name}: {stores} fault(s) naming {why}: {found}")
    check(check_tma_stores.faults(bodies["unwaited"], final_wait=False) == [],
          "a loop kernel's exits are not checked")
    check(any("its read" in text for _, text in faults.get("rewritten", [])),
          f"rewritten: a fault naming the store's read: {faults.get('rewritten')}")
    for what in failures:
        print(f"FAIL {what}")
    print(f"check_tma_stores self-test: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
