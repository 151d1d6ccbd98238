#!/usr/bin/env python3
"""Draws the concept figure of each chapter into docs/figures/concept_NN_*.png.

    python3 tools/draw_concepts.py [FIGURES_DIR]

Every size, count and name in the figures comes from the chapters' headers: CONSTANTS below names
the header and the C++ constant of each, and the script reads them (a namespace-level
`constexpr int kName = expression;`, evaluated with the constants it names) when it starts, so
that a figure cannot drift from the code it explains. A constant that is missing or no longer an
integer stops the script with an `error:` line. Chapter 11's figure reads CH11_HEADER once that
chapter exists; before, it is skipped with a line saying so. The output is deterministic: the
same inputs give the same PNG bytes (no randomness, no date in the files).
"""
import ast
import csv
import functools
import os
import re
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# The constants the figures use: script name -> (header, C++ name). Read from the header at start.
CONSTANTS = {
    # chapters/01_naive/gemm.cuh
    "naive_block_side": ("chapters/01_naive/gemm.cuh", "kBlockSide"),
    # chapters/02_smem_tiling/gemm.cuh and smem_tile.cuh
    "ch02_block_tile_m": ("chapters/02_smem_tiling/gemm.cuh", "kBlockTileM"),
    "ch02_block_tile_n": ("chapters/02_smem_tiling/gemm.cuh", "kBlockTileN"),
    "ch02_block_tile_k": ("chapters/02_smem_tiling/gemm.cuh", "kBlockTileK"),
    "ch02_thread_tile_m": ("chapters/02_smem_tiling/gemm.cuh", "kThreadTileM"),
    "ch02_thread_tile_n": ("chapters/02_smem_tiling/gemm.cuh", "kThreadTileN"),
    "ch02_threads_m": ("chapters/02_smem_tiling/gemm.cuh", "kThreadsM"),
    "ch02_threads_n": ("chapters/02_smem_tiling/gemm.cuh", "kThreadsN"),
    "ch02_threads": ("chapters/02_smem_tiling/gemm.cuh", "kThreads"),
    "ch02_pad": ("chapters/02_smem_tiling/smem_tile.cuh", "kPad"),
    # chapters/03_mma_sync/mma.cuh and gemm.cuh
    "mma_m": ("chapters/03_mma_sync/mma.cuh", "kMmaM"),
    "ch17_blocks": ("chapters/17_cluster_model/layout.cuh", "kClusterBlocks"),
    "mma_n": ("chapters/03_mma_sync/mma.cuh", "kMmaN"),
    "mma_k": ("chapters/03_mma_sync/mma.cuh", "kMmaK"),
    "ch03_warp_tile_m": ("chapters/03_mma_sync/gemm.cuh", "kWarpTileM"),
    "ch03_warp_tile_n": ("chapters/03_mma_sync/gemm.cuh", "kWarpTileN"),
    # chapters/04_cp_async/gemm.cuh
    "ch04_stages": ("chapters/04_cp_async/gemm.cuh", "kStages"),
    "ch04_block_tile_k": ("chapters/04_cp_async/gemm.cuh", "kBlockTileK"),
    "ch04_threads": ("chapters/04_cp_async/gemm.cuh", "kThreads"),
    # chapters/05_split_k/split_k.cuh and gemm.cuh
    "min_k_tiles_per_split": ("chapters/05_split_k/split_k.cuh", "kMinKTilesPerSplit"),
    "max_splits": ("chapters/05_split_k/split_k.cuh", "kMaxSplits"),
    "ch05_block_tile_m": ("chapters/05_split_k/gemm.cuh", "kBlockTileM"),
    "ch05_block_tile_n": ("chapters/05_split_k/gemm.cuh", "kBlockTileN"),
    "ch05_block_tile_k": ("chapters/05_split_k/gemm.cuh", "kBlockTileK"),
    # chapters/07_tma/gemm.cuh and tma.cuh
    "ch07_block_tile_m": ("chapters/07_tma/gemm.cuh", "kBlockTileM"),
    "ch07_block_tile_n": ("chapters/07_tma/gemm.cuh", "kBlockTileN"),
    "ch07_warp_tile_m": ("chapters/07_tma/gemm.cuh", "kWarpTileM"),
    "ch07_warp_tile_n": ("chapters/07_tma/gemm.cuh", "kWarpTileN"),
    "ch07_warps_m": ("chapters/07_tma/gemm.cuh", "kWarpsM"),
    "ch07_warps_n": ("chapters/07_tma/gemm.cuh", "kWarpsN"),
    "ch07_mma_tiles_m": ("chapters/07_tma/gemm.cuh", "kMmaTilesM"),
    "ch07_mma_tiles_n": ("chapters/07_tma/gemm.cuh", "kMmaTilesN"),
    "ch07_stages": ("chapters/07_tma/gemm.cuh", "kStages"),
    "tile_k": ("chapters/07_tma/tma.cuh", "kTileK"),
    "swizzle_bytes": ("chapters/07_tma/tma.cuh", "kSwizzleBytes"),
    "swizzle_atom_bytes": ("chapters/07_tma/tma.cuh", "kSwizzleAtomBytes"),
    # chapters/08_wgmma/gemm.cuh and wgmma.cuh
    "ch08_block_tile_m": ("chapters/08_wgmma/gemm.cuh", "kBlockTileM"),
    "ch08_block_tile_n": ("chapters/08_wgmma/gemm.cuh", "kBlockTileN"),
    "ch08_warpgroups": ("chapters/08_wgmma/gemm.cuh", "kWarpgroups"),
    "ch08_stages": ("chapters/08_wgmma/gemm.cuh", "kStages"),
    "wgmma_m": ("chapters/08_wgmma/wgmma.cuh", "kWgmmaM"),
    "wgmma_n": ("chapters/08_wgmma/wgmma.cuh", "kWgmmaN"),
    "wgmma_k": ("chapters/08_wgmma/wgmma.cuh", "kWgmmaK"),
    "warpgroup_threads": ("chapters/08_wgmma/wgmma.cuh", "kWarpgroupThreads"),
    "accumulators": ("chapters/08_wgmma/wgmma.cuh", "kAccumulators"),
    "warpgroup_rows_bytes": ("chapters/08_wgmma/wgmma.cuh", "kWarpgroupRowsBytes"),
    # chapters/09_warp_specialized/gemm.cuh and roles.cuh
    "ch09_block_tile_m": ("chapters/09_warp_specialized/gemm.cuh", "kBlockTileM"),
    "ch09_block_tile_n": ("chapters/09_warp_specialized/gemm.cuh", "kBlockTileN"),
    "ch09_consumers": ("chapters/09_warp_specialized/gemm.cuh", "kConsumers"),
    "ch09_threads": ("chapters/09_warp_specialized/gemm.cuh", "kThreads"),
    "ch09_consumer_warps": ("chapters/09_warp_specialized/gemm.cuh", "kConsumerWarps"),
    "ch09_stages": ("chapters/09_warp_specialized/gemm.cuh", "kStages"),
    "launch_registers": ("chapters/09_warp_specialized/gemm.cuh", "kLaunchRegisters"),
    "producer_registers": ("chapters/09_warp_specialized/roles.cuh", "kProducerRegisters"),
    "consumer_registers": ("chapters/09_warp_specialized/roles.cuh", "kConsumerRegisters"),
    # chapters/10_tile_scheduler/gemm.cuh and tma_store.cuh
    "ch10_block_tile_m": ("chapters/10_tile_scheduler/gemm.cuh", "kBlockTileM"),
    "ch10_block_tile_n": ("chapters/10_tile_scheduler/gemm.cuh", "kBlockTileN"),
    "ch10_consumers": ("chapters/10_tile_scheduler/gemm.cuh", "kConsumers"),
    "ch10_stages": ("chapters/10_tile_scheduler/gemm.cuh", "kStages"),
    "group_tile_rows": ("chapters/10_tile_scheduler/gemm.cuh", "kGroupTileRows"),
    "store_box_columns": ("chapters/10_tile_scheduler/tma_store.cuh", "kStoreBoxColumns"),
    "store_box_bytes": ("chapters/10_tile_scheduler/gemm.cuh", "kStoreBoxBytes"),
    "store_buffers": ("chapters/10_tile_scheduler/gemm.cuh", "kStoreBuffers"),
    # chapters/12_swap_ab/tiles.cuh and 13_split_k_in_kernel/split_kernel.cuh (drawn by concept_09,
    # the swap AB and split-K figure)
    "ch12_max_batch": ("chapters/12_swap_ab/tiles.cuh", "kMaxBatch"),
    "ch12_max_splits": ("chapters/13_split_k_in_kernel/split_kernel.cuh", "kMostSplits"),
    # chapters/15_persistent_step/tile.cuh (drawn by concept_15 and concept_16)
    "ch15_tile_m": ("chapters/15_persistent_step/tile.cuh", "kTileM"),
    "ch15_tile_n": ("chapters/15_persistent_step/tile.cuh", "kTileN"),
}
# The epilogue kinds and their one-line descriptions: the enum's comments.
EPILOGUE_HEADER = "common/gemm_interface.cuh"
# SMs of the GPU the results were measured on, as the bench logged it ("..., 132 SMs, ...").
SM_LOG = "docs/results/gemm/logs/bench_01_08.txt"

DPI = 100
# Okabe and Ito's colour-blind-safe palette, one meaning per colour throughout.
OKABE_ITO = {"orange": "#E69F00", "sky": "#56B4E9", "green": "#009E73", "yellow": "#F0E442",
             "blue": "#0072B2", "vermillion": "#D55E00", "purple": "#CC79A7", "grey": "#999999"}
A_COLOR = OKABE_ITO["blue"]  # operand A
B_COLOR = OKABE_ITO["orange"]  # operand B
C_COLOR = OKABE_ITO["green"]  # C and the accumulators
COPY_COLOR = OKABE_ITO["sky"]  # a copy in flight
MMA_COLOR = OKABE_ITO["vermillion"]  # tensor-core work
EPILOGUE_COLOR = OKABE_ITO["purple"]  # the epilogue
REGISTER_COLORS = [OKABE_ITO["blue"], OKABE_ITO["orange"], OKABE_ITO["green"], OKABE_ITO["purple"]]
GRID = "#555555"
PARITY_COLORS = [OKABE_ITO["sky"], OKABE_ITO["yellow"]]  # phases of parity 0 and 1


def error(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------------------------------------
# Reading the constants from the headers.

SIZEOF = {"__half": 2, "float": 4, "uint64_t": 8}


def header_scope(path, seen=None):
    """The header and, depth first, the project headers it includes: where its names resolve."""
    seen = set() if seen is None else seen
    if path in seen:
        return []
    seen.add(path)
    scope = [path]
    with open(os.path.join(ROOT, path)) as file:
        text = file.read()
    for include in re.findall(r'^#include "([^"]+)"', text, re.MULTILINE):
        for base in ("chapters", "common"):
            candidate = os.path.join(base, include)
            if os.path.exists(os.path.join(ROOT, candidate)):
                scope += header_scope(candidate, seen)
                break
    return scope


def definitions(path):
    """{name: expression} of the namespace-level `constexpr int|uint32_t kName = ...;` lines."""
    with open(os.path.join(ROOT, path)) as file:
        text = file.read()
    pattern = r"^constexpr (?:int|uint32_t) (k\w+) = ([^;]+);"
    return dict(re.findall(pattern, text, re.MULTILINE))


def evaluate(expression, lookup):
    """An integer expression of C++ constants: + - * / % (integer division), sizeof, int()."""
    expression = re.sub(r"int\((sizeof\(\w+\))\)", r"\1", expression)
    for type_name in re.findall(r"sizeof\((\w+)\)", expression):
        if type_name not in SIZEOF:
            raise ValueError(f"no size for {type_name}")
        expression = expression.replace(f"sizeof({type_name})", str(SIZEOF[type_name]))
    operators = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
                 ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a // b,
                 ast.Mod: lambda a, b: a % b}

    def value(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            return lookup(node.id)
        if isinstance(node, ast.BinOp) and type(node.op) in operators:
            return operators[type(node.op)](value(node.left), value(node.right))
        raise ValueError(f"cannot evaluate '{expression}'")

    return value(ast.parse(expression.strip(), mode="eval").body)


def read_constant(header, name, stack=()):
    """The value of constant `name` as `header` sees it (itself first, then its includes)."""
    for path in header_scope(header):
        found = definitions(path)
        if name in found:
            if (path, name) in stack:
                error(f"{name} in {path} is defined in terms of itself")
            try:
                return evaluate(found[name],
                                lambda other: read_constant(path, other, stack + ((path, name),)))
            except (ValueError, SyntaxError) as why:
                error(f"{name} in {path}: {why}")
    error(f"{header} (or what it includes) defines no constant {name}: update CONSTANTS in "
          f"tools/draw_concepts.py")


def read_constants():
    return {key: read_constant(header, name) for key, (header, name) in CONSTANTS.items()}


def read_epilogue_kinds():
    """[(kind, comment)] of enum class EpilogueKind, in order."""
    with open(os.path.join(ROOT, EPILOGUE_HEADER)) as file:
        text = file.read()
    body = re.search(r"enum class EpilogueKind \{(.*?)\};", text, re.DOTALL)
    if not body:
        error(f"no enum class EpilogueKind in {EPILOGUE_HEADER}")
    kinds = re.findall(r"^\s*(k\w+),\s*//\s*(.*)$", body.group(1), re.MULTILINE)
    if not kinds:
        error(f"no commented kinds in EpilogueKind ({EPILOGUE_HEADER})")
    return kinds


def read_sm_count():
    with open(os.path.join(ROOT, SM_LOG)) as file:
        found = re.search(r"(\d+) SMs", file.read())
    if not found:
        error(f"no 'N SMs' in {SM_LOG}")
    return int(found.group(1))


# ---------------------------------------------------------------------------------------------
# Drawing: one Axes over the whole figure, in pixels, y pointing down.

def tint(color, amount):
    """`color` mixed with white: amount 1 is the colour, 0 white."""
    rgb = np.array(to_rgb(color))
    return tuple(1 - amount * (1 - rgb))


class Canvas:
    def __init__(self, width, height, title):
        self.fig = plt.figure(figsize=(width / DPI, height / DPI), dpi=DPI)
        self.ax = self.fig.add_axes([0, 0, 1, 1])
        self.ax.set_xlim(0, width)
        self.ax.set_ylim(height, 0)
        self.ax.axis("off")
        self.text(width / 2, 26, title, size=17, ha="center", weight="bold")

    def rect(self, x, y, w, h, face="none", edge=GRID, lw=1.0, text=None, size=11,
             color="black", hatch=None, linestyle="-", weight=None, zorder=1):
        self.ax.add_patch(Rectangle((x, y), w, h, facecolor=face, edgecolor=edge, linewidth=lw,
                                    hatch=hatch, linestyle=linestyle, zorder=zorder))
        if text is not None:
            # Over a hatch, the text gets a plain background of the fill colour.
            box = dict(facecolor=face, edgecolor="none", pad=1.5) if hatch else None
            self.text(x + w / 2, y + h / 2, text, size=size, ha="center", color=color,
                      weight=weight, zorder=zorder + 1, bbox=box)

    def text(self, x, y, s, size=12, ha="left", va="center", color="black", weight=None,
             zorder=5, **kw):
        self.ax.text(x, y, s, fontsize=size, ha=ha, va=va, color=color, fontweight=weight,
                     zorder=zorder, **kw)

    def line(self, xs, ys, color=GRID, lw=1.0, linestyle="-", zorder=2):
        self.ax.plot(xs, ys, color=color, linewidth=lw, linestyle=linestyle, zorder=zorder)

    def arrow(self, x0, y0, x1, y1, color="black", lw=1.6, style="-|>", rad=0.0, zorder=4):
        self.ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle=style,
                                          mutation_scale=16, color=color, linewidth=lw,
                                          connectionstyle=f"arc3,rad={rad}", zorder=zorder))

    def grid(self, x, y, cols, rows, cell_w, cell_h, color=GRID, lw=0.6):
        for c in range(cols + 1):
            self.line([x + c * cell_w] * 2, [y, y + rows * cell_h], color=color, lw=lw)
        for r in range(rows + 1):
            self.line([x, x + cols * cell_w], [y + r * cell_h] * 2, color=color, lw=lw)

    def save(self, figures, name):
        path = os.path.join(figures, name)
        # No "Software" entry: the bytes then depend on the drawing only.
        self.fig.savefig(path, dpi=DPI, metadata={"Software": None})
        plt.close(self.fig)
        print(f"wrote {path}")


def nb(text):
    """`text` with no-break spaces, so that notes() never wraps inside it."""
    return text.replace(" ", "\u00a0")


def notes(canvas, x, y, items, width=46, size=12, gap=14):
    """Paragraphs from (x, y) down, each a bold heading (may be empty) and a body wrapped at
    `width` characters."""
    line = size * 2.1
    for heading, body in items:
        if heading:
            canvas.text(x, y, heading, size=size, weight="bold")
            y += line
        for text in textwrap.wrap(body, width):
            canvas.text(x, y, text, size=size)
            y += line
        y += gap


def matrix_label(canvas, x, y, w, h, name, color):
    canvas.rect(x, y, w, h, face=tint(color, 0.12), edge=color, lw=1.5)
    canvas.text(x + w / 2, y - 12, name, size=13, ha="center", weight="bold", color=color)


def swatches(canvas, x, y, items, size=11, spacing=22):
    """A row of coloured squares, each followed by its label."""
    for color, label in items:
        canvas.rect(x, y - 8, 16, 16, face=color, edge=GRID, lw=0.8)
        canvas.text(x + 22, y, label, size=size)
        x += 22 + 0.72 * size * len(label) + spacing


def flow_box(canvas, x, y, w, h, title, body, face, edge):
    canvas.rect(x, y, w, h, face=face, edge=edge, lw=1.8)
    canvas.text(x + w / 2, y + 20, title, size=12, ha="center", weight="bold")
    canvas.text(x + w / 2, y + h / 2 + 12, body, size=11, ha="center")


# ---------------------------------------------------------------------------------------------
# The figures.

def concept_01(k, figures):
    side = k["naive_block_side"]
    m, n, depth = 2 * side, 3 * side, 2 * side  # the matrices drawn: 2 x 3 blocks of C
    s = 8  # pixels per element
    ax0, top = 60, 84  # A's left edge, B's top edge
    cx, cy = ax0 + depth * s + 24, top + depth * s + 24  # C's top-left corner
    canvas = Canvas(1240, cy + m * s + 56, "Chapter 01: one thread per element of C")
    bx, by, tx, ty = 1, 1, 5, 9
    row, col = by * side + ty, bx * side + tx

    matrix_label(canvas, ax0, cy, depth * s, m * s, "A  (M x K)", A_COLOR)
    matrix_label(canvas, cx, top, n * s, depth * s, "B  (K x N)", B_COLOR)
    matrix_label(canvas, cx, cy, n * s, m * s, "C  (M x N)", C_COLOR)
    for b in range(1, n // side):  # the blocks of C
        canvas.line([cx + b * side * s] * 2, [cy, cy + m * s], color=C_COLOR, lw=1)
    for b in range(1, m // side):
        canvas.line([cx, cx + n * s], [cy + b * side * s] * 2, color=C_COLOR, lw=1)
    block_x, block_y = cx + bx * side * s, cy + by * side * s
    canvas.grid(block_x, block_y, side, side, s, s, color="#bbbbbb", lw=0.4)
    canvas.rect(block_x, block_y, side * s, side * s, edge="black", lw=2.5)
    canvas.text(block_x + side * s / 2, cy + m * s + 18,
                f"one block: {side} x {side} threads, one element each", size=11, ha="center")

    # The thread's row of A and column of B, and its neighbour's (x + 1).
    canvas.rect(ax0, cy + row * s, depth * s, s, face=A_COLOR, edge=A_COLOR)
    canvas.rect(cx + col * s, top, s, depth * s, face=B_COLOR, edge=B_COLOR)
    canvas.rect(cx + (col + 1) * s, top, s, depth * s, face=tint(B_COLOR, 0.4), edge=B_COLOR,
                lw=0.5)
    canvas.rect(cx + col * s, cy + row * s, s, s, face="black", edge="black", zorder=3)
    canvas.rect(cx + (col + 1) * s, cy + row * s, s, s, face="#888888", edge="black", lw=0.5,
                zorder=3)
    canvas.line([ax0 + depth * s, cx + col * s], [cy + row * s + s / 2] * 2, color=A_COLOR,
                lw=1.2, linestyle=":")
    canvas.line([cx + col * s + s / 2] * 2, [top + depth * s, cy + row * s], color=B_COLOR,
                lw=1.2, linestyle=":")
    canvas.text(ax0 + depth * s / 2, cy + row * s + 22, "its row of A: K values", size=11,
                ha="center", color=A_COLOR)
    canvas.text(cx + col * s - 10, top + depth * s / 2, "its column\nof B:\nK values",
                size=11, ha="right", color=B_COLOR)

    formula = ["thread (x, y),", "block (bx, by):", "", f"row = by * {side} + y",
               f"col = bx * {side} + x", "", "C[row][col] =", "  sum over i < K",
               "  of A[row][i] * B[i][col]"]
    for i, line in enumerate(formula):
        canvas.text(ax0, top + 10 + 26 * i, line, size=12, family="monospace")

    notes(canvas, cx + n * s + 36, cy - 60, [
        ("No reuse", "K multiply-adds and 2K loads: each value a thread loads serves one "
                     "multiply-add."),
        ("Coalesced", "Its neighbour x + 1 (grey) reads the next column of B: neighbouring "
                      "addresses, so a warp's loads of B and its stores of C coalesce."),
        ("Redundant", f"All {side} threads of a block row read the same row of A, each on its "
                      "own, from memory or cache. Chapter 02 shares it through shared memory."),
    ], width=44)
    canvas.save(figures, "concept_01_naive.png")


def concept_02(k, figures):
    tile_m, tile_n, tile_k = k["ch02_block_tile_m"], k["ch02_block_tile_n"], k["ch02_block_tile_k"]
    tm, tn = k["ch02_thread_tile_m"], k["ch02_thread_tile_n"]  # rows and columns per thread
    threads_m, threads_n = k["ch02_threads_m"], k["ch02_threads_n"]
    e = 2.0  # pixels per element
    k_tiles, current = 3, 1  # K tiles drawn; the one in shared memory now
    ax0, top = 60, 96
    cx, cy = ax0 + k_tiles * tile_k * e + 34, top + k_tiles * tile_k * e + 60
    cw, ch = tile_n * e, tile_m * e
    canvas = Canvas(1400, int(cy + ch + 70),
                    "Chapter 02: a block tile through shared memory, a register tile per thread")
    ty, tx = 5, 10  # the thread drawn
    rows0, cols0 = ty * tm, tx * tn  # its rows and columns (MN-major operands)

    # The block's rows of A and columns of B in global memory, K tile by K tile.
    for t in range(k_tiles):
        here = t == current
        canvas.rect(ax0 + t * tile_k * e, cy, tile_k * e, ch,
                    face=tint(A_COLOR, 0.35 if here else 0.08), edge=A_COLOR,
                    lw=2.5 if here else 1)
        canvas.rect(cx, top + t * tile_k * e, cw, tile_k * e,
                    face=tint(B_COLOR, 0.35 if here else 0.08), edge=B_COLOR,
                    lw=2.5 if here else 1)
        canvas.text(ax0 + (t + 0.5) * tile_k * e, cy - 12, f"k0 = {t * tile_k}", size=10,
                    ha="center", color=A_COLOR)
        canvas.text(cx - 8, top + (t + 0.5) * tile_k * e, f"k0 = {t * tile_k}", size=10,
                    ha="right", color=B_COLOR)
    canvas.text(ax0 + k_tiles * tile_k * e / 2, cy - 36,
                f"op(A): the block's {tile_m} rows, all of K", size=12, ha="center",
                color=A_COLOR, weight="bold")
    canvas.text(cx + cw / 2, top - 16, f"op(B): the block's {tile_n} columns, all of K",
                size=12, ha="center", color=B_COLOR, weight="bold")
    notes(canvas, ax0, top + 10, [
        ("Per K step", f"all {k['ch02_threads']} threads copy one tile of A ({tile_m} x "
                       f"{tile_k}) and one of B ({tile_k} x {tile_n}), highlighted, into shared "
                       f"memory: each element comes from global memory once per block."),
    ], width=30, size=11)
    # The thread's rows of the A tile and columns of the B tile.
    canvas.rect(ax0 + current * tile_k * e, cy + rows0 * e, tile_k * e, tm * e,
                face=A_COLOR, edge=A_COLOR)
    canvas.rect(cx + cols0 * e, top + current * tile_k * e, tn * e, tile_k * e,
                face=B_COLOR, edge=B_COLOR)

    # The block tile of C: threads_m x threads_n threads, each tm x tn.
    canvas.rect(cx, cy, cw, ch, face=tint(C_COLOR, 0.1), edge=C_COLOR, lw=1.5)
    canvas.grid(cx, cy, threads_n, threads_m, tn * e, tm * e,
                color=tint(C_COLOR, 0.5), lw=0.5)
    canvas.rect(cx + cols0 * e, cy + rows0 * e, tn * e, tm * e, face=C_COLOR,
                edge="black", lw=1.5, zorder=3)
    canvas.text(cx + cw / 2, cy - 14, f"block tile of C, {tile_m} x {tile_n}", size=12,
                ha="center", color=C_COLOR, weight="bold")
    canvas.text(cx + cw / 2, cy + ch + 16, f"{threads_m} x {threads_n} threads, {tm} x "
                f"{tn} each", size=11, ha="center")
    canvas.text(cx + (cols0 + tn) * e + 6, cy + (rows0 + tm / 2) * e,
                f"thread ({ty}, {tx})", size=11, weight="bold",
                bbox=dict(facecolor="white", edgecolor="none", pad=1))

    # The thread's outer product, in registers.
    right = cx + cw + 60
    notes(canvas, right, 80, [
        (f"Thread ({ty}, {tx}), for each k of the tile:", ""),
        ("", "an outer product in registers"),
    ], width=60, size=12, gap=0)
    cell = 14
    ox, oy = right + 100, 160
    for i in range(tm):
        canvas.rect(ox - cell - 10, oy + i * cell, cell, cell, face=tint(A_COLOR, 0.5),
                    edge=A_COLOR)
    for j in range(tn):
        canvas.rect(ox + j * cell, oy - cell - 10, cell, cell, face=tint(B_COLOR, 0.5),
                    edge=B_COLOR)
    canvas.rect(ox, oy, tn * cell, tm * cell, face=tint(C_COLOR, 0.55), edge="black")
    canvas.grid(ox, oy, tn, tm, cell, cell, color="white", lw=1)
    canvas.text(ox - cell - 18, oy + tm * cell / 2, f"{tm} values\nof A", size=11, ha="right",
                color=A_COLOR)
    canvas.text(ox + tn * cell + 14, oy - cell / 2 - 10, f"{tn} values of B", size=11,
                color=B_COLOR)
    canvas.text(ox + tn * cell + 14, oy + tm * cell / 2,
                f"acc[{tm}][{tn}] += a x b:\n{tm * tn} multiply-adds from\n{tm + tn} values "
                f"read from\nshared memory", size=11)

    # Which rows a thread owns depends on the layout of the operands in shared memory.
    mini = 1.25
    my = oy + tm * cell + 80
    canvas.text(right, my - 30, f"Which {tm} x {tn}: it depends on the operands' "
                "layout", size=12, weight="bold")
    for panel, k_major in enumerate([False, True]):
        mx = right + panel * 270
        canvas.rect(mx, my, tile_n * mini, tile_m * mini, face=tint(C_COLOR, 0.1), edge=C_COLOR)
        for i in range(tm):
            for j in range(tn):
                r = ty + i * threads_m if k_major else rows0 + i
                c = tx + j * threads_n if k_major else cols0 + j
                canvas.rect(mx + c * mini - 1.5, my + r * mini - 1.5, 4, 4, face="black",
                            edge="black", lw=0.3, zorder=3)
        caption = (f"K-major (forward pass): rows {ty}, {ty + threads_m}, ..., "
                   f"{ty + (tm - 1) * threads_m}, {threads_m} apart; columns {threads_n} apart"
                   if k_major else
                   f"MN-major (weight gradient), as drawn left: rows {rows0}-"
                   f"{rows0 + tm - 1}, columns {cols0}-{cols0 + tn - 1}")
        notes(canvas, mx, my + tile_m * mini + 20, [("", caption)], width=30, size=11)
    # SmemTile (smem_tile.cuh): rows of the stored layout, each padded by kPad halves.
    pad = k["ch02_pad"]
    k_major_kib = (tile_m * (tile_k + pad) + tile_n * (tile_k + pad)) * 2 / 1024
    mn_major_kib = (tile_k * (tile_m + pad) + tile_k * (tile_n + pad)) * 2 / 1024
    notes(canvas, right, my + tile_m * mini + 110, [
        ("", f"{k['ch02_threads']} threads x {tm * tn} accumulators = the "
             f"{tile_m} x {tile_n} tile. Shared memory: {k_major_kib:g} KiB for two K-major "
             f"tiles ({tile_m} rows of {tile_k} + {pad} padding halves), {mn_major_kib:g} KiB "
             f"for two MN-major ones ({tile_k} rows of {tile_m} + {pad}). Per K step: copy, "
             f"__syncthreads, {tile_k} outer products, __syncthreads."),
    ], width=62, size=11)
    canvas.save(figures, "concept_02_tiles.png")


def concept_03(k, figures):
    mm, mn, mk = k["mma_m"], k["mma_n"], k["mma_k"]
    if (mm, mn, mk) != (16, 8, 16):
        error(f"concept_03 draws the PTX fragments of m16n8k16; mma.cuh now says m{mm}n{mn}k{mk}")
    c = 30  # pixels per element
    gap = 100
    x0, y0 = 60, 140
    bx, by = x0 + mk * c + gap - 20, y0  # B (k x n), above C
    ax_, ay = x0, y0 + mm * c + gap  # A (m x k), left of C
    cx, cy = bx, ay  # C (m x n)
    canvas = Canvas(1400, ay + mm * c + 50,
                    f"Chapter 03: which lane holds what in mma.sync.m{mm}n{mn}k{mk}, and how "
                    "ldmatrix.x4 loads it")
    light = [tint(color, 0.38) for color in REGISTER_COLORS]

    def indices(x, y, rows, cols, row_name, col_name):
        for r in range(rows):
            canvas.text(x - 6, y + (r + 0.5) * c, str(r), size=9, ha="right", color="#666666")
        for col in range(cols):
            canvas.text(x + (col + 0.5) * c, y + rows * c + 10, str(col), size=9, ha="center",
                        color="#666666")
        canvas.text(x - 30, y + rows * c / 2, row_name, size=11, ha="center", rotation=90,
                    color="#444444")
        canvas.text(x + cols * c / 2, y + rows * c + 28, col_name, size=11, ha="center",
                    color="#444444")

    def heading(x, y, text, legend):
        canvas.text(x, y - 54, text, size=13, weight="bold")
        swatches(canvas, x, y - 24, legend)

    def outline_matrices(x, y):  # the four 8 x 8 matrices of a 16 x 16 tile, q down then across
        for q in range(4):
            canvas.rect(x + q // 2 * 8 * c, y + q % 2 * 8 * c, 8 * c, 8 * c, edge="black", lw=1.5)

    # ldmatrix.x4 on a K-major 16 x 16 tile of A: lane l names row l % 8 of matrix l / 8.
    heading(x0, y0, "ldmatrix.x4: each lane gives one row's address",
            [(light[q], f"matrix {q}") for q in range(4)])
    for lane in range(32):
        q, r = lane // 8, lane % 8
        row, col = q % 2 * 8 + r, q // 2 * 8
        canvas.rect(x0 + col * c, y0 + row * c, 8 * c, c, face=light[q], edge="white", lw=1.5,
                    text=f"lane {lane}", size=11)
    outline_matrices(x0, y0)
    indices(x0, y0, mm, mk, "m    (a bar: one row, 8 halves = 16 bytes)", "k")

    # The A fragment: a[q] holds matrix q, rows g (+8), columns 2t, 2t+1 (+8).
    heading(ax_, ay, f"A fragment, {mm} x {mk} fp16: the lane holding each pair",
            [(light[q], f"a[{q}]") for q in range(4)])
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for q in range(4):
            row, col = q % 2 * 8 + g, q // 2 * 8 + 2 * t
            canvas.rect(ax_ + col * c, ay + row * c, 2 * c, c, face=light[q], edge="white",
                        lw=1.5, text=str(lane), size=11)
    outline_matrices(ax_, ay)
    indices(ax_, ay, mm, mk, "m", "k")

    # The B fragment: b[0] holds k = 2t, 2t+1 of column g; b[1] the same 8 further in k.
    heading(bx, by, f"B fragment, {mk} x {mn} fp16 (k x n)",
            [(light[q], f"b[{q}]") for q in range(2)])
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for q in range(2):
            canvas.rect(bx + g * c, by + (q * 8 + 2 * t) * c, c, 2 * c, face=light[q],
                        edge="white", lw=1.5, text=str(lane), size=11)
    for q in range(2):
        canvas.rect(bx, by + q * 8 * c, 8 * c, 8 * c, edge="black", lw=1.5)
    indices(bx, by, mk, mn, "k", "n")

    # The accumulators: c[0], c[1] row g, columns 2t, 2t+1; c[2], c[3] row g + 8.
    heading(cx, cy, f"C accumulators, {mm} x {mn} fp32",
            [(light[0], "c[0], c[1]"), (light[1], "c[2], c[3]")])
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for h in range(2):
            canvas.rect(cx + 2 * t * c, cy + (h * 8 + g) * c, 2 * c, c, face=light[h],
                        edge="white", lw=1.5, text=str(lane), size=11)
    for h in range(2):
        canvas.rect(cx, cy + h * 8 * c, 8 * c, 8 * c, edge="black", lw=1.5)
    indices(cx, cy, mm, mn, "m", "n")

    warp_m, warp_n = k["ch03_warp_tile_m"] // mm, k["ch03_warp_tile_n"] // mn
    notes(canvas, cx + mn * c + 90, y0 - 50, [
        ("A fixed piece per lane", f"Each lane l of the warp is in group {nb('g = l / 4')} and "
         f"pair {nb('t = l % 4')}. A number in a cell is the lane that holds those elements: two "
         "neighbouring fp16 values per 32-bit register for A and B, one fp32 per accumulator."),
        ("The pattern", f"A: row g (+ 8 in a[1], a[3]), columns {nb('2t, 2t + 1')} (+ 8 in a[2], "
         f"a[3]). B: rows {nb('2t, 2t + 1')} of column g (+ 8 in b[1]). C: row g, columns "
         f"{nb('2t, 2t + 1')} in c[0], c[1]; row {nb('g + 8')} in c[2], c[3]."),
        ("ldmatrix.x4 delivers it", f"Lane l names row {nb('l % 8')} of matrix {nb('l / 8')} "
         f"(top left) and receives, in register q, row {nb('l / 4')}, columns "
         f"{nb('2 (l % 4)')} and {nb('2 (l % 4) + 1')} of matrix q: matrix q lands in a[q], "
         f"the A fragment. Where the tile is MN-major, ldmatrix.trans delivers each "
         f"{nb('8 x 8')} matrix transposed."),
        ("Per 16 of K, a warp", f"(warp tile {k['ch03_warp_tile_m']} x "
         f"{k['ch03_warp_tile_n']} = {warp_m} x {warp_n} mma tiles) issues {warp_m} "
         f"ldmatrix.x4 for A, {warp_n // 2} for B (two 16 x 8 pieces each) and "
         f"{warp_m * warp_n} mma.sync: each A fragment serves {warp_n} mma, each B fragment "
         f"{warp_m}."),
        ("Source", "PTX ISA, \"Matrix Fragments for mma.m16n8k16 with floating point type\" "
         "and \"ldmatrix\"; chapters/03_mma_sync/mma.cuh."),
    ], width=42, size=11)
    canvas.save(figures, "concept_03_fragments.png")


def ring_timeline(canvas, x0, y0, stages, k_tiles, step_w, row_h, label_w, copy_label,
                  compute_label, issue_at=0.0, phases=False):
    """Stages over K steps as chapters 04 and 07 run them: tile t is copied into stage
    t % stages from step t - (stages - 1) (+ issue_at of a step; the prologue for the first
    stages - 1 tiles) and multiplied at step t. With `phases`, each copy is coloured by the
    parity of its use of the stage."""
    lead = stages - 1
    px = x0 + label_w  # the prologue's column
    step_x = lambda t: px + step_w * 0.8 + t * step_w  # noqa: E731
    height = stages * row_h
    canvas.text(px + step_w * 0.4, y0 - 16, "prologue", size=11, ha="center", color="#444444")
    for t in range(k_tiles):
        canvas.text(step_x(t) + step_w / 2, y0 - 16, f"step {t}", size=11, ha="center",
                    color="#444444")
        canvas.line([step_x(t)] * 2, [y0 - 4, y0 + height], color="#999999", lw=1,
                    linestyle="--")
    for s in range(stages):
        canvas.text(x0, y0 + (s + 0.5) * row_h, f"stage {s}", size=12, weight="bold")
    for t in range(k_tiles + lead):
        s = t % stages
        y = y0 + s * row_h + 7
        start = px + 6 if t < lead else step_x(t - lead + issue_at) + 4
        if t >= k_tiles:  # an empty group: the ring drains
            if t - lead < k_tiles and not phases:
                canvas.rect(start, y, step_w * 0.9, row_h - 14, edge="#999999", linestyle=":",
                            text="empty group", size=10, color="#777777")
            continue
        end = step_x(t) - 4
        use = t // stages
        face = tint(PARITY_COLORS[use % 2] if phases else COPY_COLOR, 0.55)
        label = f"{copy_label} {t}"
        canvas.rect(start, y, end - start, row_h - 14, face=face, edge=GRID, hatch="//",
                    text=label, size=10 if phases else 11)
        canvas.rect(step_x(t) + 4, y, step_w - 8, row_h - 14, face=tint(MMA_COLOR, 0.6),
                    edge=MMA_COLOR, text=f"{compute_label} {t}", size=11, weight="bold")
        if phases:  # the phase completes when the bytes have landed: the wait's parity
            canvas.text(step_x(t), y + row_h - 14, f"P{use % 2}", size=9, ha="center",
                        va="top", weight="bold", bbox=dict(facecolor="white", edgecolor="black",
                                                           boxstyle="round,pad=0.15"))


def concept_04(k, figures):
    stages, tile_k = k["ch04_stages"], k["ch04_block_tile_k"]
    k_tiles, step_w, row_h = 8, 128, 62
    x0, y0 = 40, 130
    canvas = Canvas(1400, y0 + stages * row_h + 220,
                    f"Chapter 04: a ring of {stages} shared-memory stages, "
                    "copies in flight while the tensor cores work")
    ring_timeline(canvas, x0, y0, stages, k_tiles, step_w, row_h, 90, "copy tile", "mma")
    warps = k["ch04_threads"] // 32
    swatches(canvas, x0, 72, [(tint(COPY_COLOR, 0.55), "cp.async copy of K tile t in flight"),
                              (tint(MMA_COLOR, 0.6), f"mma.sync on K tile t (all {warps} warps)")],
             spacing=40)
    canvas.line([x0 + 690, x0 + 706], [72, 72], color="#999999", linestyle="--")
    canvas.text(x0 + 714, 72, f"a step starts: wait_group {stages - 2}, then __syncthreads",
                size=11)
    y = y0 + stages * row_h + 36
    canvas.text(x0, y, f"Every step t (K tile t, {tile_k} deep):", size=12, weight="bold")
    steps = [
        f"1. cp.async.wait_group {stages - 2}: this thread's copies of tile t have landed "
        f"(the {stages - 2} newer groups may still be in flight)",
        "2. __syncthreads: everyone's copies of tile t have landed, and everyone is done with "
        "step t - 1",
        f"3. start copying tile t + {stages - 1} into the stage that step t - 1 read; commit "
        "those copies as one group",
        "4. mma.sync on tile t",
    ]
    for i, line in enumerate(steps):
        canvas.text(x0 + 20, y + 28 * (i + 1), line, size=12)
    canvas.text(x0, y + 28 * 5 + 6,
                f"{stages - 1} tiles are in flight while one is multiplied: a copy has "
                f"{stages - 1} steps to land. Past the last tile a step commits an empty group, "
                f"so the wait count stays {stages - 2}.", size=12)
    canvas.save(figures, "concept_04_ring.png")


def choose_split(k, m, n, depth, resident_blocks, workspace_floats):
    """chapters/05_split_k/split_k.cuh's choose_split, line for line: (splits, K tiles each)."""
    tm, tn, tk = k["ch05_block_tile_m"], k["ch05_block_tile_n"], k["ch05_block_tile_k"]
    k_tiles = (depth + tk - 1) // tk
    tiles = ((m + tm - 1) // tm) * ((n + tn - 1) // tn)
    splits = min(resident_blocks // tiles, k_tiles // k["min_k_tiles_per_split"],
                 k["max_splits"], workspace_floats // (m * n))
    if splits <= 1:
        return 1, k_tiles
    per_split = (k_tiles + splits - 1) // splits
    return (k_tiles + per_split - 1) // per_split, per_split


def concept_05(k, figures):
    tile_k, min_tiles = k["ch05_block_tile_k"], k["min_k_tiles_per_split"]
    m, n, depth = 32, 128, 12 * tile_k  # the example: one tile of C, 12 K tiles
    plenty = 1 << 30  # resident blocks and workspace: not the limit here
    splits, per_split = choose_split(k, m, n, depth, plenty, plenty)
    k_tiles = depth // tile_k
    colors = [OKABE_ITO["blue"], OKABE_ITO["orange"], OKABE_ITO["purple"], OKABE_ITO["green"]]
    if splits > len(colors):
        error(f"concept_05: {splits} splits, colours for {len(colors)}")
    canvas = Canvas(1400, 700, "Chapter 05: split-K, partial tiles in a workspace, "
                               "a sum in a fixed order")
    x0, tw = 60, 60  # the K axis: pixels per K tile
    range_w = per_split * tw
    centre = lambda z: x0 + (z + 0.5) * range_w  # noqa: E731

    # K, cut into ranges of whole K tiles.
    canvas.text(x0, 74, f"K = {depth}: {k_tiles} K tiles of {tile_k}, cut into {splits} ranges "
                f"of {per_split}", size=13, weight="bold")
    for t in range(k_tiles):
        canvas.rect(x0 + t * tw, 96, tw, 40, face=tint(colors[t // per_split], 0.45),
                    edge="white", lw=1.5, text=str(t), size=10)
    for z in range(splits):
        canvas.rect(x0 + z * range_w, 96, range_w, 40, edge="black", lw=1.5)

    # One block per range, all on the same tile of C, each writing its own slab.
    by, bh, wy = 186, 124, 384
    canvas.text(x0, wy - 22, "workspace: splits x M x N floats", size=12, weight="bold")
    for z in range(splits):
        bx = x0 + z * range_w + 10
        canvas.arrow(centre(z), 138, centre(z), by - 2)
        canvas.rect(bx, by, range_w - 20, bh, face=tint(colors[z], 0.15), edge=colors[z], lw=2)
        canvas.text(bx + 12, by + 22, f"block (x, y, z = {z})", size=12, weight="bold")
        canvas.text(bx + 12, by + 50, f"K tiles {z * per_split} .. {(z + 1) * per_split - 1}, "
                    "with", size=11)
        canvas.text(bx + 12, by + 72, "chapter 04's ring and loop", size=11)
        canvas.text(bx + 12, by + 100, f"partial_{z} = A_{z} · B_{z}", size=12,
                    family="monospace")
        canvas.arrow(centre(z), by + bh + 2, centre(z), wy - 36)
        canvas.rect(bx, wy, range_w - 20, 64, face=tint(colors[z], 0.45), edge=colors[z],
                    lw=1.5, text=f"slab {z}: partial_{z}", size=12)

    # sum_splits: every element in the order z = 0, 1, 2.
    sw, sh = 330, 150
    sx, sy = x0 + (splits * range_w - sw) / 2 - 60, wy + 130
    for z in range(splits):
        canvas.arrow(centre(z), wy + 66, sx + sw * (z + 1) / (splits + 1), sy - 2)
    canvas.rect(sx, sy, sw, sh, face="#f2f2f2", edge="black", lw=1.5)
    canvas.text(sx + 14, sy + 22, "sum_splits, every element i:", size=12, weight="bold")
    order = ["sum = slab[0][i]"] + [f"sum += slab[{z}][i]" for z in range(1, splits)] + \
        ["C[i] = sum"]
    for j, line in enumerate(order):
        canvas.text(sx + 30, sy + 52 + 24 * j, line, size=12, family="monospace")
    canvas.arrow(sx + sw + 2, sy + sh / 2, sx + sw + 70, sy + sh / 2)
    canvas.rect(sx + sw + 74, sy + sh / 2 - 40, 110, 80, face=tint(C_COLOR, 0.45),
                edge=C_COLOR, lw=1.5, text="C", size=14, weight="bold")

    # How many splits, and why a fixed order.
    p = [np.float32(1.5), np.float32(0.1), np.float32(0.2)]
    in_order, other_order = (p[0] + p[1]) + p[2], (p[1] + p[2]) + p[0]
    if in_order == other_order:
        error("concept_05: the example sums no longer differ in fp32")
    rx = x0 + k_tiles * tw + 70
    notes(canvas, rx, 74, [
        ("Why", "With M = 32 rows (batch 32) C has few tiles: too few blocks for the GPU, each "
         "walking all of K alone. K is the long dimension, so the blocks share it."),
        ("How many splits (choose_split)", f"As many as fill the GPU without a second wave: "
         f"{nb('min(resident blocks / tiles of C,')} {nb(f'K tiles / {min_tiles},')} "
         f"{k['max_splits']}, what the workspace holds). Here {k_tiles} / {min_tiles} = "
         f"{splits}: every split walks at least {min_tiles} K tiles, so that its ring runs past "
         "its prologue."),
        ("Why not atomicAdd into C?", "The blocks finish in a different order every run, and "
         "fp32 addition is not associative: with partial sums 1.5, 0.1 and 0.2, "
         f"{nb('(1.5 + 0.1) + 0.2')} = {in_order:.9g} but {nb('(0.1 + 0.2) + 1.5')} = "
         f"{other_order:.9g} (float32, computed by this script). A fixed order gives the "
         "same bits every run, and the same training run; the price is the workspace and a "
         "second kernel."),
    ], width=50, size=11)
    canvas.save(figures, "concept_05_split_k.png")


def concept_06(k, kinds, figures):
    mn = k["mma_n"]
    canvas = Canvas(1400, 830, "Chapter 06: the epilogue fused into the GEMM's store")
    kernel_face, memory_face = tint(MMA_COLOR, 0.18), "#eeeeee"
    x0 = 40

    # Before and after, for a forward hidden layer (kBiasRelu).
    canvas.text(x0, 70, "A hidden layer's forward product, Y = fp16(ReLU(X W^T + b))",
                size=13, weight="bold")
    y1, y2, h = 100, 250, 92
    canvas.text(x0, y1 + h / 2, "chapters\n01-05", size=12, weight="bold", color="#444444")
    canvas.text(x0, y2 + h / 2, "chapter 06", size=12, weight="bold", color="#444444")
    bx = x0 + 100
    flow_box(canvas, bx, y1, 170, h, "GEMM kernel", "accumulators\nin registers", kernel_face,
             MMA_COLOR)
    canvas.arrow(bx + 172, y1 + h / 2, bx + 222, y1 + h / 2)
    flow_box(canvas, bx + 226, y1, 150, h, "Z in memory", "M x N fp32", memory_face, GRID)
    canvas.arrow(bx + 378, y1 + h / 2, bx + 428, y1 + h / 2)
    flow_box(canvas, bx + 432, y1, 180, h, "epilogue pass", "a second kernel:\n+ b, ReLU, fp16",
             tint(EPILOGUE_COLOR, 0.2), EPILOGUE_COLOR)
    canvas.arrow(bx + 614, y1 + h / 2, bx + 664, y1 + h / 2)
    flow_box(canvas, bx + 668, y1, 124, h, "Y in memory", "M x N fp16", memory_face, GRID)

    flow_box(canvas, bx, y2, 612, h, "GEMM kernel",
             "accumulators  ->  + b[col], ReLU, fp16 in registers  ->  one store", kernel_face,
             MMA_COLOR)
    canvas.arrow(bx + 614, y2 + h / 2, bx + 664, y2 + h / 2)
    flow_box(canvas, bx + 668, y2, 124, h, "Y in memory", "M x N fp16", memory_face, GRID)
    canvas.text(bx + 306, y2 - 24, "gone: a kernel launch, and Z's round trip through memory "
                "(8 bytes per element)", size=11, ha="center", color="#444444", style="italic")

    # The five kinds, from the enum's comments.
    tx, ty = bx + 840, 70
    canvas.text(tx, ty, "Each product's epilogue kind", size=13, weight="bold")
    canvas.text(tx, ty + 24, "EpilogueKind, common/gemm_interface.cuh", size=10,
                color="#444444")
    y = ty + 56
    for name, comment in kinds:
        parts = re.split(r"\s{2,}", comment.strip())
        what, use = parts[0], (parts[1] if len(parts) > 1 else "")
        canvas.text(tx, y, name, size=11, weight="bold", family="monospace")
        canvas.text(tx + 100, y, use or "a plain store", size=10, color="#444444")
        for line in what.split("; "):
            y += 19
            canvas.text(tx + 12, y, line, size=10, family="monospace")
        y += 29

    # Storing a row of a fragment: one float at a time, or column pairs.
    top = 420
    canvas.text(x0, top, f"Storing fp32 C from the fragment: each row's {mn} columns are "
                f"{mn} x 4 = 32 bytes, one memory sector", size=13, weight="bold")
    canvas.text(x0, top + 24, f"rows 0-7 of a {k['mma_m']} x {mn} mma tile (c[0], c[1]; rows "
                "8-15 likewise with c[2], c[3]); lanes 4g .. 4g + 3 hold row g", size=11,
                color="#444444")
    cw, rh = 46, 34
    first, second = tint(OKABE_ITO["sky"], 0.6), tint(OKABE_ITO["yellow"], 0.7)
    for panel, paired in enumerate([False, True]):
        px, py = x0 + 60 + panel * 680, top + 96
        heading = ("float2 column pairs (chapter 06, finish_pair): 1 store instruction"
                   if paired else "one float at a time (chapters 03-05): 2 store instructions")
        canvas.text(px - 60, py - 32, heading, size=12, weight="bold")
        for g in range(8):
            y = py + g * rh
            canvas.text(px - 10, y + rh / 2, f"row {g}", size=10, ha="right", color="#444444")
            for t in range(4):
                lane = 4 * g + t
                if paired:
                    canvas.rect(px + 2 * t * cw, y, 2 * cw, rh, face=first, edge="white", lw=1.5,
                                text=f"lane {lane}", size=10)
                else:
                    for e in range(2):
                        canvas.rect(px + (2 * t + e) * cw, y, cw, rh,
                                    face=[first, second][e], edge="white", lw=1.5,
                                    text=str(lane), size=10)
            canvas.rect(px, y, mn * cw, rh, edge="black", lw=1.2)
        for col in range(mn):
            canvas.text(px + (col + 0.5) * cw, py + 8 * rh + 12, f"{4 * col}", size=9,
                        ha="center", color="#666666")
        canvas.text(px + mn * cw / 2, py + 8 * rh + 30, "byte offset in the row's sector",
                    size=10, ha="center", color="#444444")
        if not paired:
            swatches(canvas, px + mn * cw + 20, py + 20, [(first, "store 1: c[0]")], spacing=0)
            swatches(canvas, px + mn * cw + 20, py + 48, [(second, "store 2: c[1]")], spacing=0)
            canvas.text(px + mn * cw + 20, py + 100, "each store writes\n4 bytes of every 8:\n"
                        "every sector is\nwritten twice, half\neach time", size=11, va="top")
        else:
            canvas.text(px + mn * cw + 20, py + 20, "each lane writes\n8 bytes: every\n"
                        "sector once, whole", size=11, va="top")
            canvas.text(px + mn * cw + 20, py + 110, "fp16 outputs (2 bytes):\n"
                        "a quarter of a sector\nper store one at a\ntime, half as half2 "
                        "pairs", size=11, va="top", color="#444444")
    canvas.save(figures, "concept_06_epilogue.png")


def swizzle_inset(canvas, x, y, k, chunk=2, cell_w=36, cell_h=26):
    """The 128-byte swizzle of tma.cuh's swizzled(): 8 rows of eight 16-byte chunks, chunk c of
    row r stored in slot c ^ (r % 8); the 8 rows of one chunk, which the 8 lanes of an ldmatrix
    matrix read, highlighted."""
    swizzle = k["swizzle_bytes"]
    chunks = swizzle // 16
    rows = k["swizzle_atom_bytes"] // swizzle
    canvas.text(x, y, f"The {swizzle}-byte swizzle (one {rows}-row atom)", size=13, weight="bold")
    canvas.text(x, y + 24, "chunk c of row r in slot c ^ (r % 8)", size=11, family="monospace")
    gx, gy = x + 52, y + 76
    canvas.text(gx + chunks * cell_w / 2, gy - 28, "slot: 16 bytes, 4 of the 32 banks", size=10,
                ha="center", color="#444444")
    for slot in range(chunks):
        canvas.text(gx + (slot + 0.5) * cell_w, gy - 8, str(slot), size=9, ha="center",
                    color="#666666")
    slots = []
    for r in range(rows):
        canvas.text(gx - 8, gy + (r + 0.5) * cell_h, f"row {r}", size=9, ha="right",
                    color="#666666")
        for slot in range(chunks):
            c = slot ^ (r % 8)
            hit = c == chunk
            if hit:
                slots.append(slot)
            canvas.rect(gx + slot * cell_w, gy + r * cell_h, cell_w, cell_h,
                        face=tint(A_COLOR, 0.75) if hit else tint(A_COLOR, 0.1), edge="white",
                        lw=1.2, text=f"c{c}", size=9, color="white" if hit else "#444444",
                        weight="bold" if hit else None)
    canvas.rect(gx, gy, chunks * cell_w, rows * cell_h, edge=A_COLOR, lw=1.2)
    halves = 16 // 2
    notes(canvas, x, gy + rows * cell_h + 26, [
        ("", f"ldmatrix: the 8 lanes of one matrix read chunk {chunk} (k = {chunk * halves}-"
             f"{chunk * halves + halves - 1}) of rows 0-7: slots "
             f"{', '.join(map(str, slots))}, each of the 32 banks once. Unswizzled, all 8 would "
             f"sit in slot {chunk}, {swizzle} bytes apart: the same 4 banks, 8 ways."),
    ], width=44, size=10, gap=0)


def concept_07_tma(k, figures):
    """Chapter 07: chapter 06's mma.sync kernel fed by TMA. Thread 0 starts one copy per operand
    per stage; the copy engine writes the tile swizzled and counts its bytes on full[s]; every
    warp waits on full[s], then reads its fragments with ldmatrix through the swizzle."""
    stages, tile_k = k["ch07_stages"], k["tile_k"]
    tm, tn = k["ch07_block_tile_m"], k["ch07_block_tile_n"]
    warps_m, warps_n = k["ch07_warps_m"], k["ch07_warps_n"]
    wtm, wtn = k["ch07_warp_tile_m"], k["ch07_warp_tile_n"]
    mma_m, mma_n, mma_k = k["mma_m"], k["mma_n"], k["mma_k"]
    tiles_m, tiles_n = k["ch07_mma_tiles_m"], k["ch07_mma_tiles_n"]
    warps, threads = warps_m * warps_n, warps_m * warps_n * 32
    a_kib, b_kib = tm * tile_k * 2 // 1024, tn * tile_k * 2 // 1024
    stage_kib = a_kib + b_kib
    k_steps = tile_k // mma_k
    loads, mmas = k_steps * (tiles_m + tiles_n // 2), k_steps * tiles_m * tiles_n
    canvas = Canvas(1400, 910, "Chapter 07: one thread hands each tile to TMA, an mbarrier per "
                               "stage says when it has landed")
    x0 = 40

    # Global memory -> thread 0 and the copy engine -> the ring -> the warps.
    gy, gh = 110, 170
    canvas.rect(x0, gy, 160, gh, face="#eeeeee", edge=GRID, lw=1.5)
    canvas.text(x0 + 80, gy + 22, "global memory", size=12, ha="center", weight="bold")
    canvas.rect(x0 + 18, gy + 46, 124, 48, face=tint(A_COLOR, 0.3), edge=A_COLOR,
                text="op(A): M x K", size=11)
    canvas.rect(x0 + 18, gy + 106, 124, 48, face=tint(B_COLOR, 0.3), edge=B_COLOR,
                text="op(B): K x N", size=11)
    tx = x0 + 180
    canvas.text(tx, gy - 4, "thread 0, per K tile t:", size=11, weight="bold")
    canvas.text(tx, gy + 12, f"1. arrive.expect_tx(\n   full[s], {stage_kib} KiB)\n"
                "2. TMA copy of A's tile\n3. TMA copy of B's tile", size=10, va="top",
                family="monospace")
    rx, sw, sg = x0 + 400, 118, 14  # the ring: stage width and gap
    canvas.arrow(x0 + 162, gy + 92, rx - 4, gy + 92)
    canvas.text(tx, gy + 108, "the copy engine computes\nthe addresses, writes the\n"
                "tile swizzled and counts\nits bytes on full[s]", size=10, va="top",
                color="#444444")
    canvas.text(rx, gy - 30, f"shared memory: a ring of {stages} stages of {stage_kib} KiB",
                size=12, weight="bold")
    for s in range(stages):
        sx = rx + s * (sw + sg)
        aw = sw * a_kib / stage_kib
        canvas.rect(sx, gy, aw, 110, face=tint(A_COLOR, 0.3), edge=A_COLOR, lw=1.2,
                    text=f"A\n{tm}\nx {tile_k}", size=10)
        canvas.rect(sx + aw, gy, sw - aw, 110, face=tint(B_COLOR, 0.3), edge=B_COLOR, lw=1.2,
                    text=f"B\n{tn}\nx {tile_k}", size=10)
        canvas.text(sx + sw / 2, gy + 124, f"stage {s}", size=11, ha="center", weight="bold")
        canvas.rect(sx + 14, gy + 144, sw - 28, 30, face="white", edge="black", lw=1.5,
                    text=f"full[{s}]", size=11, weight="bold")
    ring_end = rx + stages * (sw + sg) - sg
    notes(canvas, rx, gy + 200, [
        ("", f"full[s] completes its phase when thread 0 has arrived and all {stage_kib} KiB "
             "have landed: then every warp may read stage s."),
    ], width=76, size=10, gap=0)

    # The block's warps on its tile of C.
    wx, ww, wh = ring_end + 56, 64, 55  # the warps' tiles, not to scale
    canvas.arrow(ring_end + 4, gy + 55, wx - 6, gy + 55)
    canvas.text(wx, gy - 30, f"{warps} warps, {wtm} x {wtn} of C each", size=12, weight="bold")
    for w in range(warps):
        canvas.rect(wx + w % warps_n * ww, gy + w // warps_n * wh, ww, wh,
                    face=tint(MMA_COLOR, 0.3), edge=MMA_COLOR, lw=1.2, text=f"warp {w}",
                    size=10)
    canvas.text(wx + warps_n * ww / 2, gy + warps_m * wh + 8, f"the block's {tm} x {tn} tile "
                "of C", size=10, ha="center", va="top", color="#444444")
    notes(canvas, wx, gy + warps_m * wh + 42, [
        ("", f"each warp, per K tile: waits on full[s]; {loads} ldmatrix.x4 through the swizzle, "
             f"{mmas} mma.sync.m{mma_m}n{mma_n}k{mma_k} (chapter 03's fragments)"),
    ], width=52, size=10, gap=0)

    # The stages over time, with the phases of their full barriers.
    y0, k_tiles, step_w, row_h = 450, 8, 92, 52
    canvas.text(x0, y0 - 66, f"Over time: K tile t uses stage t % {stages}; full[t % {stages}] "
                f"completes phase t / {stages} when it has landed", size=13, weight="bold")
    ring_timeline(canvas, x0, y0, stages, k_tiles, step_w, row_h, 80, "TMA", "mma",
                  issue_at=0.05, phases=True)
    swizzle_inset(canvas, 975, y0 - 66, k)

    y = y0 + stages * row_h + 34
    swatches(canvas, x0, y, [(tint(PARITY_COLORS[0], 0.55), "copy in flight, phase of parity 0"),
                             (tint(PARITY_COLORS[1], 0.55), "parity 1"),
                             (tint(MMA_COLOR, 0.6), "ldmatrix + mma.sync, all warps")],
             spacing=30)
    canvas.text(x0, y + 26, "P0 / P1: the parity the waits on full[s] name", size=11)
    steps = [
        f"Every step t, all {threads} threads: mbarrier.try_wait.parity(full[t % {stages}], "
        f"(t / {stages}) & 1): tile t has landed.",
        f"__syncthreads: every warp is done with step t - 1's stage; thread 0 starts tile "
        f"t + {stages - 1} into it.",
        f"Each warp: ldmatrix.x4 from stage t % {stages} (the rows found through the swizzle), "
        "then its mma.sync.",
        f"In chapter 06 all {threads} threads computed addresses, tested edges and issued "
        "cp.async: here one thread issues an arrive and a copy per operand, and TMA fills what "
        "lies past the matrix with zeros.",
    ]
    notes(canvas, x0, y + 62, [("", line) for line in steps], width=122, size=11, gap=2)
    canvas.save(figures, "concept_07_tma.png")


def descriptor_bar(canvas, x, y, w, h):
    """The 64 bits of a wgmma matrix descriptor (PTX ISA, "Matrix Descriptor Format"), bit 0 on
    the left: each field a box with its name."""
    fields = [(0, 14, "start address >> 4", A_COLOR), (16, 30, "LBO >> 4", OKABE_ITO["green"]),
              (32, 46, "SBO >> 4", OKABE_ITO["purple"]), (49, 52, "base offset", GRID),
              (62, 64, "swizzle", MMA_COLOR)]
    bit = w / 64
    canvas.rect(x, y, w, h, face="#f4f4f4", edge=GRID, lw=1)
    for lo, hi, name, color in fields:
        narrow = hi - lo < 6  # named above the bar
        canvas.rect(x + lo * bit, y, (hi - lo) * bit, h, face=tint(color, 0.35), edge=color,
                    lw=1.2, text=None if narrow else name, size=9)
        if narrow:
            canvas.text(x + (lo + hi) / 2 * bit, y - 9, name, size=9, ha="center")
    for b in (0, 14, 16, 30, 32, 46, 49, 52, 62, 64):
        canvas.text(x + b * bit, y + h + 10, str(b), size=8, ha="center", color="#666666")


def concept_08_wgmma(k, figures):
    """Chapter 08: chapter 07's ring with mma.sync replaced by wgmma. A warpgroup of 4 warps
    multiplies 64 x 256 x 16 per instruction, A and B read from shared memory through matrix
    descriptors, the 64 x 256 accumulators in its registers; two warpgroups per 128 x 256 tile."""
    tile_k, stages = k["tile_k"], k["ch08_stages"]
    tm, tn = k["ch08_block_tile_m"], k["ch08_block_tile_n"]
    wm, wn, wk = k["wgmma_m"], k["wgmma_n"], k["wgmma_k"]
    groups, wg_threads = k["ch08_warpgroups"], k["warpgroup_threads"]
    swizzle, atom = k["swizzle_bytes"], k["swizzle_atom_bytes"]
    wg_rows_kib = k["warpgroup_rows_bytes"] // 1024
    wgmmas = tile_k // wk
    warps = wg_threads // 32
    canvas = Canvas(1400, 955, f"Chapter 08: a warpgroup multiplies {wm} x {wn} x {wk} in one "
                               "wgmma, A and B read from shared memory")
    x0 = 40

    # One stage and the block tile of C, drawn to scale.
    e = 1.4  # pixels per element
    aw, ah, bw, bh = tile_k * e, tm * e, tn * e, tile_k * e
    ax, by = x0 + 80, 122
    cx, cy = ax + aw + 22, by + bh + 30
    canvas.text(x0, 70, f"A stage (of {stages}) and the block's {tm} x {tn} tile of C", size=13,
                weight="bold")
    kk = 1  # the K step drawn
    for g in range(groups):
        canvas.rect(ax, cy + g * wm * e, aw, wm * e, face=tint(A_COLOR, 0.18), edge=A_COLOR,
                    lw=1.2)
        canvas.rect(cx, cy + g * wm * e, bw, wm * e, face=tint(C_COLOR, 0.12 + 0.2 * (g == 0)),
                    edge=C_COLOR, lw=1.5)
        canvas.text(ax - 8, cy + (g + 0.5) * wm * e, f"rows\n{g * wm}-{(g + 1) * wm - 1}:\n"
                    f"warp-\ngroup {g}", size=9, ha="right", color="#333333")
        canvas.text(cx + bw / 2, cy + (g + 0.5) * wm * e,
                    f"warpgroup {g}: {wm} x {wn} fp32 in its registers,\n"
                    f"{k['accumulators']} per thread", size=10, ha="center",
                    weight="bold" if g == 0 else None)
    canvas.rect(cx, by, bw, bh, face=tint(B_COLOR, 0.18), edge=B_COLOR, lw=1.2)
    for step in range(wgmmas):  # the K steps of one wgmma each
        face_a = tint(A_COLOR, 0.7) if step == kk else "none"
        face_b = tint(B_COLOR, 0.7) if step == kk else "none"
        canvas.rect(ax + step * wk * e, cy, wk * e, wm * e, face=face_a, edge=A_COLOR, lw=0.6,
                    linestyle="--")
        canvas.rect(cx, by + step * wk * e, bw, wk * e, face=face_b, edge=B_COLOR, lw=0.6,
                    linestyle="--")
    canvas.text(ax + aw / 2, cy - 12, f"A: {tm} x {tile_k}", size=11, ha="center",
                color=A_COLOR, weight="bold")
    canvas.text(cx + bw / 2, by - 14, f"B: {tile_k} x {tn} (op(B), K x N)", size=11,
                ha="center", color=B_COLOR, weight="bold")
    canvas.text(cx + bw + 8, by + (kk + 0.5) * wk * e, f"K step {kk}:\nk {kk * wk}-"
                f"{(kk + 1) * wk - 1}", size=9, va="center", color="#333333")
    canvas.text(x0, cy + ah + 26, f"Dark: the operands of warpgroup 0's wgmma for K step {kk} "
                f"of {wgmmas}: its {wm} rows of A, all of B.", size=10)
    canvas.text(x0, cy + ah + 46, "Both warpgroups read the same B: one copy in shared memory "
                f"serves {tm} rows.", size=10)
    notes(canvas, x0, cy + ah + 90, [
        ("Every K step t, each warpgroup", f"waits on full[t % {stages}]; wgmma.fence; {wgmmas} "
         f"wgmmas (one per {wk} of K, a descriptor for A and one for B each); commit them as one "
         "group; wgmma.wait_group 1: its group of step t - 1 is done, while step t's still "
         f"runs. Then __syncthreads, and thread 0 refills the stage step t - 1 read, as in "
         "chapter 07."),
    ], width=84, size=10, gap=0)

    # The matrix descriptor.
    dx, dw = 700, 660
    canvas.text(dx, 70, "A descriptor per operand and K step: 64 bits", size=13, weight="bold")
    descriptor_bar(canvas, dx, 104, dw, 40)
    notes(canvas, dx, 186, [
        (f"K-major (A: N, B: T), with the {swizzle}-byte swizzle",
         f"start: the tile's address, + {wg_rows_kib} KiB for warpgroup 1's rows of A, "
         f"+ {wk * 2} bytes per K step (inside the {swizzle}-byte rows; the swizzle, applied "
         f"to the final address, still finds each chunk). SBO = {atom} bytes: from 8 rows of "
         f"M (N) to the next 8, one swizzle atom. LBO unused: a K step's {wk} halves lie in "
         "one row."),
        ("MN-major (A: T, B: N)",
         f"SBO = {atom} bytes, from 8 rows of K to the next 8; LBO = "
         f"{swizzle // 2 * tile_k * 2} bytes, from one box of {swizzle // 2} along M (N) to the "
         f"next; a K step is {wk} rows of K, {wk * swizzle} bytes. The transpose flag tells "
         "wgmma which."),
    ], width=96, size=10, gap=8)

    # One warpgroup's accumulators: which thread holds which of the 64 x 256.
    gx, gy, ce, re_ = dx + 50, 425, 2.3, 2.6  # pixels per column, per row
    canvas.text(dx, gy - 30, f"Warpgroup 0's {wm} x {wn} accumulators, 16 rows per warp",
                size=13, weight="bold")
    lane, warp = 9, 1
    for w in range(warps):
        canvas.rect(gx, gy + w * 16 * re_, wn * ce, 16 * re_,
                    face=tint(C_COLOR, 0.1 + 0.12 * (w % 2)), edge=C_COLOR, lw=0.8)
        canvas.text(gx - 6, gy + (w + 0.5) * 16 * re_, f"warp {w}", size=9, ha="right")
    for h in range(2):
        r = 16 * warp + lane // 4 + 8 * h
        for i in range(wn // 8):
            for j in range(2):
                c = 8 * i + 2 * (lane % 4) + j
                canvas.rect(gx + c * ce, gy + r * re_, ce, re_, face="black", edge="none",
                            lw=0, zorder=3)
    canvas.text(gx + wn * ce / 2, gy + wm * re_ + 10, f"columns 0-{wn - 1}", size=9,
                ha="center", va="top", color="#666666")
    notes(canvas, dx, gy + wm * re_ + 40, [
        ("", f"Black: lane {lane} of warp {warp}. Lane l holds rows {nb('16w + l / 4')} and "
             f"{nb('16w + l / 4 + 8')}, columns {nb('8i + 2 (l % 4)')} and {nb('+ 1')} for "
             f"{nb(f'i = 0 .. {wn // 8 - 1}')}: {nb(f'2 x {wn // 4}')} = "
             f"{k['accumulators']} floats, chapter 03's accumulator fragment once per 8 "
             "columns."),
    ], width=96, size=10, gap=0)

    # Chapter 07's warp against chapter 08's warpgroup, per K tile.
    ty = 745
    canvas.text(x0, ty - 28, f"Per K tile of {tile_k}: chapter 07's warp and chapter 08's "
                "warpgroup", size=13, weight="bold")
    c7m, c7n = k["ch07_block_tile_m"], k["ch07_block_tile_n"]
    mma_k = k["mma_k"]
    steps7 = tile_k // mma_k
    loads7 = steps7 * (k["ch07_mma_tiles_m"] + k["ch07_mma_tiles_n"] // 2)
    mmas7 = steps7 * k["ch07_mma_tiles_m"] * k["ch07_mma_tiles_n"]
    warps7 = k["ch07_warps_m"] * k["ch07_warps_n"]
    blocks7 = tm * tn // (c7m * c7n)
    acc7 = k["ch07_warp_tile_m"] * k["ch07_warp_tile_n"] // 32
    smem_face, reg_face = "#eeeeee", tint(C_COLOR, 0.2)
    bh2 = 70
    for row, (label, boxes) in enumerate([
        (f"chapter 07\none warp\n({k['ch07_warp_tile_m']} x {k['ch07_warp_tile_n']})", [
            ("shared memory", "the swizzled stage", smem_face, GRID, 180),
            (f"{loads7} ldmatrix.x4", "fragments into\nregisters", tint(COPY_COLOR, 0.35),
             COPY_COLOR, 180),
            (f"{mmas7} mma.sync", f"m{k['mma_m']}n{k['mma_n']}k{mma_k}, operands\nfrom "
             "registers", tint(MMA_COLOR, 0.3), MMA_COLOR, 210),
            ("accumulators", f"{acc7} floats per thread", reg_face, C_COLOR, 180)]),
        (f"chapter 08\none warpgroup\n({wm} x {wn})", [
            ("shared memory", "the same stage", smem_face, GRID, 180),
            ("2 descriptors", "per wgmma, 64 bits\neach: no ldmatrix", tint(COPY_COLOR, 0.35),
             COPY_COLOR, 180),
            (f"{wgmmas} wgmma", f"m{wm}n{wn}k{wk}, async:\nfence, commit, wait",
             tint(MMA_COLOR, 0.3), MMA_COLOR, 210),
            ("accumulators", f"{k['accumulators']} floats per thread", reg_face, C_COLOR,
             180)]),
    ]):
        y = ty + row * (bh2 + 24)
        canvas.text(x0, y + bh2 / 2, label, size=10, weight="bold", va="center")
        x = x0 + 130
        for j, (title, body, face, edge, w) in enumerate(boxes):
            if j:
                canvas.arrow(x - 34, y + bh2 / 2, x - 4, y + bh2 / 2)
            flow_box(canvas, x, y, w, bh2, title, body, face, edge)
            x += w + 38
    notes(canvas, 1066, ty - 8, [
        (f"For the block's {tm} x {tn} tile", f"chapter 07 needs {blocks7} blocks of {warps7} "
         f"warps: {blocks7 * warps7 * loads7} ldmatrix.x4 and {blocks7 * warps7 * mmas7} "
         f"mma.sync per K tile. Chapter 08's {groups} warpgroups issue {groups * wgmmas} "
         "wgmma, and no operand passes through registers."),
    ], width=42, size=10, gap=0)
    canvas.save(figures, "concept_08_wgmma.png")


def tile_origin(k, tiles_m, tiles_n, tile):
    """chapters/10_tile_scheduler/gemm.cuh's tile_origin, in tiles: (tile row, tile column)."""
    group_rows_max = k["group_tile_rows"]
    per_group = group_rows_max * tiles_n
    first_row = tile // per_group * group_rows_max
    group_rows = min(tiles_m - first_row, group_rows_max)
    in_group = tile % per_group
    return first_row + in_group % group_rows, in_group // group_rows


def simulate_roles(stages, k_tiles, tiles, latency, wgmma, epilogue, issue):
    """A schematic run of chapter 09's and 10's barriers, in arbitrary time units, for `tiles`
    tiles of C of `k_tiles` K tiles each, numbered i through the block's K tiles. The producer
    refills the stage of K tile i once the consumers released its previous use, K tile
    i - stages (empty); the copy lands `latency` later (full); the consumers start K tile i once
    it has landed and they are free, run its wgmmas for `wgmma`, release a K tile's stage when
    the next K tile's wgmmas are issued (wait_group 1), or a tile's last at its end
    (wait_group 0), and run the epilogue after each tile of C. Returns issued, landed, start,
    end, released (per i) and the epilogues' (start, end)."""
    count = k_tiles * tiles

    @functools.lru_cache(maxsize=None)
    def issued(i):
        if i < 0:
            return -issue
        free = released(i - stages) if i >= stages else 0.0
        return max(issued(i - 1) + issue, free)

    @functools.lru_cache(maxsize=None)
    def start(i):
        if i == 0:
            return issued(0) + latency
        before = end(i - 1) + (epilogue if i % k_tiles == 0 else 0.0)
        return max(before, issued(i) + latency)

    def end(i):
        return start(i) + wgmma

    def released(i):
        return end(i) if i % k_tiles == k_tiles - 1 else start(i + 1)

    epilogues = [(end(j * k_tiles + k_tiles - 1), end(j * k_tiles + k_tiles - 1) + epilogue)
                 for j in range(tiles)]
    return ([issued(i) for i in range(count)], [issued(i) + latency for i in range(count)],
            [start(i) for i in range(count)], [end(i) for i in range(count)],
            [released(i) for i in range(count)], epilogues)


def barrier_mark(canvas, x, y, label, color):
    """A small boxed letter on a timeline: where a barrier's phase completes."""
    canvas.text(x, y, label, size=8, ha="center", va="center", weight="bold", zorder=7,
                bbox=dict(facecolor="white", edgecolor=color, boxstyle="round,pad=0.15", lw=1.2))


def roles_rows(canvas, x0, ty, tx0, tw, rh, names):
    """The rows of a producer/consumer timeline: a name on the left, a rule under each."""
    for r, name in enumerate(names):
        canvas.text(x0, ty + (r + 0.5) * rh, name, size=11, weight="bold")
        canvas.line([tx0, tx0 + tw], [ty + (r + 1) * rh] * 2, color="#dddddd", lw=0.8)


def draw_roles_run(canvas, X, unit, ty, rh, stages, k_tiles, run, issue, last_release=True):
    """One simulate_roles run on the rows of roles_rows: the producer's issues (row 0), each
    stage's copy, wait and reads (rows 1 .. stages), the consumers' wgmmas (row stages + 1), and
    where full[s] (F) and empty[s] (E) complete a phase. The epilogues are the caller's."""
    issued, landed, start, end, released, _ = run
    cons_y = ty + (stages + 1) * rh
    for i in range(len(issued)):
        sy = ty + (1 + i % stages) * rh + 5
        waited = issued[i] - (issued[i - 1] + issue if i else issued[0])
        if waited > 1e-9:  # the producer waited on empty[s]
            canvas.line([X(issued[i] - waited), X(issued[i])], [ty + rh / 2] * 2, color=GRID,
                        lw=1.5, linestyle=":")
        canvas.rect(X(issued[i]), ty + 8, issue * unit, rh - 16, face=COPY_COLOR, edge=GRID,
                    lw=0.6)
        canvas.rect(X(issued[i]), sy, (landed[i] - issued[i]) * unit, rh - 10,
                    face=tint(COPY_COLOR, 0.55), edge=GRID, lw=0.6, hatch="//")
        if start[i] > landed[i] + 1e-9:
            canvas.rect(X(landed[i]), sy, (start[i] - landed[i]) * unit, rh - 10,
                        face=tint(COPY_COLOR, 0.2), edge=GRID, lw=0.6)
        last = i % k_tiles == k_tiles - 1
        read_end = released[i] if last_release or not last else end[i]
        canvas.rect(X(start[i]), sy, (read_end - start[i]) * unit, rh - 10,
                    face=tint(MMA_COLOR, 0.55), edge=GRID, lw=0.6, text=str(i % k_tiles),
                    size=10)
        barrier_mark(canvas, X(landed[i]), sy + rh - 10, "F", COPY_COLOR)
        if last_release or not last:
            barrier_mark(canvas, X(released[i]), sy + rh - 10, "E", MMA_COLOR)
        canvas.rect(X(start[i]), cons_y + 5, (end[i] - start[i]) * unit, rh - 10,
                    face=tint(MMA_COLOR, 0.6), edge=MMA_COLOR, lw=1, text=str(i % k_tiles),
                    size=10)


def warpgroup_boxes(canvas, k, x0, y, consumers, tm, tn, width=290, step=308):
    """The block's three warpgroups, the producer first, with their setmaxnreg."""
    boxes = [("warpgroup 0: producer", f"setmaxnreg.dec to {k['producer_registers']} registers;",
              "thread 0 issues every TMA copy", tint(COPY_COLOR, 0.45), COPY_COLOR)]
    for c in range(consumers):
        boxes.append((f"warpgroup {c + 1}: consumer",
                      f"setmaxnreg.inc to {k['consumer_registers']} registers;",
                      f"rows {c * k['wgmma_m']}-{(c + 1) * k['wgmma_m'] - 1} of the "
                      f"{tm} x {tn} tile", tint(MMA_COLOR, 0.3), MMA_COLOR))
    for j, (name, line1, line2, face, edge) in enumerate(boxes):
        bx = x0 + j * step
        canvas.rect(bx, y, width, 86, face=face, edge=edge, lw=1.8)
        canvas.text(bx + 12, y + 18, name, size=12, weight="bold")
        canvas.text(bx + 12, y + 44, line1, size=10)
        canvas.text(bx + 12, y + 66, line2, size=10)


def concept_09_roles(k, figures):
    """Chapter 09: warp specialisation. A producer warpgroup (one thread issues the TMA copies)
    and two consumer warpgroups (the wgmmas), meeting only at full[s] and empty[s]; one tile per
    block, so each block's ring starts empty and its epilogue leaves the tensor cores idle."""
    stages, consumers = k["ch09_stages"], k["ch09_consumers"]
    wg_threads, threads = k["warpgroup_threads"], k["ch09_threads"]
    tm, tn, tile_k = k["ch09_block_tile_m"], k["ch09_block_tile_n"], k["tile_k"]
    stage_kib = (tm + tn) * tile_k * 2 // 1024
    cwarps = k["ch09_consumer_warps"]
    canvas = Canvas(1400, 700, "Chapter 09: a producer warpgroup and two consumer warpgroups, "
                               "meeting only at mbarriers")
    x0 = 40

    # The block's three warpgroups, and its barriers.
    y = 66
    warpgroup_boxes(canvas, k, x0, y, consumers, tm, tn)
    launch = k["launch_registers"]
    canvas.text(x0, y + 108, f"{threads} threads, one block per SM, launched at {launch} "
                f"registers each: {wg_threads} x {k['producer_registers']} + "
                f"{consumers * wg_threads} x {k['consumer_registers']} = {threads} x {launch}.",
                size=11)
    notes(canvas, x0 + 3 * 308 + 10, y + 6, [
        ("Two barriers per stage", f"full[s]: the producer's arrive.expect_tx and {stage_kib} "
         f"KiB of copies. empty[s]: {cwarps} arrivals, lane 0 of each consumer warp, once "
         "the wgmmas that read the stage are done."),
    ], width=46, size=10, gap=0)

    # The schematic run: two blocks on one SM, one tile each.
    k_tiles, issue, latency, wgmma, epilogue, gap = 6, 0.15, 2.6, 1.0, 3.0, 0.8
    run = simulate_roles(stages, k_tiles, 1, latency=latency, wgmma=wgmma, epilogue=epilogue,
                         issue=issue)
    length = run[5][0][1]  # a block: from its first copy to its epilogue's end
    horizon = 2 * length + gap + 0.2
    tx0, tw = x0 + 200, 1400 - 40 - 240
    unit = tw / horizon
    ty, rh = 252, 44
    canvas.text(x0, ty - 26, "Two blocks, one after the other on one SM (schematic, not to "
                "scale)", size=13, weight="bold")
    roles_rows(canvas, x0, ty, tx0, tw, rh, ["producer (thread 0)"] +
               [f"stage {s}" for s in range(stages)] + [f"consumers ({consumers} warpgroups)"])
    cons_y = ty + (stages + 1) * rh
    for b in range(2):
        offset = b * (length + gap)
        X = lambda t, o=offset: tx0 + (t + o) * unit  # noqa: E731
        draw_roles_run(canvas, X, unit, ty, rh, stages, k_tiles, run, issue,
                       last_release=False)
        a, e = run[5][0]
        canvas.rect(X(a), cons_y + 5, (e - a) * unit, rh - 10, face=tint(EPILOGUE_COLOR, 0.55),
                    edge=EPILOGUE_COLOR, lw=1, text="epilogue", size=10)
        canvas.text(X(0), cons_y + rh + 12, "block b: its tile" if b == 0 else
                    "the next block on this SM: its tile", size=10, color="#444444")
    # The SM between the blocks: the tensor cores idle from the last wgmma to the next tile's.
    idle0 = tx0 + run[3][-1] * unit
    idle1 = tx0 + (length + gap + run[2][0]) * unit
    canvas.rect(idle0, ty + 2, idle1 - idle0, (stages + 2) * rh - 4, edge="black", lw=1.5,
                linestyle="--", zorder=6)

    ly = cons_y + rh + 44
    swatches(canvas, x0, ly, [(COPY_COLOR, "TMA issued"),
                              (tint(COPY_COLOR, 0.55), "copy in flight"),
                              (tint(COPY_COLOR, 0.2), "landed, not yet read"),
                              (tint(MMA_COLOR, 0.55), "read by the wgmmas"),
                              (tint(EPILOGUE_COLOR, 0.55), "epilogue")], spacing=30)
    barrier_mark(canvas, x0 + 1000, ly, "F", COPY_COLOR)
    canvas.text(x0 + 1012, ly, "full[s] completes", size=11)
    barrier_mark(canvas, x0 + 1160, ly, "E", MMA_COLOR)
    canvas.text(x0 + 1172, ly, "empty[s] completes", size=11)
    notes(canvas, x0, ly + 34, [
        ("", f"Numbers: the K tile. The consumers wait on full[s], the producer on empty[s] "
             "(dotted); a stage is refilled as soon as its E, a K tile read as soon as its F, "
             "and no __syncthreads makes the warpgroups wait for each other. Stage s's k-th "
             f"use is phase k of both its barriers: the consumers wait on full[s] with parity "
             f"{nb('k & 1')}, the producer on empty[s] with {nb('(k & 1) ^ 1')}. Dashed: one "
             "tile per block, so the epilogue, the block's exit and the next block's first "
             "copies leave the tensor cores idle (chapter 10)."),
    ], width=150, size=11)
    canvas.save(figures, "concept_09_roles.png")


def tile_order_panels(canvas, k, sms, gx, gy, tm, tn, size=8192, cell=4):
    """The first `sms` tiles of a size^3 product, one per block, in the grouped order and row by
    row, with the rows of A and columns of B they read. Returns {grouped: (rows, columns)}."""
    tiles_m, tiles_n = size // tm, size // tn
    cmap = plt.get_cmap("cividis")
    reads = {}
    for panel, grouped in enumerate([True, False]):
        px = gx + panel * (tiles_n * cell + 60)
        canvas.rect(px, gy, tiles_n * cell, tiles_m * cell, face="#eeeeee", edge=GRID, lw=1)
        rows, cols = set(), set()
        for tile in range(sms):
            r, c = (tile_origin(k, tiles_m, tiles_n, tile) if grouped
                    else divmod(tile, tiles_n))
            rows.add(r)
            cols.add(c)
            canvas.rect(px + c * cell, gy + r * cell, cell, cell, face=cmap(tile / sms),
                        edge="none", lw=0)
        for r in rows:  # the rows of A and columns of B these tiles read
            canvas.rect(px - 9, gy + r * cell, 6, cell, face=A_COLOR, edge="none", lw=0)
        for c in cols:
            canvas.rect(px + c * cell, gy - 9, cell, 6, face=B_COLOR, edge="none", lw=0)
        if grouped:
            group = k["group_tile_rows"]
            for g in range(1, tiles_m // group):
                canvas.line([px - 4, px + tiles_n * cell + 4], [gy + g * group * cell] * 2,
                            color="black", lw=1.2)
        title = f"grouped ({k['group_tile_rows']} tile rows)" if grouped else "row by row"
        canvas.text(px + tiles_n * cell / 2, gy - 22, title, size=11, ha="center")
        canvas.text(px + tiles_n * cell / 2, gy + tiles_m * cell + 10,
                    f"{len(rows) * tm} rows of A,\n{len(cols) * tn} columns of B", size=10,
                    ha="center", va="top")
        reads[grouped] = (len(rows) * tm, len(cols) * tn)
    return reads


def concept_10_tile_scheduler(k, sms, figures):
    """Chapter 10: chapter 09's block made persistent, one per SM, walking tiles b, b + grid, ...
    in a grouped order, its result leaving through swizzled staging boxes and TMA stores that
    overlap the next tile's main loop."""
    stages, consumers = k["ch10_stages"], k["ch10_consumers"]
    tm, tn = k["ch10_block_tile_m"], k["ch10_block_tile_n"]
    wm = k["wgmma_m"]
    box_cols, buffers = k["store_box_columns"], k["store_buffers"]
    boxes = tn // box_cols
    box_kib = k["store_box_bytes"] // 1024
    group = k["group_tile_rows"]
    size = 8192
    canvas = Canvas(1400, 1000, "Chapter 10: persistent blocks, a grouped tile order, and TMA "
                                "stores under the next tile's work")
    x0 = 40

    # The tile order, top right, and what it and the persistent block do, top left.
    reads = tile_order_panels(canvas, k, sms, 1040, 118, tm, tn, size=size)
    canvas.text(1030, 62, f"The first {sms} tiles at {size}^3", size=13, weight="bold")
    (rows_g, cols_g), (rows_r, cols_r) = reads[True], reads[False]
    notes(canvas, x0, 70, [
        ("Persistent", f"{sms} blocks, one per SM ({sms} SMs on the H100 of the results). "
         f"Block b computes tiles b, b + {sms}, b + {2 * sms}, ... of C. Its producer and "
         "consumers keep their stage and phase counters from one tile to the next, so the "
         "producer fills the ring with the next tile's K tiles while the consumers finish the "
         "last one."),
        ("Grouped order", f"Tiles are numbered in groups of {group} tile rows, column by column "
         f"inside a group. The {sms} tiles in flight at once (right, dark to light) then read "
         f"{rows_g} rows of A and {cols_g} columns of B; row by row they would read {rows_r} "
         f"rows of A and {cols_r} columns of B. What they share, they find in L2."),
        ("The epilogue through TMA (the plain product, kStore)", f"Each consumer writes its "
         f"{wm} x {tn} fp32 result {box_cols} columns at a time, a {box_kib} KiB box, "
         f"swizzled, into one of its {buffers} staging buffers; one of its threads starts the "
         "box's TMA store and the warpgroup writes the next box into the other buffer (after "
         "the store two boxes back has read it: cp.async.bulk.wait_group.read). The training's "
         "fused epilogues keep chapter 08's stores."),
    ], width=104, size=11, gap=8)

    # The schematic run: one block, two tiles.
    k_tiles, issue, latency, wgmma, write, store = 6, 0.15, 2.6, 1.0, 0.4, 0.4
    # Box j is written once the store of box j - buffers has read its buffer (bulk_wait_read).
    writes, t = [], 0.0
    for box in range(boxes):
        if box >= buffers:
            t = max(t, writes[box - buffers] + write + store)
        writes.append(t)
        t += write
    epilogue = t
    run = simulate_roles(stages, k_tiles, 2, latency=latency, wgmma=wgmma, epilogue=epilogue,
                         issue=issue)
    epilogues = run[5]
    horizon = epilogues[-1][1] + store + 0.2
    tx0, tw = x0 + 200, 1400 - 40 - 240
    unit = tw / horizon
    X = lambda t: tx0 + t * unit  # noqa: E731
    ty, rh = 500, 42
    canvas.text(x0, ty - 26, "One block over time: tiles b and b + grid (schematic, not to "
                "scale)", size=13, weight="bold")
    roles_rows(canvas, x0, ty, tx0, tw, rh, ["producer (thread 0)"] +
               [f"stage {s}" for s in range(stages)] +
               [f"consumers ({consumers} warpgroups)"] +
               [f"staging buffer {b}" for b in range(buffers)])
    draw_roles_run(canvas, X, unit, ty, rh, stages, k_tiles, run, issue)
    cons_y = ty + (stages + 1) * rh
    for j, (a, _) in enumerate(epilogues):
        for box in range(boxes):
            w0 = a + writes[box]
            canvas.rect(X(w0), cons_y + 5, write * unit, rh - 10,
                        face=tint(EPILOGUE_COLOR, 0.55), edge=EPILOGUE_COLOR, lw=0.8,
                        text=str(box), size=9)
            by = cons_y + (1 + box % buffers) * rh + 5
            canvas.rect(X(w0), by, write * unit, rh - 10, face=tint(EPILOGUE_COLOR, 0.55),
                        edge=EPILOGUE_COLOR, lw=0.8, text=str(box), size=9)
            canvas.rect(X(w0 + write), by, store * unit, rh - 10, face=tint(COPY_COLOR, 0.55),
                        edge=GRID, lw=0.6, hatch="//")
        canvas.text(X(run[2][j * k_tiles]), ty + (stages + 4) * rh + 12,
                    "tile b" if j == 0 else "tile b + grid", size=10, color="#444444")
    # The first tile's epilogue: the producer's next copies and the stores under way.
    a = epilogues[0][0]
    b = epilogues[0][1] + store
    canvas.rect(X(a), ty + 2, (b - a) * unit, (stages + 4) * rh - 4, edge="black", lw=1.5,
                linestyle="--", zorder=6)

    ly = ty + (stages + 4) * rh + 44
    swatches(canvas, x0, ly, [(COPY_COLOR, "TMA load issued"),
                              (tint(COPY_COLOR, 0.55), "TMA load or store in flight"),
                              (tint(COPY_COLOR, 0.2), "landed, not yet read"),
                              (tint(MMA_COLOR, 0.55), "read by the wgmmas"),
                              (tint(EPILOGUE_COLOR, 0.55), "box written to staging")],
             spacing=24)
    notes(canvas, x0, ly + 34, [
        ("", "Numbers: the K tile within its tile of C; in the epilogue, the box of "
             f"{box_cols} columns. F and E: full[s] and empty[s] complete a phase. Dashed: while "
             "the consumers write the first tile's boxes, the producer has already loaded the "
             "next tile's first K tiles, and the last stores are still leaving when the next "
             "tile's wgmmas start: chapter 09's idle gap between blocks is gone."),
    ], width=150, size=11)
    canvas.save(figures, "concept_10_tile_scheduler.png")


# Chapter 11's header: concept_11 reads it where it exists and is skipped, with a note, before.
CH11_DIR = "chapters/11_clusters"
CH11_HEADER = CH11_DIR + "/gemm.cuh"
CH11_CONSTANTS = {"cluster_blocks": "kClusterBlocks", "block_tile_m": "kBlockTileM",
                  "block_tile_n": "kBlockTileN", "stages": "kStages",
                  "consumer_warps": "kConsumerWarps", "tile_k": "kTileK"}


def concept_11_clusters(k, figures):
    """Chapter 11: chapter 10's kernel in clusters of two CTAs on two tiles one above the other,
    which share their B tile: each CTA loads its own A tile and half of B, multicast into both
    CTAs' shared memory; a stage's empty barrier collects the consumers of both."""
    if not os.path.isdir(os.path.join(ROOT, CH11_DIR)):
        print(f"skipped concept_11_clusters.png: no {CH11_DIR} yet (drawn from {CH11_HEADER} "
              "once the chapter exists)")
        return
    c = {key: read_constant(CH11_HEADER, name) for key, name in CH11_CONSTANTS.items()}
    if c["cluster_blocks"] != 2:
        error(f"concept_11 draws clusters of 2 CTAs; {CH11_HEADER} says kClusterBlocks = "
              f"{c['cluster_blocks']}")
    tm, tn, tile_k, stages = c["block_tile_m"], c["block_tile_n"], c["tile_k"], c["stages"]
    cwarps = c["consumer_warps"]
    half = tn // 2
    a_kib, half_kib = tm * tile_k * 2 // 1024, half * tile_k * 2 // 1024
    stage_kib = a_kib + 2 * half_kib
    own_kib = a_kib + half_kib
    rank_colors = [OKABE_ITO["green"], OKABE_ITO["purple"]]
    canvas = Canvas(1400, 880, "Chapter 11: two CTAs of a cluster share their B tile, each "
                               "loading half of it for both")
    x0 = 40

    # Global memory (L2): the pair's two A tiles and the two halves of its B tile.
    gy, gh = 96, 80
    canvas.rect(x0, gy - 30, 960, gh + 60, face="#f4f4f4", edge=GRID, lw=1.2)
    canvas.text(x0 + 12, gy - 14, "global memory (through L2), K tile t of the pair", size=12,
                weight="bold")
    cta_x = [x0, x0 + 500]  # the CTAs' boxes
    slot_x = [20, 150, 280]  # A, B half 0, B half 1 inside a CTA box
    slot_w = 120
    sources = {"A0": (x0 + 30, f"A: rows of tile 0\n{tm} x {tile_k}", A_COLOR, 0.3),
               "B0": (x0 + 330, f"B half 0: columns\n0-{half - 1}, {half} x {tile_k}", B_COLOR,
                      0.5),
               "B1": (x0 + 520, f"B half 1: columns\n{half}-{tn - 1}, {half} x {tile_k}",
                      B_COLOR, 0.25),
               "A1": (x0 + 800, f"A: rows of tile 1\n{tm} x {tile_k}", A_COLOR, 0.3)}
    for name, (sx, label, color, amount) in sources.items():
        canvas.rect(sx, gy + 8, 140, gh - 16, face=tint(color, amount), edge=color, lw=1.4,
                    text=label, size=10)

    # The two CTAs: the same stage layout in both, their barriers, producers and consumers.
    cy, ch = 330, 270
    for r in range(2):
        bx = cta_x[r]
        canvas.rect(bx, cy, 460, ch, face=tint(rank_colors[r], 0.06), edge=rank_colors[r],
                    lw=2)
        canvas.text(bx + 230, cy + ch + 16, f"CTA {r} (%cluster_ctarank = {r}): tile {r} of the "
                    "pair", size=12, weight="bold", ha="center", color=rank_colors[r])
        canvas.text(bx + 20, cy + 128, f"stage s (of {stages}, {stage_kib} KiB), at the same "
                    "address in both CTAs", size=10, color="#444444")
        for j, (label, color, amount) in enumerate([
                (f"A tile\n{tm} x {tile_k}\n{a_kib} KiB", A_COLOR, 0.3),
                (f"B half 0\n{half} x {tile_k}\n{half_kib} KiB", B_COLOR, 0.5),
                (f"B half 1\n{half} x {tile_k}\n{half_kib} KiB", B_COLOR, 0.25)]):
            canvas.rect(bx + slot_x[j], cy + 20, slot_w, 84, face=tint(color, amount),
                        edge=color, lw=1.4, text=label, size=10)
        # Producer and consumers on the first row, the barriers under them; the consumers and
        # empty[s] face the other CTA.
        inner = r == 0  # CTA 0's inner side is its right
        prod_x = bx + (20 if inner else 300)
        cons_x = bx + (200 if inner else 20)
        full_x = bx + (20 if inner else 320)
        empty_x = bx + (320 if inner else 20)
        canvas.rect(prod_x, cy + 150, 140, 44, face=tint(COPY_COLOR, 0.45), edge=COPY_COLOR,
                    lw=1.5, text="producer:\nthread 0", size=10)
        canvas.rect(cons_x, cy + 150, 240, 44, face=tint(MMA_COLOR, 0.3), edge=MMA_COLOR,
                    lw=1.5, text=f"consumers: {cwarps} warps\n({cwarps // 4} warpgroups)",
                    size=10)
        canvas.rect(full_x, cy + 222, 120, 32, face="white", edge="black", lw=1.5,
                    text="full[s]", size=11, weight="bold")
        canvas.rect(empty_x, cy + 222, 120, 32, face="white", edge="black", lw=1.5,
                    text="empty[s]", size=11, weight="bold")
        canvas.arrow(prod_x + 70, cy + 195, full_x + 60, cy + 220, color=COPY_COLOR, lw=1.4)
        # Its consumers arrive on its own empty[s] ...
        own = cons_x + (180 if inner else 60)
        canvas.arrow(own, cy + 195, empty_x + 60, cy + 220, color=MMA_COLOR, lw=1.4)
    # ... and on the other CTA's (mbarrier.arrive.release.cluster, at the address mapa gives).
    canvas.arrow(cta_x[0] + 400, cy + 195, cta_x[1] + 60, cy + 220, color=MMA_COLOR, lw=1.4)
    canvas.arrow(cta_x[1] + 60, cy + 195, cta_x[0] + 400, cy + 220, color=MMA_COLOR, lw=1.4)

    # The copies: each CTA's producer loads its A tile, and its half of B multicast into both.
    src_bottom = gy + gh - 8
    dst_top = cy + 18
    for r in range(2):
        ax_, _, _, _ = sources[f"A{r}"]
        canvas.arrow(ax_ + 70, src_bottom, cta_x[r] + slot_x[0] + slot_w / 2, dst_top,
                     color=rank_colors[r], lw=2.0)
        hx, _, _, _ = sources[f"B{r}"]
        for d in range(2):
            canvas.arrow(hx + 70, src_bottom, cta_x[d] + slot_x[1 + r] + slot_w / 2, dst_top,
                         color=rank_colors[r], lw=2.0)
    canvas.text(x0 + 480, gy + gh + 50, "one multicast copy, written into both CTAs", size=10,
                ha="center", color="#444444", style="italic",
                bbox=dict(facecolor="white", edgecolor="none", pad=1))

    swatches(canvas, x0, cy + ch + 54, [(rank_colors[0], "copies CTA 0's producer issues"),
                                        (rank_colors[1], "CTA 1's"),
                                        (COPY_COLOR, "the producer's arrival on full[s]"),
                                        (MMA_COLOR, "arrivals on empty[s]")], spacing=34)
    notes(canvas, x0, cy + ch + 96, [
        ("full[s], in each CTA", f"1 arrival (its producer's expect_tx of {stage_kib} KiB) and "
         f"the bytes: {own_kib} KiB from its own copies, {half_kib} KiB from the other CTA's "
         "multicast, which may land before the expect_tx and still counts."),
        ("empty[s], in each CTA", f"{2 * cwarps} arrivals: one from each of its {cwarps} "
         f"consumer warps and one from each of the other CTA's {cwarps}. A multicast refills "
         "stage s in both CTAs at once, so neither producer may start before the consumers of "
         "both are done with it."),
    ], width=120, size=11, gap=6)

    # Right: the pair of tiles in C, and what the cluster saves.
    px, py = 1060, 100
    canvas.text(px, py - 34, "The pair of tiles in C", size=13, weight="bold")
    e = 0.9
    for h in range(2):
        canvas.rect(px + 40 + h * half * e, py, half * e, tile_k * e,
                    face=tint(B_COLOR, 0.5 if h == 0 else 0.25), edge=B_COLOR, lw=1.2,
                    text=f"B half {h}", size=9)
    for r in range(2):
        canvas.rect(px, py + tile_k * e + 12 + r * tm * e, 28, tm * e,
                    face=tint(A_COLOR, 0.3), edge=A_COLOR, lw=1.2, text="A", size=9)
        canvas.rect(px + 40, py + tile_k * e + 12 + r * tm * e, tn * e, tm * e,
                    face=tint(rank_colors[r], 0.2), edge=rank_colors[r], lw=1.5,
                    text=f"tile {r}: CTA {r}\n{tm} x {tn}", size=10)
    bottom = py + tile_k * e + 12 + 2 * tm * e
    notes(canvas, px, bottom + 30, [
        ("", f"Two tiles one above the other: the same {tn} columns of B, different rows of A. "
             f"Alone, each CTA would read {stage_kib} KiB per K tile from L2; in the cluster it "
             f"reads {own_kib} KiB and still receives all {stage_kib} KiB."),
        ("", "The cluster's two CTAs run at the same time on SMs of one GPC and can write and "
             "arrive on each other's shared memory."),
    ], width=40, size=10, gap=4)
    canvas.save(figures, "concept_11_clusters.png")


def concept_12(k, figures):
    """Swap AB (the weights on wgmma's M, the batch on its N) and the split-K sum by the last
    block to arrive, in a fixed order, for an example product of the trainer."""
    wm, tile_k, max_batch = k["wgmma_m"], k["tile_k"], k["ch12_max_batch"]
    dispatch = "chapters/12_swap_ab/tiles.cuh"
    found = re.search(r"constexpr int kBatchTiles\[\] = \{([\d, ]+)\};",
                      open(os.path.join(ROOT, dispatch)).read())
    if not found:
        error(f"{dispatch}: no constexpr int kBatchTiles[] = {{...}}; for concept_12")
    batch_tiles = [int(v) for v in found.group(1).split(",")]
    batch, outputs, inputs, splits = 32, 512, 1024, 4  # the example: Y = X W^T at batch 32
    if splits > k["ch12_max_splits"] or batch > max_batch or batch not in batch_tiles:
        error("concept_12: the example no longer fits chapters 12 and 13's limits")
    tiles = outputs // wm
    canvas = Canvas(1400, 760, "Chapters 12 and 13: the batch on wgmma's N, and K split inside the "
                               "kernel")

    # Left: C and C^T.
    x0, y0 = 40, 90
    canvas.text(x0, y0, f"Swap AB: Y = X W^T at batch {batch}, {inputs} inputs, {outputs} "
                "outputs", size=13, weight="bold")
    cw, ch = 400, 28  # C: batch x outputs, drawn 400 wide
    cy = y0 + 50
    matrix_label(canvas, x0, cy, cw, ch, f"C = Y: {batch} x {outputs}", C_COLOR)
    rows08 = k["ch09_block_tile_m"]
    canvas.text(x0, cy + ch + 22, f"a block tile of chapter 10 ({rows08} rows of C) would hold "
                f"{batch} rows of batch and {rows08 - batch} of nothing", size=10)
    tx, ty, tw, th = x0 + 70, cy + 110, ch, cw  # C^T: outputs x batch, drawn 400 tall
    matrix_label(canvas, tx, ty, tw, th, "C^T", C_COLOR)
    canvas.arrow(x0 + 40, cy + ch + 34, tx + tw / 2, ty - 22, rad=0.2)
    canvas.text(x0 + 100, cy + 72, "C^T = W X^T", size=11, weight="bold")
    step = th / tiles
    for i in range(tiles):
        face = tint(MMA_COLOR, 0.55) if i == 2 else "none"
        canvas.rect(tx, ty + i * step, tw, step, face=face, edge=C_COLOR, lw=0.8)
    canvas.text(tx - 8, ty + th / 2, f"{outputs} rows:\nthe outputs", size=10, ha="right")
    canvas.text(tx + tw / 2, ty + th + 16, f"{batch}: the batch", size=10, ha="center")
    notes(canvas, tx + tw + 24, ty + 2 * step - 8, [
        (f"A block tile of C^T: {wm} x {batch}",
         f"wgmma's M, {wm} rows, are {wm} of the weights' rows (op(B)^T, the \"A\" operand); "
         f"its N is the batch tile (op(A)^T, the \"B\" operand): "
         f"{', '.join(map(str, batch_tiles[:-1]))} or {batch_tiles[-1]}, the smallest that "
         f"holds the batch. {tiles} tiles for {outputs} outputs."),
        ("The same bytes in memory", "TMA copies both operands as they are stored; only the "
         "epilogue knows that element (r, q) of the accumulators is C[q][r]."),
    ], width=44, size=11)

    # Right: the splits of one tile and the last arrival's sum.
    rx, ry = 760, 90
    k_per = inputs // splits
    canvas.text(rx, ry, f"One tile, K = {inputs} split {splits} ways: one block per split",
                size=13, weight="bold")
    canvas.text(rx, ry + 22, f"({k_per} of K each, {k_per // tile_k} K tiles of {tile_k})",
                size=11)
    arrival = [2, 0, 3, 1]  # an example order in which the splits finish
    by, bh = ry + 50, 34
    for s in range(splits):
        y = by + s * (bh + 12)
        canvas.text(rx, y + bh / 2, f"split {s}", size=11)
        w = 160 + 34 * arrival.index(s)  # the later it arrives, the longer its box
        canvas.rect(rx + 70, y, w, bh, face=tint(MMA_COLOR, 0.45), edge=MMA_COLOR,
                    text=f"K {s * k_per}-{(s + 1) * k_per - 1}: wgmma", size=10)
        canvas.rect(rx + 70 + w, y, 70, bh, face=tint(COPY_COLOR, 0.5), edge=COPY_COLOR,
                    text="store", size=10)
        order = arrival.index(s)
        last = order == splits - 1
        canvas.text(rx + 70 + w + 78, y + bh / 2, f"its add returns {order}" +
                    (" = S - 1" if last else ""), size=10, weight="bold" if last else None)
    wy = by + splits * (bh + 12) + 40
    canvas.text(rx, wy - 14, f"workspace: {splits} partial tiles of fp32 ({wm} x {batch})",
                size=11, weight="bold")
    slab_w = 120
    for s in range(splits):
        canvas.rect(rx + s * (slab_w + 10), wy, slab_w, 40, face=tint(C_COLOR, 0.25),
                    edge=C_COLOR, text=f"slab {s}", size=10)
    sy = wy + 80
    canvas.rect(rx, sy, 4 * slab_w + 30, 52, face=tint(EPILOGUE_COLOR, 0.3),
                edge=EPILOGUE_COLOR, text="the last block: slab 0 + slab 1 + slab 2 + slab 3, "
                "in that order;\nthen the epilogue, once, and the counter back to 0", size=10)
    for s in range(splits):
        canvas.arrow(rx + s * (slab_w + 10) + slab_w / 2, wy + 42,
                     rx + s * (slab_w + 10) + slab_w / 2, sy - 2, lw=1.0)
    notes(canvas, rx, sy + 80, [
        ("", "Each block stores its partial tile, fences, and adds 1 to the tile's counter. The "
             "block whose add returns S - 1 arrived last, whichever split it computed: it sums "
             "the partial tiles. The order of arrival changes from run to run; the order of the "
             "sum does not, so every run gives the same bits, and no second kernel is launched."),
    ], width=78, size=11)
    canvas.text(rx, 720, "An example: the split count and the order of arrival are", size=10,
                color=GRID)
    canvas.text(rx, 738, "illustrations; plan_split picks the splits of each product.", size=10,
                color=GRID)
    canvas.save(figures, "concept_12_swap_ab_split_k.png")


# The measurements concept_15 draws to scale: the files and the rows it reads.
CH10_PHASES = "docs/results/alternatives/persistent_step/grid_sync_phases_side_by_side.csv"
CH10_SYNC = "docs/results/alternatives/persistent_step/grid_sync_costs.csv"
CH09_STEPS = "docs/results/comparison_09_10/steps_last_epoch.csv"
CH10_MODEL, CH10_BATCH, CH10_BLOCKS = "784-128-128-128-10", 32, 116


def read_rows(path, **where):
    """The rows of the CSV at `path` whose columns equal `where`'s values (as text)."""
    full = os.path.join(ROOT, path)
    if not os.path.exists(full):
        error(f"{path} is missing")
    with open(full, newline="") as f:
        rows = [r for r in csv.DictReader(f)
                if all(r.get(key) == str(value) for key, value in where.items())]
    if not rows:
        error(f"{path} has no row with {where}")
    return rows


def concept_15(k, figures):
    """One step of chapter 14's CUDA graph against one of chapter 15's persistent kernel, on one
    time axis, from the measurements: the step times, the graph node and the grid barrier from
    bench/sync_costs, the phases read with clock64 (784-128-128-128-10 at batch 32)."""
    tile_m, tile_n = k["ch15_tile_m"], k["ch15_tile_n"]
    hidden = [int(w) for w in CH10_MODEL.split("-")]
    ch09 = read_rows(CH09_STEPS, chapter="09_swap_ab_split_k", layers=CH10_MODEL,
                     batch=CH10_BATCH)[0]
    ch09_us, kernels = 1000 * float(ch09["ms_per_step"]), int(ch09["kernels_per_step"])
    node_us = float(read_rows(CH10_SYNC, what="graph")[0]["us_each"])
    barrier_us = float(read_rows(CH10_SYNC, what="barrier", scheme="release_acquire",
                                 blocks=CH10_BLOCKS)[0]["us_each"])
    phase_rows = read_rows(CH10_PHASES, batch=CH10_BATCH, hidden=hidden[1])
    phases = [(r["phase"], float(r["after_us"])) for r in phase_rows if r["phase"] != "step"]
    ch10_us = sum(us for _, us in phases)

    def tiles(rows, cols):
        return -(-rows // tile_m) * -(-cols // tile_n)

    layers = len(hidden) - 1
    busy = [tiles(CH10_BATCH, hidden[l + 1]) for l in range(layers)] + [1]  # forward, loss
    for j in range(layers):  # backward phase j: dX of layer L-1-j, SGD of layer L-j (and 0)
        data, units = layers - 1 - j, 0
        if data >= 1:
            units += tiles(CH10_BATCH, hidden[data])
        updates = ([layers - j] if j >= 1 else []) + ([0] if data == 0 else [])
        units += sum(tiles(hidden[u + 1], hidden[u]) for u in updates)
        busy.append(units)
    if len(busy) != len(phases):
        error(f"concept_15: {len(phases)} phases in {CH10_PHASES}, {len(busy)} in the model")

    rows_drawn, row_h, x0, scale = 6, 22, 150, 19.0  # scale: pixels per microsecond
    canvas = Canvas(1400, 700, "Chapter 15: one launch for every step, grid barriers between "
                               "its phases")

    def timeline(y, label, sub):
        canvas.text(40, y - 48, label, size=13, weight="bold")
        canvas.text(40, y - 24, sub, size=11)
        for b in range(rows_drawn):
            canvas.text(x0 - 10, y + b * row_h + row_h / 2, f"block {b}", size=10, ha="right")
        canvas.text(x0 - 10, y + rows_drawn * row_h + 10, "...", size=10, ha="right")

    # Chapter 14: a kernel per piece of the step, a graph node's drain and start between them.
    y9 = 110
    timeline(y9, "Chapter 14, a step as a CUDA graph:",
             f"{kernels} kernels, {ch09_us:.1f} µs a step (measured, {ch09['date']}); each kernel "
             f"drawn the same length, {node_us:.2f} µs of it between kernels (an empty graph "
             "node, bench/sync_costs)")
    slot = ch09_us / kernels
    for i in range(kernels):
        start = x0 + i * slot * scale
        canvas.rect(start, y9 - 6, node_us * scale, rows_drawn * row_h + 6,
                    face=tint(OKABE_ITO["grey"], 0.35), edge="none")
        for b in range(rows_drawn):
            canvas.rect(start + node_us * scale, y9 + b * row_h + 3, (slot - node_us) * scale,
                        row_h - 6, face=tint(MMA_COLOR, 0.45), edge=MMA_COLOR, lw=0.6)

    # Chapter 15: phases, each the tiles of its products, a barrier at its end.
    y10 = 350
    timeline(y10, "Chapter 15, the persistent step:",
             f"{len(phases)} phases, {ch10_us:.1f} µs a step (clock64 per phase, 2026-11-24); "
             f"{CH10_BLOCKS} blocks, a grid barrier of {barrier_us:.2f} µs after each phase")
    t = 0.0
    for (name, us), units in zip(phases, busy):
        start = x0 + t * scale
        work = max(us - barrier_us, 0.2)
        for b in range(rows_drawn):
            y = y10 + b * row_h + 3
            if b < units:
                canvas.rect(start, y, work * scale, row_h - 6, face=tint(MMA_COLOR, 0.45),
                            edge=MMA_COLOR, lw=0.6)
            else:
                canvas.line([start, start + work * scale], [y + row_h / 2 - 3] * 2,
                            color=GRID, lw=0.8, linestyle=":")
        bx = start + work * scale
        canvas.rect(bx, y10 - 6, barrier_us * scale, rows_drawn * row_h + 6,
                    face=tint(COPY_COLOR, 0.5), edge="none")
        label = name.replace("forward ", "fwd ").replace("backward ", "bwd ")
        canvas.text(start + us * scale / 2, y10 + rows_drawn * row_h + 22, label, size=10,
                    ha="center")
        canvas.text(start + us * scale / 2, y10 + rows_drawn * row_h + 40,
                    "block 0" if name == "loss" else f"{units}", size=10, ha="center", color=GRID)
        t += us
    canvas.text(x0 - 10, y10 + rows_drawn * row_h + 40, "tiles", size=10, ha="right",
                color=GRID)
    end10 = x0 + ch10_us * scale
    canvas.text(end10 + 8, y10 + rows_drawn * row_h / 2, "next step\nat once, no\nlaunch",
                size=10, va="center")

    # The time axis, shared.
    ya = 560
    canvas.line([x0, x0 + ch09_us * scale], [ya, ya], color="black", lw=1.0)
    for us in range(0, int(ch09_us) + 1, 10):
        canvas.line([x0 + us * scale] * 2, [ya - 4, ya + 4], color="black", lw=1.0)
        canvas.text(x0 + us * scale, ya + 16, f"{us} µs", size=10, ha="center")
    swatches(canvas, x0, ya + 52,
             [(tint(MMA_COLOR, 0.45), "a block's tiles (a kernel's work, above)"),
              (tint(OKABE_ITO["grey"], 0.35), "between kernels"),
              (tint(COPY_COLOR, 0.5), "grid barrier"),
              ("white", "...... a block with no tile, waiting")], spacing=30)
    canvas.text(x0, ya + 90, "Measured: the step times, the phases' lengths, the barrier and "
                "the graph node (two runs a day apart; the docs' tables hold the comparisons).",
                size=11)
    canvas.text(x0, ya + 112, "Not measured: how a phase's or a kernel's time divides among "
                "its blocks; each busy block is drawn for the whole phase less the barrier.",
                size=11)
    canvas.save(figures, "concept_15_persistent_step.png")


# Chapter 17's model and its header, whose constants and layout concept_17 draws.
CH17_HEADER = "chapters/17_cluster_model/layout.cuh"
CH17_MODEL = [784, 128, 128, 128, 10]


def model_layout_bytes(c, sizes):
    """The bytes of each kind of buffer in a block's shared memory, as model_layout() in
    chapters/17_cluster_model/layout.cuh takes them (16-byte aligned), for the model `sizes`."""
    def take(n):
        return -(-n // 16) * 16
    rows, pad, pixels = c["rows"], c["pad"], c["pixels"]
    parts = {"batch": take(rows * (pixels + pad) * 2), "fp16 weights": 0, "fp32 masters": 0,
             "X of layers 1..L-1": 0, "dZ, bias, logits": 0, "partial products": 0}
    layers, partial_cols = len(sizes) - 1, 0
    for l in range(layers):
        hidden = l + 1 < layers
        own = sizes[l + 1] // c["blocks"] if hidden else c["classes"]
        rows16 = c["classes_padded"] if not hidden else (-(-own // 8) * 8 if l == 0 else 16)
        parts["fp16 weights"] += take(rows16 * (sizes[l] + pad) * 2)
        if l > 0:
            parts["fp32 masters"] += take(own * sizes[l] * 4)
            parts["X of layers 1..L-1"] += take(rows * (sizes[l] + pad) * 2)
        parts["dZ, bias, logits"] += take(c["classes_padded"] * 4) + take(rows * c["dz_stride"] * 2)
        if l + 2 < layers:
            partial_cols = max(partial_cols, own)
    parts["dZ, bias, logits"] += take(rows * c["classes"] * 4)
    parts["partial products"] = 2 * take(c["blocks"] * rows * partial_cols * 4)
    parts["K-split sums"] = take(8 * 16 * 8 * 4)
    return parts


def concept_17(k, figures):
    """Chapter 17: one cluster of 16 blocks holds the model; a forward layer's own columns go
    into every block's X by stores into distributed shared memory, then a cluster barrier; the
    partial products of a backward layer go to their columns' owners; a step's barriers."""
    names = {"blocks": "kClusterBlocks", "rows": "kOnChipRows", "pad": "kPad",
             "classes_padded": "kClassesPadded", "dz_stride": "kDzStride",
             "limit": "kOnChipSmemLimit"}
    c = {key: read_constant(CH17_HEADER, name) for key, name in names.items()}
    c["pixels"], c["classes"] = CH17_MODEL[0], CH17_MODEL[-1]
    parts = model_layout_bytes(c, CH17_MODEL)
    blocks, own = c["blocks"], CH17_MODEL[1] // c["blocks"]
    model = "-".join(str(w) for w in CH17_MODEL)
    canvas = Canvas(1400, 860, "Chapter 17: the model in one cluster's shared memory, the "
                               "blocks storing into each other's")
    # The cluster: 16 blocks in a row, each with its own rows of every hidden layer.
    x0, y0, bw, gap = 60, 160, 70, 10
    sender = 2
    canvas.text(x0, 70, f"one cluster of {blocks} blocks ({model}, batch {c['rows']}): block b "
                f"owns rows [{own}b, {own}b + {own}) of each hidden layer", size=12, weight="bold")
    for b in range(blocks):
        bx = x0 + b * (bw + gap)
        color = OKABE_ITO["vermillion"] if b == sender else GRID
        canvas.rect(bx, y0, bw, 120, face=tint(C_COLOR, 0.08), edge=color,
                    lw=2.2 if b == sender else 1.0)
        canvas.text(bx + bw / 2, y0 + 14, f"block {b}", size=10, ha="center", weight="bold")
        canvas.rect(bx + 8, y0 + 28, bw - 16, 30, face=tint(A_COLOR, 0.35), edge=A_COLOR,
                    lw=0.8, text=f"W rows\n{own * b}-{own * b + own - 1}", size=8)
        canvas.rect(bx + 8, y0 + 66, bw - 16, 44, face=tint(B_COLOR, 0.2), edge=B_COLOR,
                    lw=0.8, text=f"X whole\n{c['rows']} x {CH17_MODEL[1]}", size=8)
        if b != sender:
            sx = x0 + sender * (bw + gap) + bw / 2
            canvas.arrow(sx, y0 - 2, bx + bw / 2, y0 - 2, color=OKABE_ITO["vermillion"],
                         lw=0.9, rad=-0.12 if b > sender else 0.5)
    canvas.text(x0, y0 + 146, f"forward layer l: block {sender} computes Y[:, {own * sender}:"
                f"{own * sender + own}] = ReLU(X W_own^T + b_own) from its own shared memory and "
                f"stores its {c['rows']} x {own} values into X of layer l + 1", size=11)
    canvas.text(x0, y0 + 168, f"in all {blocks} blocks (map_shared_rank), as every block does "
                "for its own columns (arrows: block 2's stores); every block keeps the whole "
                "output layer", size=11)
    canvas.text(x0, y0 + 194, "backward layer l: each block's partial product dZ_own W_own "
                "(every column) goes, column block by column block, to the columns' owner,",
                size=11)
    canvas.text(x0, y0 + 216, f"which adds the {blocks} slots in block order: the same bits "
                "in every run", size=11)

    # One block's shared memory, to scale.
    y1, scale = 450, 1200 / c["limit"]
    total = sum(parts.values())
    canvas.text(x0, y1 - 22, f"a block's shared memory, to scale: {total / 1024:.1f} of "
                f"{c['limit'] // 1024} KiB (model_layout(); the first layer's fp32 masters stay "
                "in global memory)", size=12, weight="bold")
    colors = [COPY_COLOR, A_COLOR, OKABE_ITO["blue"], B_COLOR, EPILOGUE_COLOR, MMA_COLOR,
              OKABE_ITO["grey"]]
    x = x0
    for (name, size), color in zip(parts.items(), colors):
        w = size * scale
        canvas.rect(x, y1, w, 50, face=tint(color, 0.35), edge=color, lw=1.0)
        canvas.text(x + w / 2, y1 + 58 + 34 * (list(parts).index(name) % 2),
                    f"{name}: {size / 1024:.1f} KiB", size=9, ha="center", va="top")
        x += w
    canvas.rect(x0, y1, c["limit"] * scale, 50, edge="black", lw=1.2, linestyle="--")

    # A step: phases, each ending where the next reads what the others stored.
    y2, pw = 660, 118
    layers = len(CH17_MODEL) - 1
    phases = [f"fwd {l}" for l in range(layers - 1)] + \
             [f"output,\nbwd {layers - 2}"] + [f"bwd {l}" for l in range(layers - 3, 0, -1)] + \
             ["bwd 0 (SGD)"]
    canvas.text(x0, y2 - 40, "a step (not to scale): a cluster barrier wherever a block next "
                "reads what the others stored, and at the step's end", size=12, weight="bold")
    x = x0
    for i, name in enumerate(phases):
        canvas.rect(x, y2, pw, 50, face=tint(MMA_COLOR, 0.3), edge=MMA_COLOR, lw=1.0, text=name,
                    size=10)
        x += pw
        canvas.rect(x, y2 - 8, 14, 66, face=tint(COPY_COLOR, 0.8), edge="none")
        x += 24
    swatches(canvas, x0, y2 + 100, [(tint(MMA_COLOR, 0.3), "products from the block's own "
                                     "shared memory"),
                                    (tint(COPY_COLOR, 0.8), "cluster.sync(): barrier.cluster, "
                                     "release and acquire")], spacing=30)
    canvas.text(x0, y2 + 140, f"{len(phases)} cluster barriers a step, each across the {blocks} "
                "blocks of one GPC; chapter 15's step has 2 L = 8 grid barriers, through L2.",
                size=11)
    canvas.save(figures, "concept_17_cluster_model.png")


def concept_18(k, figures):
    """Chapter 18 against chapter 17, one forward exchange of a few blocks over time, schematic:
    stores then the cluster barrier (a fence, then every block waits for the last to arrive)
    against st.async counted off each receiver's mbarrier (a block goes on once its bytes have
    landed)."""
    blocks = k["ch17_blocks"]
    rows_drawn, row_h, x0, unit = 5, 26, 190, 46
    work = [5.0, 6.2, 4.6, 5.6, 5.2]  # a product's length in each block drawn (not measured)
    send, fence, barrier, land = 1.2, 1.6, 1.4, 0.5
    canvas = Canvas(1400, 720, "Chapter 18: a block waits for the bytes it reads, not for the "
                               "cluster")

    def panel(y, title, sub):
        canvas.text(40, y - 52, title, size=13, weight="bold")
        canvas.text(40, y - 28, sub, size=11)
        for b in range(rows_drawn):
            canvas.text(x0 - 12, y + b * row_h + row_h / 2, f"block {b}", size=10, ha="right")
        canvas.text(x0 - 12, y + rows_drawn * row_h + 8, f"... {blocks} in all", size=10,
                    ha="right")

    def bar(x, y, length, color, amount=0.45, hatch=None):
        canvas.rect(x0 + x * unit, y + 4, length * unit, row_h - 8, face=tint(color, amount),
                    edge=color, lw=0.6, hatch=hatch)

    # Chapter 17: product, stores into every block, the barrier's fence, the wait for the last.
    y17 = 130
    panel(y17, "Chapter 17: stores, then cluster.sync()",
           "each block stores its columns into all 16 blocks, then arrives: MEMBAR.ALL.GPU waits "
           "for its stores, and no block goes on before the last has arrived")
    release = max(work) + send + fence
    for b, w in enumerate(work):
        y = y17 + b * row_h
        bar(0, y, w, MMA_COLOR)
        bar(w, y, send, COPY_COLOR, 0.7)
        bar(w + send, y, fence, OKABE_ITO["grey"], 0.5)
        canvas.line([x0 + (w + send + fence) * unit, x0 + release * unit], [y + row_h / 2] * 2,
                    color=GRID, lw=0.9, linestyle=":")
        bar(release + barrier, y, 3.0, MMA_COLOR, 0.25)
    canvas.rect(x0 + release * unit, y17 - 4, barrier * unit, rows_drawn * row_h + 8,
                face=tint(OKABE_ITO["blue"], 0.8), edge="none")
    canvas.text(x0 + (release + barrier / 2) * unit, y17 + rows_drawn * row_h + 22,
                "barrier", size=10, ha="center")

    # Chapter 18: product, st.async to the 15 others; a receiver goes on once its bytes are in.
    y18 = 430
    panel(y18, "Chapter 18: st.async, then each block's own mbarrier",
          "each block sends its columns to the 15 others, each store counting its bytes off the "
          "receiver's mbarrier; a block goes on once the bytes it expects have landed")
    landed = max(w + send for w in work) + land
    for b, w in enumerate(work):
        y = y18 + b * row_h
        bar(0, y, w, MMA_COLOR)
        bar(w, y, send, COPY_COLOR, 0.7)
        canvas.line([x0 + (w + send) * unit, x0 + landed * unit], [y + row_h / 2] * 2,
                    color=GRID, lw=0.9, linestyle=":")
        canvas.rect(x0 + (w + send) * unit, y + row_h - 9, 2.4 * unit, 5,  # the next batch
                    face=tint(OKABE_ITO["yellow"], 0.9), edge="none")
        bar(landed, y, 3.0, MMA_COLOR, 0.25)
    canvas.text(x0 + landed * unit + 4, y18 + rows_drawn * row_h + 22,
                "the last bytes land: the phase completes", size=10)

    ya = 640
    swatches(canvas, x0, ya, [(tint(MMA_COLOR, 0.45), "a block's product"),
                              (tint(COPY_COLOR, 0.7), "its stores to the others"),
                              (tint(OKABE_ITO["grey"], 0.5), "the release fence"),
                              (tint(OKABE_ITO["blue"], 0.8), "cluster barrier"),
                              (tint(OKABE_ITO["yellow"], 0.9), "the next batch's copy"),
                              (tint(MMA_COLOR, 0.25), "the next layer")], spacing=24)
    canvas.text(x0, ya + 40, "Schematic: the lengths are drawn, not measured. The measured "
                "sections of a step, both ways, are in docs/18_on_chip.md.", size=11)
    canvas.save(figures, "concept_18_on_chip.png")


# Chapter 16's block tiles: StepTile<tiles M, tiles N, K tile, chains>, read from its tile.cuh.
CH16_TILE_HEADER = "chapters/16_step_tile/tile.cuh"


def read_step_tile(name):
    """(tiles M, tiles N, K tile, chains) of `using NAME = StepTile<...>;` in chapter 16's tile.cuh."""
    with open(os.path.join(ROOT, CH16_TILE_HEADER)) as f:
        found = re.search(rf"using {name} = StepTile<(\d+), (\d+), (\d+), (\d+)>;", f.read())
    if not found:
        error(f"{CH16_TILE_HEADER}: no `using {name} = StepTile<...>;`")
    return tuple(int(v) for v in found.groups())


def concept_16(k, figures):
    """One warp's steps of 16 along K: chapter 15's one accumulator chain against chapter 16's
    kChains chains; and the weight gradients' 2 x 2 tile of 32 x 32 tiles, a warp's fragments
    shared among them."""
    tile_m, tile_n, mma_m, mma_n, mma_k = (k["ch15_tile_m"], k["ch15_tile_n"], k["mma_m"],
                                           k["mma_n"], k["mma_k"])
    _, _, layer_k, chains = read_step_tile("LayerTile")
    wide_m, wide_n, weight_k, weight_chains = read_step_tile("WeightTile")
    steps = layer_k // mma_k
    canvas = Canvas(1400, 660, "Chapter 16: the persistent step's tiles, made fast")
    colors = [OKABE_ITO[c] for c in ("vermillion", "blue", "green", "purple")]

    def chain_row(y, title, sub, count):
        canvas.text(40, y - 44, title, size=13, weight="bold")
        canvas.text(40, y - 22, sub, size=11)
        w, gap = 58, 10
        for s in range(steps):
            c = s % count
            x = 60 + s * (w + gap)
            canvas.rect(x, y, w, 34, face=tint(colors[c % len(colors)], 0.35),
                        edge=colors[c % len(colors)], lw=1.2, text=f"k {s * mma_k}", size=10)
            if s >= count:  # waits for the mma `count` steps back: same accumulators
                back = 60 + (s - count) * (w + gap)
                canvas.arrow(back + w / 2, y + 36, x + w / 2, y + 36, color=GRID, lw=1.0,
                             rad=0.35 if count > 1 else 0.6)
        canvas.text(60 + steps * (w + gap) + 10, y + 17, f"{count} set{'s' if count > 1 else ''}"
                    " of accumulators", size=11)

    chain_row(110, "Chapter 15: one chain",
              f"a warp's {mma_m} x {mma_n} mma tile over {layer_k} of K: each mma.sync adds to "
              "the accumulators the one before it wrote, and waits for it", 1)
    chain_row(260, f"Chapter 16: kChains = {chains} chains (LayerTile, K tiles of {layer_k})",
              f"step s goes to chain s % {chains}: an mma waits for the one {chains} back; the "
              "chains are added once, in the epilogue", chains)

    # The weight gradient's tile: wide_m x wide_n tiles of 32 x 32, the same warp in each.
    x0, y0, cell = 60, 420, 3.0
    canvas.text(40, y0 - 40, f"Chapter 16: WeightTile, {wide_m} x {wide_n} tiles of {tile_m} x "
                f"{tile_n} ({wide_m * tile_m} x {wide_n * tile_n} of dW, K = the batch in "
                f"tiles of {weight_k}, {weight_chains} chains)", size=13, weight="bold")
    warps_m, warps_n = tile_m // mma_m, tile_n // mma_n
    for i in range(wide_m):
        for j in range(wide_n):
            tx, ty = x0 + j * tile_n * cell, y0 + i * tile_m * cell
            canvas.rect(tx, ty, tile_n * cell, tile_m * cell, face=tint(C_COLOR, 0.1),
                        edge=C_COLOR, lw=1.6)
            canvas.grid(tx, ty, warps_n, warps_m, mma_n * cell, mma_m * cell, lw=0.4)
            wm, wn = 1, 1  # warp 5 of 8: mma row 1, column 1
            canvas.rect(tx + wn * mma_n * cell, ty + wm * mma_m * cell, mma_n * cell,
                        mma_m * cell, face=tint(MMA_COLOR, 0.6), edge=MMA_COLOR, lw=1.0)
    rx = x0 + wide_n * tile_n * cell + 40
    notes(canvas, rx, y0, [
        ("", f"Warp {warps_n + 1} (shaded) owns the same {mma_m} x {mma_n} mma tile in each of the "
             f"{wide_m * wide_n} tiles: it loads {wide_m} A fragments and {wide_n} B fragments a "
             f"step and issues {wide_m * wide_n} mma.sync with them, where chapter 15 loads one "
             "of each per mma."),
        ("", "A weight gradient is short in K (the batch) and has many tiles: the wide tile "
             "halves the loads per mma where a phase has enough of them for every block; "
             "otherwise the 32 x 32 tile spreads them over more blocks."),
    ], width=92, size=12)
    canvas.save(figures, "concept_16_step_tile.png")


def main():
    figures = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "figures")
    os.makedirs(figures, exist_ok=True)
    sns.set_theme(style="white", font="DejaVu Sans")
    k = read_constants()
    concept_01(k, figures)
    concept_02(k, figures)
    concept_03(k, figures)
    concept_04(k, figures)
    concept_05(k, figures)
    concept_06(k, read_epilogue_kinds(), figures)
    concept_07_tma(k, figures)
    concept_08_wgmma(k, figures)
    concept_09_roles(k, figures)
    concept_10_tile_scheduler(k, read_sm_count(), figures)
    concept_11_clusters(k, figures)
    concept_12(k, figures)
    concept_15(k, figures)
    concept_16(k, figures)
    concept_17(k, figures)
    concept_18(k, figures)


if __name__ == "__main__":
    main()
