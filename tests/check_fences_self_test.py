#!/usr/bin/env python3
"""tests/check_fences.py on machine code written by hand: each fence the chapters use passes in
front of each kind of atomic add, and the same code without its fence fails; so does an add whose
count is read with no acquire after it (chapter 13's second fence, the grid barrier's acquire
load). Needs no GPU and no
CUDA toolkit (meson test, suite cpu)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_fences  # noqa: E402

DUMP = """
        Function : _Z6fencedv
        /*0000*/                   MEMBAR.SC.GPU ;                                      /* 0x0 */
        /*0010*/                   ERRBAR;                                              /* 0x0 */
        /*0020*/                   CCTL.IVALL ;                                         /* 0x0 */
        /*0030*/                   ATOMG.E.ADD.STRONG.GPU PT, R2, desc[UR4][R4.64], R7 ; /* 0x0 */
        /*0040*/                   MEMBAR.ALL.GPU ;                                     /* 0x0 */
        /*0050*/                   ERRBAR;                                              /* 0x0 */
        /*0060*/                   CGAERRBAR ;                                          /* 0x0 */
        /*0070*/                   ATOM.E.ADD.STRONG.GPU PT, R5, desc[UR8][R2.64], R5 ; /* 0x0 */
        /*0080*/                   LD.E.STRONG.GPU R0, desc[UR8][R2.64] ;               /* 0x0 */
        /*0090*/                   CCTL.IVALL ;                                         /* 0x0 */
        /*00a0*/                   ATOMS.ADD RZ, [R3], R4 ;                             /* 0x0 */
        /*00b0*/                   EXIT ;                                               /* 0x0 */
        Function : _Z8unfencedv
        /*0000*/                   MEMBAR.ALL.GPU ;                                     /* 0x0 */
        /*0010*/                   STG.E [R2.64], R5 ;                                  /* 0x0 */
        /*0020*/               @P0 ATOM.E.ADD.STRONG.GPU PT, R5, desc[UR8][R2.64], R5 ; /* 0x0 */
        /*0030*/                   RED.E.ADD.STRONG.GPU [R2.64], R5 ;                   /* 0x0 */
        /*0040*/                   EXIT ;                                               /* 0x0 */
        Function : _Z10unacquiredv
        /*0000*/                   MEMBAR.SC.GPU ;                                      /* 0x0 */
        /*0010*/                   ATOMG.E.ADD.STRONG.GPU PT, R21, desc[UR20][R16.64], R21 ; /* 0x0 */
        /*0020*/               @!P0 STG.E desc[UR20][R16.64], RZ ;                      /* 0x0 */
        /*0030*/                   BAR.SYNC.DEFER_BLOCKING 0x1, 0x80 ;                  /* 0x0 */
        /*0040*/                   LDG.E.128.STRONG.GPU R40, desc[UR20][R16.64] ;       /* 0x0 */
        /*0050*/                   MEMBAR.ALL.GPU ;                                     /* 0x0 */
        /*0060*/                   ATOM.E.ADD.STRONG.GPU PT, R5, desc[UR8][R2.64], R5 ; /* 0x0 */
        /*0070*/                   LD.E.STRONG.GPU R0, desc[UR8][R2.64] ;               /* 0x0 */
        /*0080*/                   BRA 0x70 ;                                           /* 0x0 */
        /*0090*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;                        /* 0x0 */
        /*00a0*/                   EXIT ;                                               /* 0x0 */
"""


def main():
    functions = dict(check_fences.functions(DUMP))
    failures = []

    def check(condition, what):
        if not condition:
            failures.append(what)

    check(set(functions) == {"_Z6fencedv", "_Z8unfencedv", "_Z10unacquiredv"},
          f"every function read: {list(functions)}")
    fenced = functions.get("_Z6fencedv", [])
    adds = [i for i, text in enumerate(fenced) if check_fences.ATOMIC_ADD.match(text)]
    check(adds == [3, 7], f"the global and generic adds counted, the shared one not: {adds}")
    check(check_fences.unfenced(fenced) == [],
          "MEMBAR.SC.GPU before ATOMG and MEMBAR.ALL.GPU before ATOM pass")
    bad = check_fences.unfenced(functions.get("_Z8unfencedv", []))
    check(bad == [2, 3], f"an add after a store, and an add after an add, fail: {bad}")
    check(check_fences.unacquired(fenced) == [],
          "a fence after ATOMG and an acquire load (LD...STRONG + CCTL.IVALL) after ATOM pass")
    bad = check_fences.unacquired(functions.get("_Z10unacquiredv", []))
    check(bad == [1, 6], f"a barrier after the add with no fence, a relaxed wait loop, fail: {bad}")
    for what in failures:
        print(f"FAIL {what}")
    print(f"check_fences self-test: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
