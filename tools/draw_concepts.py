#!/usr/bin/env python3
"""Draws the concept figure of each chapter into docs/figures/concept_NN_*.png.

    python3 tools/draw_concepts.py [FIGURES_DIR]

Every size, count and name in the figures comes from the chapters' headers (CONSTANTS: a
namespace-level `constexpr int kName = expression;`, evaluated with the constants it names) or
from the measured CSVs, so that a figure cannot drift from the code it explains; a constant that
is missing or no longer an integer stops the script with an `error:` line. The same inputs give
the same PNG bytes. A figure is a short description over Canvas (boxes, text, arrows, rows of text,
legends, boxes joined by arrows) and Timeline (named rows, bars and bands over time).
"""
import ast
import csv
import functools
import io
import operator
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# The constants the figures use, chapter by chapter, each from the header named before it.
CONSTANTS = """
01_naive: gemm.cuh kBlockSide
02_smem_tiling: gemm.cuh kBlockTileM kBlockTileN kBlockTileK kThreadTileM kThreadTileN kThreadsM
    kThreadsN kThreads smem_tile.cuh kPad
03_mma_sync: mma.cuh kMmaM kMmaN kMmaK gemm.cuh kWarpTileM kWarpTileN
04_cp_async: gemm.cuh kStages kBlockTileK kThreads
05_split_k: split_k.cuh kMinKTilesPerSplit kMaxSplits gemm.cuh kBlockTileM kBlockTileN kBlockTileK
07_tma: gemm.cuh kBlockTileM kBlockTileN kWarpTileM kWarpTileN kWarpsM kWarpsN kMmaTilesM kMmaTilesN
    kStages tma.cuh kTileK kSwizzleBytes kSwizzleAtomBytes
08_wgmma: gemm.cuh kBlockTileM kBlockTileN kWarpgroups kStages wgmma.cuh kWgmmaM kWgmmaN kWgmmaK
    kWarpgroupThreads kAccumulators kWarpgroupRowsBytes
09_warp_specialized: gemm.cuh kBlockTileM kBlockTileN kConsumers kThreads kConsumerWarps kStages
    kLaunchRegisters roles.cuh kProducerRegisters kConsumerRegisters
10_tile_scheduler: gemm.cuh kBlockTileM kBlockTileN kConsumers kStages kGroupTileRows kStoreBoxBytes
    kStoreBuffers tma_store.cuh kStoreBoxColumns
11_clusters: gemm.cuh kClusterBlocks kBlockTileM kBlockTileN kStages kConsumerWarps kTileK
12_swap_ab: tiles.cuh kMaxBatch
13_split_k_in_kernel: split_kernel.cuh kMostSplits
14_weight_update: weight_update.cuh kUpdateTileRows kUpdateTileCols kMaxUpdateKTiles
15_small_tile: tile.cuh kTileM kTileN kTileK kStages kWarps gemm.cuh kMaxTiles kMaxK
18_cluster_model: layout.cuh kClusterBlocks kOnChipRows kPad kClassesPadded kDzStride
    kOnChipSmemLimit
"""
# The epilogue kinds and their one-line descriptions: the enum's comments.
EPILOGUE_HEADER = "common/gemm_interface.cuh"
# SMs of the GPU the results were measured on, as the bench logged it ("..., 132 SMs, ...").
SM_LOG = "docs/results/training/run_log_2026-11-23.txt"
# Chapter 12's batch tiles, chapter 17's block tiles (StepTile<tiles M, tiles N, K tile, chains>).
CH12_DISPATCH = "chapters/12_swap_ab/tiles.cuh"
CH17_TILE_HEADER = "chapters/17_step_tile/tile.cuh"
# The measurements concept_16 draws to scale: the files and the rows it reads.
CH16_PHASES = "docs/results/alternatives/persistent_step/grid_sync_phases_side_by_side.csv"
CH16_SYNC = "docs/results/alternatives/persistent_step/grid_sync_costs.csv"
# Chapter 14's step time comes from the comparison run, its kernels a step from a trainer run that
# prints them (the comparison keeps the trainers' own CSVs at hidden 8192 only).
CH14_STEPS = "docs/results/comparison_14_19/comparison.csv"
CH14_KERNELS = "docs/results/training/small_tile/epochs.csv"
CH16_BATCH, CH16_BLOCKS = 32, 116
# The model whose step concept_16 draws and whose layout concept_18 draws, input to output.
MODEL = [784, 128, 128, 128, 10]

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
GRID = "#555555"
MUTED = "#444444"  # secondary text
PARITY_COLORS = [OKABE_ITO["sky"], OKABE_ITO["yellow"]]  # phases of parity 0 and 1


def error(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------------------------------------
# Reading the constants from the headers.

SIZEOF = {"__half": 2, "float": 4, "uint64_t": 8}


def read_text(path):
    if not os.path.exists(os.path.join(ROOT, path)):
        error(f"{path} is missing")
    with open(os.path.join(ROOT, path)) as file:
        return file.read()


def header_scope(path, scope=None):
    """The header and, depth first, the project headers it includes: where its names resolve."""
    scope = [] if scope is None else scope
    if path not in scope:
        scope.append(path)
        for include in re.findall(r'^#include "([^"]+)"', read_text(path), re.MULTILINE):
            for candidate in (f"chapters/{include}", f"common/{include}"):
                if os.path.exists(os.path.join(ROOT, candidate)):
                    header_scope(candidate, scope)
                    break
    return scope


def definitions(path):
    """{name: expression} of the namespace-level `constexpr int|uint32_t kName = ...;` lines."""
    pattern = r"^constexpr (?:int|uint32_t) (k\w+) = ([^;]+);"
    return dict(re.findall(pattern, read_text(path), re.MULTILINE))


def evaluate(expression, lookup):
    """An integer expression of C++ constants: + - * / % (integer division), sizeof, int()."""
    expression = re.sub(r"int\((sizeof\(\w+\))\)", r"\1", expression)
    for type_name in re.findall(r"sizeof\((\w+)\)", expression):
        if type_name not in SIZEOF:
            raise ValueError(f"no size for {type_name}")
        expression = expression.replace(f"sizeof({type_name})", str(SIZEOF[type_name]))
    operators = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                 ast.Div: operator.floordiv, ast.Mod: operator.mod}

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
    """{name: value} of every constant CONSTANTS lists, each read from the header named before it:
    kBlockTileM of chapters/02_smem_tiling/gemm.cuh as ch02_block_tile_m."""
    k = {}
    for folder, names in re.findall(r"^(\d+_\w+): (.*(?:\n    .*)*)", CONSTANTS, re.MULTILINE):
        for name in names.split():
            if name.endswith(".cuh"):
                header = f"chapters/{folder}/{name}"
            else:
                key = f"ch{folder[:2]}" + re.sub(r"([A-Z])", r"_\1", name[1:]).lower()
                k[key] = read_constant(header, name)
    return k


def pick(k, chapter, names):
    """The constants `names` (space-separated) of chapter `chapter`, in order."""
    return [k[f"ch{chapter:02d}_{name}"] for name in names.split()]


def read_epilogue_kinds():
    """[(kind, comment)] of enum class EpilogueKind, in order."""
    body = re.search(r"enum class EpilogueKind \{(.*?)\};", read_text(EPILOGUE_HEADER), re.DOTALL)
    kinds = re.findall(r"^\s*(k\w+),\s*//\s*(.*)$", body.group(1), re.MULTILINE) if body else []
    if not kinds:
        error(f"no commented kinds in enum class EpilogueKind ({EPILOGUE_HEADER})")
    return kinds


def read_rows(path, **where):
    """The rows of the CSV at `path` whose columns equal `where`'s values (as text)."""
    rows = [r for r in csv.DictReader(io.StringIO(read_text(path)))
            if all(r.get(key) == str(value) for key, value in where.items())]
    if not rows:
        error(f"{path} has no row with {where}")
    return rows


def read_ints(path, pattern, what):
    """The comma-separated integers of the first match of `pattern` in `path`."""
    found = re.search(pattern, read_text(path))
    if not found:
        error(f"{path}: no {what}")
    return [int(v) for v in ",".join(found.groups()).split(",")]


# ---------------------------------------------------------------------------------------------
# Drawing: one Axes over the whole figure, in pixels, y pointing down.

def tint(color, amount=1.0):
    """`color` mixed with white: amount 1 is the colour, 0 white."""
    return tuple(1 - amount * (1 - np.array(to_rgb(color))))


class Canvas:
    def __init__(self, width, height, title):
        self.fig = plt.figure(figsize=(width / DPI, height / DPI), dpi=DPI)
        self.ax = self.fig.add_axes([0, 0, 1, 1])
        self.ax.set(xlim=(0, width), ylim=(height, 0))
        self.ax.axis("off")
        self.text(width / 2, 26, title, 17, "center", weight="bold")

    def rect(self, x, y, w, h, face="none", edge=GRID, lw=1.0, text=None, size=11,
             color="black", hatch=None, linestyle="-", weight=None, zorder=1):
        self.ax.add_patch(Rectangle((x, y), w, h, facecolor=face, edgecolor=edge, linewidth=lw,
                                    hatch=hatch, linestyle=linestyle, zorder=zorder))
        if text is not None:  # over a hatch, on a plain background of the fill colour
            self.text(x + w / 2, y + h / 2, text, size, "center", color=color, weight=weight,
                      zorder=zorder + 1,
                      bbox=dict(facecolor=face, edgecolor="none", pad=1.5) if hatch else None)

    def box(self, x, y, w, h, color, amount=0.3, lw=1.2, edge=None, **kw):
        """A rectangle filled with a tint of `color`, edged with it."""
        self.rect(x, y, w, h, face=tint(color, amount), edge=edge or color, lw=lw, **kw)

    def text(self, x, y, s, size=11, ha="left", va="center", color="black", weight=None,
             zorder=5, **kw):
        self.ax.text(x, y, s, fontsize=size, ha=ha, va=va, color=color, fontweight=weight,
                     zorder=zorder, **kw)

    def bold(self, x, y, s, size=13, **kw):
        self.text(x, y, s, size, weight="bold", **kw)

    def note(self, x, y, s, size=10, ha="left", va="center", **kw):
        """Secondary text: axis numbers, captions."""
        self.text(x, y, s, size, ha, va, color=MUTED, **kw)

    def head(self, x, y, title, sub, **kw):
        self.bold(x, y, title)
        self.text(x, y + 24, sub, **kw)

    def lines(self, x, y, rows, step=24, **kw):
        for i, row in enumerate(rows):
            self.text(x, y + i * step, row, **kw)

    def line(self, xs, ys, color=GRID, lw=1.0, linestyle="-"):
        self.ax.plot(xs, ys, color=color, linewidth=lw, linestyle=linestyle, zorder=2)

    def arrow(self, x0, y0, x1, y1, color="black", lw=1.6, rad=0.0):
        self.ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>", mutation_scale=16,
                          color=color, linewidth=lw, zorder=4, connectionstyle=f"arc3,rad={rad}"))

    def grid(self, x, y, cols, rows, cell_w, cell_h, color=GRID, lw=0.6):
        for c in range(cols + 1):
            self.line([x + c * cell_w] * 2, [y, y + rows * cell_h], color, lw)
        for r in range(rows + 1):
            self.line([x, x + cols * cell_w], [y + r * cell_h] * 2, color, lw)

    def legend(self, x, y, items, size=11, spacing=22):
        """A row of squares, (colour, label) or (colour, tint amount, label), each labelled."""
        for *color, label in items:
            self.rect(x, y - 8, 16, 16, face=tint(*color), lw=0.8)
            self.text(x + 22, y, label, size)
            x += 22 + 0.72 * size * len(label) + spacing

    def flow(self, x, y, h, boxes, gap=54, arrows=True):
        """Boxes (title, body, colour, amount, width) left to right, an arrow between two."""
        for j, (title, body, color, amount, w) in enumerate(boxes):
            if j and arrows:
                self.arrow(x - gap + 2, y + h / 2, x - 4, y + h / 2)
            self.box(x, y, w, h, color, amount, lw=1.8)
            self.text(x + w / 2, y + 20, title, 12, "center", weight="bold")
            self.text(x + w / 2, y + h / 2 + 12, body, ha="center")
            x += w + gap

    def matrix(self, x, y, w, h, name, color):
        self.box(x, y, w, h, color, 0.12, lw=1.5)
        self.text(x + w / 2, y - 12, name, 13, "center", weight="bold", color=color)

    def mark(self, x, y, label, color):
        """A small boxed letter on a timeline: where a barrier's phase completes."""
        self.text(x, y, label, 8, "center", weight="bold", zorder=7, bbox=dict(
            facecolor="white", edgecolor=color, boxstyle="round,pad=0.15", lw=1.2))

    def save(self, figures, name):
        path = os.path.join(figures, name)
        self.fig.savefig(path, dpi=DPI, metadata={"Software": None})  # same drawing, same bytes
        plt.close(self.fig)
        print(f"wrote {path}")


class Timeline:
    """Named rows over time: row r from y + r * row_h, time t at x0 + t * unit."""

    def __init__(self, cv, x0, y, unit, row_h, names, name_x=None, rule=None):
        self.c, self.x0, self.y, self.unit, self.row_h = cv, x0, y, unit, row_h
        for r, name in enumerate(names):  # bold at name_x, or right-aligned before x0
            cv.text(x0 - 10 if name_x is None else name_x, self.mid(r), name,
                    10 if name_x is None else 11, "right" if name_x is None else "left",
                    weight=None if name_x is None else "bold")
            if rule:
                cv.line([x0, x0 + rule], [y + (r + 1) * row_h] * 2, "#dddddd", 0.8)

    def X(self, t):
        return self.x0 + t * self.unit

    def mid(self, r):
        return self.y + (r + 0.5) * self.row_h

    def bar(self, r, t0, t1, color, amount=0.45, pad=4, lw=0.6, **kw):
        self.c.box(self.X(t0), self.y + r * self.row_h + pad, (t1 - t0) * self.unit,
                   self.row_h - 2 * pad, color, amount, lw=lw, **kw)

    def span(self, t0, t1, rows, face, over=3, **kw):
        """A band across rows 0 .. rows - 1 (a barrier, a gap), `over` beyond them."""
        self.c.rect(self.X(t0), self.y - over, (t1 - t0) * self.unit,
                    rows * self.row_h + 2 * over, face=face, edge="none", **kw)

    def frame(self, t0, t1, rows):
        """A dashed frame around rows 0 .. rows - 1 from t0 to t1."""
        self.c.rect(self.X(t0), self.y + 2, (t1 - t0) * self.unit, rows * self.row_h - 4,
                    edge="black", lw=1.5, linestyle="--", zorder=6)

    def wait(self, r, t0, t1):
        self.c.line([self.X(t0), self.X(t1)], [self.mid(r)] * 2, GRID, 0.9, ":")


# ---------------------------------------------------------------------------------------------
# The figures, one function per chapter.

def concept_01(k, figures):
    side, s = k["ch01_block_side"], 8  # s: pixels per element
    m, n, depth = 2 * side, 3 * side, 2 * side  # the matrices drawn: 2 x 3 blocks of C
    ax0, top = 60, 84  # A's left edge, B's top edge
    cx, cy = ax0 + depth * s + 24, top + depth * s + 24  # C's top-left corner
    cv = Canvas(cx + n * s + 40, cy + m * s + 56, "Chapter 01: one thread per element of C")
    row, col = side + 9, side + 5  # thread (5, 9) of block (1, 1)
    cv.matrix(ax0, cy, depth * s, m * s, "A  (M x K)", A_COLOR)
    cv.matrix(cx, top, n * s, depth * s, "B  (K x N)", B_COLOR)
    cv.matrix(cx, cy, n * s, m * s, "C  (M x N)", C_COLOR)
    cv.grid(cx, cy, n // side, m // side, side * s, side * s, C_COLOR, 1)  # its blocks
    cv.grid(cx + side * s, cy + side * s, side, side, s, s, "#bbbbbb", 0.4)
    cv.rect(cx + side * s, cy + side * s, side * s, side * s, edge="black", lw=2.5)
    cv.text(cx + 1.5 * side * s, cy + m * s + 18, f"a block: {side} x {side} threads", ha="center")
    # The thread's row of A and column of B, and its neighbour's (x + 1, grey).
    cv.box(ax0, cy + row * s, depth * s, s, A_COLOR, 1, lw=1)
    cv.box(cx + col * s, top, s, depth * s, B_COLOR, 1, lw=1)
    cv.box(cx + (col + 1) * s, top, s, depth * s, B_COLOR, 0.4, lw=0.5)
    cv.rect(cx + col * s, cy + row * s, s, s, face="black", edge="black", zorder=3)
    cv.rect(cx + (col + 1) * s, cy + row * s, s, s, face="#888888", lw=0.5, zorder=3)
    cv.line([ax0 + depth * s, cx + col * s], [cy + (row + 0.5) * s] * 2, A_COLOR, 1.2, ":")
    cv.line([cx + (col + 0.5) * s] * 2, [top + depth * s, cy + row * s], B_COLOR, 1.2, ":")
    cv.text(ax0 + depth * s / 2, cy + row * s + 22, "its row of A: K values", ha="center",
            color=A_COLOR)
    cv.text(cx + col * s - 10, top + depth * s / 2, "its column\nof B:\nK values\n(grey:\nthread"
            " x + 1's)", ha="right", color=B_COLOR)
    cv.lines(ax0, top + 10, ["thread (x, y) of", "block (bx, by):", f"row = by * {side} + y",
                             f"col = bx * {side} + x"], step=26, size=12, family="monospace")
    cv.save(figures, "concept_01_naive.png")


def concept_02(k, figures):
    tile_m, tile_n, tile_k, tm, tn, threads_m, threads_n, threads, pad = pick(k, 2, "block_tile_m "
        "block_tile_n block_tile_k thread_tile_m thread_tile_n threads_m threads_n threads pad")
    e, k_tiles, now, d = 2.0, 3, 1, tile_k * 2.0  # px per element; K tiles drawn, the current
    ax0, top = 60, 96
    cx, cy, cw, ch = ax0 + k_tiles * d + 34, top + k_tiles * d + 60, tile_n * e, tile_m * e
    cv = Canvas(1400, int(cy + ch + 70),
                "Chapter 02: a block tile through shared memory, a register tile per thread")
    ty, tx = 5, 10  # the thread drawn
    rows0, cols0 = ty * tm, tx * tn  # its rows and columns (MN-major operands)
    for t in range(k_tiles):  # the block's rows of A and columns of B, K tile by K tile
        amount, lw = (0.35, 2.5) if t == now else (0.08, 1)
        cv.box(ax0 + t * d, cy, d, ch, A_COLOR, amount, lw)
        cv.box(cx, top + t * d, cw, d, B_COLOR, amount, lw)
        cv.text(ax0 + (t + 0.5) * d, cy - 12, f"k0 = {t * tile_k}", 10, "center", color=A_COLOR)
        cv.text(cx - 8, top + (t + 0.5) * d, f"k0 = {t * tile_k}", 10, "right", color=B_COLOR)
    cv.bold(ax0 + k_tiles * d / 2, cy - 36, f"op(A): the block's {tile_m} rows, all of K", 12,
            ha="center", color=A_COLOR)
    cv.bold(cx + cw / 2, top - 16, f"op(B): the block's {tile_n} columns, all of K", 12,
            ha="center", color=B_COLOR)
    cv.lines(ax0, top + 10, ["per K step, all", f"{threads} threads copy the", "highlighted "
                             "tiles into", "shared memory,", "__syncthreads, then", f"{tile_k} "
                             "outer products,", "__syncthreads"], step=20)
    cv.box(ax0 + now * d, cy + rows0 * e, d, tm * e, A_COLOR, 1, lw=1)
    cv.box(cx + cols0 * e, top + now * d, tn * e, d, B_COLOR, 1, lw=1)
    cv.matrix(cx, cy, cw, ch, f"block tile of C, {tile_m} x {tile_n}", C_COLOR)
    cv.grid(cx, cy, threads_n, threads_m, tn * e, tm * e, tint(C_COLOR, 0.5), 0.5)
    cv.rect(cx + cols0 * e, cy + rows0 * e, tn * e, tm * e, face=C_COLOR, edge="black", lw=1.5,
            zorder=3)
    cv.text(cx + cw / 2, cy + ch + 16, f"{threads_m} x {threads_n} threads, {tm} x {tn} each",
            ha="center")
    cv.bold(cx + (cols0 + tn) * e + 6, cy + (rows0 + tm / 2) * e, f"thread ({ty}, {tx})", 11,
            bbox=dict(facecolor="white", edgecolor="none", pad=1))
    right, cell, ox, oy = cx + cw + 60, 14, cx + cw + 160, 160  # the thread's outer product
    cv.head(right, 80, f"Thread ({ty}, {tx}), for each k of the tile:", "an outer product in "
            "registers")
    for i in range(tm):
        cv.box(ox - cell - 10, oy + i * cell, cell, cell, A_COLOR, 0.5, lw=1)
    for j in range(tn):
        cv.box(ox + j * cell, oy - cell - 10, cell, cell, B_COLOR, 0.5, lw=1)
    cv.rect(ox, oy, tn * cell, tm * cell, face=tint(C_COLOR, 0.55), edge="black")
    cv.grid(ox, oy, tn, tm, cell, cell, "white", 1)
    cv.text(ox - cell - 18, oy + tm * cell / 2, f"{tm} values\nof A", ha="right", color=A_COLOR)
    cv.text(ox + tn * cell + 14, oy - cell / 2 - 10, f"{tn} values of B", color=B_COLOR)
    cv.text(ox + tn * cell + 14, oy + tm * cell / 2, f"acc[{tm}][{tn}] += a x b:\n{tm * tn} "
            f"multiply-adds from\n{tm + tn} values read from\nshared memory")
    mini, my = 1.25, oy + tm * cell + 80  # which elements a thread owns: the operands' layout
    cv.bold(right, my - 30, f"Which {tm} x {tn}: it depends on the operands' layout", 12)
    for mx, k_major, caption in [
            (right, False, ["MN-major (weight gradient), as", f"drawn left: rows {rows0}-"
                            f"{rows0 + tm - 1},", f"columns {cols0}-{cols0 + tn - 1}"]),
            (right + 270, True, ["K-major (forward pass): rows", f"{ty}, {ty + threads_m}, ..., "
                                 f"{ty + (tm - 1) * threads_m}, {threads_m} apart;",
                                 f"columns {threads_n} apart"])]:
        cv.box(mx, my, tile_n * mini, tile_m * mini, C_COLOR, 0.1, lw=1)
        for r, c in [(ty + i * threads_m, tx + j * threads_n) if k_major else (rows0 + i, cols0 + j)
                     for i in range(tm) for j in range(tn)]:
            cv.box(mx + c * mini - 1.5, my + r * mini - 1.5, 4, 4, "black", 1, lw=0.3, zorder=3)
        cv.lines(mx, my + tile_m * mini + 20, caption, step=20)
    kib = [(tile_m + tile_n) * (tile_k + pad) / 512, tile_k * (tile_m + tile_n + 2 * pad) / 512]
    cv.text(right, my + tile_m * mini + 110, f"shared memory: {kib[0]:g} KiB K-major, {kib[1]:g} "
            f"KiB MN-major\n(rows padded by {pad} halves)", va="top")
    cv.save(figures, "concept_02_tiles.png")


def concept_03(k, figures):
    mm, mn, mk = k["ch03_mma_m"], k["ch03_mma_n"], k["ch03_mma_k"]
    if (mm, mn, mk) != (16, 8, 16):
        error(f"concept_03 draws the PTX fragments of m16n8k16; mma.cuh now says m{mm}n{mn}k{mk}")
    c, x0, y0 = 30, 60, 140  # pixels per element; the ldmatrix panel's corner
    bx, ay = x0 + mk * c + 80, y0 + mm * c + 100  # B (k x n) above C, A (m x k) below ldmatrix
    cv = Canvas(1400, ay + mm * c + 50, f"Chapter 03: which lane holds what in mma.sync.m{mm}n"
                f"{mn}k{mk}, and how ldmatrix.x4 loads it")
    light = [tint(color, 0.38) for color in (A_COLOR, B_COLOR, C_COLOR, EPILOGUE_COLOR)]

    def panel(x, y, rows, cols, title, legend, names, cells, outlines):
        """A fragment: its cells (col, row, width, height, register, text), 8 x 8 outlines."""
        cv.bold(x, y - 54, title)
        cv.legend(x, y - 24, [(light[q], name) for q, name in enumerate(legend)])
        for col, row, w, h, q, text in cells:
            cv.rect(x + col * c, y + row * c, w * c, h * c, face=light[q], edge="white", lw=1.5,
                    text=text)
        for qx, qy in outlines:
            cv.rect(x + qx * 8 * c, y + qy * 8 * c, 8 * c, 8 * c, edge="black", lw=1.5)
        for r in range(rows):
            cv.text(x - 6, y + (r + 0.5) * c, str(r), 9, "right", color="#666666")
        for col in range(cols):
            cv.text(x + (col + 0.5) * c, y + rows * c + 10, str(col), 9, "center", color="#666666")
        cv.text(x - 30, y + rows * c / 2, names[0], ha="center", rotation=90, color=MUTED)
        cv.text(x + cols * c / 2, y + rows * c + 28, names[1], ha="center", color=MUTED)

    lanes = [(lane // 4, lane % 4, str(lane)) for lane in range(32)]  # group g, pair t, lane
    quads = [(q // 2, q % 2) for q in range(4)]  # the 8 x 8 matrices of a 16 x 16 tile
    # ldmatrix.x4 on a K-major 16 x 16 tile of A: lane l names row l % 8 of matrix l / 8.
    panel(x0, y0, mm, mk, "ldmatrix.x4: each lane gives one row's address",
          [f"matrix {q}" for q in range(4)], ("m    (a bar: one row, 8 halves = 16 bytes)", "k"),
          [(l // 16 * 8, l % 16, 8, 1, l // 8, f"lane {l}") for l in range(32)], quads)
    # A: a[q] holds matrix q, rows g (+8), columns 2t, 2t+1 (+8).
    panel(x0, ay, mm, mk, f"A fragment, {mm} x {mk} fp16: the lane holding each pair",
          [f"a[{q}]" for q in range(4)], "mk", [(q // 2 * 8 + 2 * t, q % 2 * 8 + g, 2, 1, q, l)
                                               for g, t, l in lanes for q in range(4)], quads)
    # B: b[0] holds k = 2t, 2t+1 of column g; b[1] the same 8 further in k.
    panel(bx, y0, mk, mn, f"B fragment, {mk} x {mn} fp16 (k x n)", ["b[0]", "b[1]"], "kn",
          [(g, q * 8 + 2 * t, 1, 2, q, l) for g, t, l in lanes for q in range(2)], quads[:2])
    # C: c[0], c[1] row g, columns 2t, 2t+1; c[2], c[3] row g + 8.
    panel(bx, ay, mm, mn, f"C accumulators, {mm} x {mn} fp32", ["c[0], c[1]", "c[2], c[3]"],
          "mn", [(2 * t, h * 8 + g, 2, 1, h, l) for g, t, l in lanes for h in range(2)], quads[:2])
    warp_m, warp_n = k["ch03_warp_tile_m"], k["ch03_warp_tile_n"]
    cv.lines(bx + mn * c + 90, y0 - 40, [
        "a cell's number: the lane holding it;", "lane l: group g = l / 4, pair t = l % 4", "",
        f"per 16 of K, a warp ({warp_m} x {warp_n}) issues", f"{warp_m // mm} ldmatrix.x4 for A, "
        f"{warp_n // mn // 2} for B, {warp_m // mm * warp_n // mn} mma.sync", "",
        'source: PTX ISA, "Matrix Fragments', 'for mma.m16n8k16" and "ldmatrix"'], step=22)
    cv.save(figures, "concept_03_fragments.png")


def ring_timeline(cv, x0, y0, stages, k_tiles, step_w, row_h, label_w, copy_label, phases=False):
    """Stages over K steps as chapters 04 and 07 run them: tile t is copied into stage
    t % stages from step t - (stages - 1) (the prologue for the first stages - 1 tiles) and
    multiplied at step t. With `phases` (chapter 07: TMA issued just after a step starts), each
    copy is coloured by the parity of its use of the stage."""
    lead, px = stages - 1, 4 / step_w  # px: 4 pixels, in steps
    tl = Timeline(cv, x0 + label_w + step_w * 0.8, y0, step_w, row_h,
                  [f"stage {s}" for s in range(stages)], name_x=x0)
    cv.text(x0 + label_w + step_w * 0.4, y0 - 16, "prologue", ha="center", color=MUTED)
    for t in range(k_tiles):
        cv.text(tl.X(t + 0.5), y0 - 16, f"step {t}", ha="center", color=MUTED)
        cv.line([tl.X(t)] * 2, [y0 - 4, y0 + stages * row_h], "#999999", 1, "--")
    for t in range(k_tiles, k_tiles + lead * (not phases)):  # cp.async's empty groups: draining
        cv.rect(tl.X(t - lead + px), y0 + t % stages * row_h + 7, step_w * 0.9, row_h - 14,
                edge="#999999", linestyle=":", text="empty group", size=10, color="#777777")
    for t in range(k_tiles):
        s, start = t % stages, (-0.8 + 1.5 * px if t < lead else t - lead + 0.05 * phases + px)
        tl.bar(s, start, t - px, PARITY_COLORS[t // stages % 2] if phases else COPY_COLOR, 0.55,
               pad=7, lw=1, edge=GRID, hatch="//", text=f"{copy_label} {t}", size=11 - phases)
        tl.bar(s, t + px, t + 1 - px, MMA_COLOR, 0.6, pad=7, lw=1, text=f"mma {t}", weight="bold")
        if phases:  # the phase completes when the bytes have landed: the wait's parity
            cv.text(tl.X(t), y0 + (s + 1) * row_h - 7, f"P{t // stages % 2}", 9, "center", "top",
                    weight="bold", bbox=dict(facecolor="white", boxstyle="round,pad=0.15"))


def concept_04(k, figures):
    stages, tile_k, warps = k["ch04_stages"], k["ch04_block_tile_k"], k["ch04_threads"] // 32
    x0, y0, row_h = 40, 130, 62
    y = y0 + stages * row_h + 36
    cv = Canvas(1400, y + 36, f"Chapter 04: a ring of {stages} shared-memory stages, copies in "
                "flight while the tensor cores work")
    ring_timeline(cv, x0, y0, stages, 8, 128, row_h, 90, "copy tile")
    cv.legend(x0, 72, [(COPY_COLOR, 0.55, "cp.async copy of K tile t in flight"),
                       (MMA_COLOR, 0.6, f"mma.sync on K tile t (all {warps} warps)")], 11, 40)
    cv.text(x0, y, f"Step t, from its dashed line (K tile t, {tile_k} deep): wait_group "
            f"{stages - 2}, __syncthreads, start copying tile t + {stages - 1} into the stage step "
            "t - 1 read, mma.sync on tile t", 12)
    cv.save(figures, "concept_04_ring.png")


def choose_split(k, m, n, depth, resident_blocks, workspace_floats):
    """chapters/05_split_k/split_k.cuh's choose_split, line for line: (splits, K tiles each)."""
    tm, tn, tk = pick(k, 5, "block_tile_m block_tile_n block_tile_k")
    k_tiles = (depth + tk - 1) // tk
    tiles = ((m + tm - 1) // tm) * ((n + tn - 1) // tn)
    splits = min(resident_blocks // tiles, k_tiles // k["ch05_min_k_tiles_per_split"],
                 k["ch05_max_splits"], workspace_floats // (m * n))
    if splits <= 1:
        return 1, k_tiles
    per_split = (k_tiles + splits - 1) // splits
    return (k_tiles + per_split - 1) // per_split, per_split


def concept_05(k, figures):
    tile_k, min_tiles = k["ch05_block_tile_k"], k["ch05_min_k_tiles_per_split"]
    depth = 12 * tile_k  # the example: one 32 x 128 tile of C, 12 K tiles, GPU and workspace ample
    splits, per = choose_split(k, 32, 128, depth, 1 << 30, 1 << 30)
    k_tiles, colors = depth // tile_k, [OKABE_ITO[c] for c in ("blue", "orange", "purple", "green")]
    if splits > len(colors):
        error(f"concept_05: {splits} splits, colours for {len(colors)}")
    cv = Canvas(1260, 700, "Chapter 05: split-K, partial tiles in a workspace, a sum in a fixed "
                "order")
    x0, tw, by, bh, wy = 60, 60, 186, 124, 384  # tw: pixels per K tile
    centre = lambda z: x0 + (z + 0.5) * per * tw  # noqa: E731
    cv.bold(x0, 74, f"K = {depth}: {k_tiles} K tiles of {tile_k}, cut into {splits} ranges of "
            f"{per}")
    for t in range(k_tiles):
        cv.rect(x0 + t * tw, 96, tw, 40, face=tint(colors[t // per], 0.45), edge="white", lw=1.5,
                text=str(t), size=10)
    cv.bold(x0, wy - 22, "workspace: splits x M x N floats", 12)
    for z in range(splits):  # one block per range, each writing its own slab
        bx = x0 + z * per * tw + 10
        cv.rect(bx - 10, 96, per * tw, 40, edge="black", lw=1.5)
        cv.arrow(centre(z), 138, centre(z), by - 2)
        cv.box(bx, by, per * tw - 20, bh, colors[z], 0.15, lw=2)
        cv.bold(bx + 12, by + 22, f"block (x, y, z = {z})", 12)
        cv.text(bx + 12, by + 56, f"K tiles {z * per}-{(z + 1) * per - 1}: chapter 04's loop", 10)
        cv.text(bx + 12, by + 92, f"partial_{z} = A_{z} · B_{z}", 12, family="monospace")
        cv.arrow(centre(z), by + bh + 2, centre(z), wy - 36)
        cv.box(bx, wy, per * tw - 20, 64, colors[z], 0.45, lw=1.5, text=f"slab {z}: partial_{z}",
               size=12)
    sw, sh = 330, 150  # sum_splits: every element in the order z = 0, 1, 2
    sx, sy = x0 + (splits * per * tw - sw) / 2 - 60, wy + 130
    for z in range(splits):
        cv.arrow(centre(z), wy + 66, sx + sw * (z + 1) / (splits + 1), sy - 2)
    cv.rect(sx, sy, sw, sh, face="#f2f2f2", edge="black", lw=1.5)
    cv.bold(sx + 14, sy + 22, "sum_splits, every element i:", 12)
    cv.lines(sx + 30, sy + 52, ["sum = slab[0][i]"] + [f"sum += slab[{z}][i]" for z in
                                range(1, splits)] + ["C[i] = sum"], size=12, family="monospace")
    cv.arrow(sx + sw + 2, sy + sh / 2, sx + sw + 70, sy + sh / 2)
    cv.box(sx + sw + 74, sy + sh / 2 - 40, 110, 80, C_COLOR, 0.45, 1.5, text="C", size=14,
           weight="bold")
    p = [np.float32(1.5), np.float32(0.1), np.float32(0.2)]
    in_order, other_order = (p[0] + p[1]) + p[2], (p[1] + p[2]) + p[0]
    if in_order == other_order:
        error("concept_05: the example sums no longer differ in fp32")
    cv.lines(x0 + k_tiles * tw + 70, 74, [
        "choose_split: min(resident blocks / tiles of C,", f"K tiles / {min_tiles}, "
        f"{k['ch05_max_splits']}, what the workspace holds)", f"here {k_tiles} / {min_tiles} = "
        f"{splits}", "", "a fixed order, not atomicAdd: in fp32", f"(1.5 + 0.1) + 0.2 = "
        f"{in_order:.9g}", f"(0.1 + 0.2) + 1.5 = {other_order:.9g}"], step=22, size=12)
    cv.save(figures, "concept_05_split_k.png")


def concept_06(k, figures):
    mn, x0, bx, kinds = k["ch03_mma_n"], 40, 140, read_epilogue_kinds()
    cv = Canvas(1400, 830, "Chapter 06: the epilogue fused into the GEMM's store")
    memory = ("Y in memory", "M x N fp16", "#999999", 0.16, 124)
    cv.bold(x0, 70, "A hidden layer's forward product, Y = fp16(ReLU(X W^T + b))")
    cv.bold(x0, 146, "chapters\n01-05", 12, color=MUTED)
    cv.bold(x0, 296, "chapter 06", 12, color=MUTED)
    cv.flow(bx, 100, 92, [("GEMM kernel", "accumulators\nin registers", MMA_COLOR, 0.18, 170), (
        "Z in memory", "M x N fp32", "#999999", 0.16, 150), ("epilogue pass", "a second kernel:\n"
        "+ b, ReLU, fp16", EPILOGUE_COLOR, 0.2, 180), memory])
    cv.flow(bx, 250, 92, [("GEMM kernel", "accumulators  ->  + b[col], ReLU, fp16 in registers  "
                           "->  one store", MMA_COLOR, 0.18, 612), memory])
    cv.note(bx + 306, 226, "gone: a kernel launch, and Z's round trip through memory (8 bytes "
            "per element)", 11, "center", style="italic")
    tx, y = bx + 840, 126  # the kinds, from the enum's comments
    cv.head(tx, 70, "Each product's epilogue kind", f"EpilogueKind, {EPILOGUE_HEADER}")
    for name, comment in kinds:
        what, *use = re.split(r"\s{2,}", comment.strip())
        cv.bold(tx, y, name, 11, family="monospace")
        cv.note(tx + 100, y, use[0] if use else "a plain store")
        cv.lines(tx + 12, y + 19, what.split("; "), step=19, size=10, family="monospace")
        y += 48 + 19 * what.count("; ")
    top, cw, rh = 420, 46, 34  # storing a fragment's rows: a float at a time, or column pairs
    cv.bold(x0, top, f"Storing fp32 C from the fragment: each row's {mn} columns are {mn} x 4 = "
            "32 bytes, one memory sector")
    cv.note(x0, top + 24, f"rows 0-7 of a {k['ch03_mma_m']} x {mn} mma tile (c[0], c[1]; rows 8-15 "
            "likewise with c[2], c[3]); lanes 4g .. 4g + 3 hold row g", 11)
    colors = [tint(OKABE_ITO["sky"], 0.6), tint(OKABE_ITO["yellow"], 0.7)]
    for paired in (False, True):
        px, py = x0 + 60 + paired * 680, top + 96
        cv.bold(px - 60, py - 32, "float2 column pairs (chapter 06, finish_pair): 1 store "
                "instruction" if paired else "one float at a time (chapters 03-05): 2 store "
                "instructions", 12)
        for g in range(8):
            cv.note(px - 10, py + (g + 0.5) * rh, f"row {g}", 10, "right")
            for t in range(4):
                for e in range(1 if paired else 2):
                    cv.rect(px + (2 * t + e) * cw, py + g * rh, (1 + paired) * cw, rh,
                            face=colors[e], edge="white", lw=1.5, size=10,
                            text=f"lane {4 * g + t}" if paired else str(4 * g + t))
            cv.rect(px, py + g * rh, mn * cw, rh, edge="black", lw=1.2)
        for col in range(mn):
            cv.note(px + (col + 0.5) * cw, py + 8 * rh + 12, str(4 * col), 9, "center")
        cv.note(px + mn * cw / 2, py + 8 * rh + 30, "byte offset in the row's sector", 10, "center")
        for e in range(0 if paired else 2):
            cv.legend(px + mn * cw + 20, py + 20 + 28 * e, [(colors[e], f"store {e + 1}: c[{e}]")])
        cv.text(px + mn * cw + 20, py + 20 + 80 * (not paired), "each lane writes\n8 bytes: every\n"
                "sector once, whole" if paired else "every sector\nwritten twice,\nhalf each time",
                va="top")
    cv.save(figures, "concept_06_epilogue.png")


def ch07_warp_work(k):
    """Per K tile, each warp of chapter 07's block: (ldmatrix.x4, mma.sync) it issues."""
    steps, m, n = k["ch07_tile_k"] // k["ch03_mma_k"], k["ch07_mma_tiles_m"], k["ch07_mma_tiles_n"]
    return steps * (m + n // 2), steps * m * n


def concept_07(k, figures):
    """Chapter 06's mma.sync kernel fed by TMA: thread 0 copies, full[s] counts the bytes."""
    stages, tile_k, tm, tn, warps_m, warps_n, swizzle, atom = pick(k, 7, "stages tile_k "
        "block_tile_m block_tile_n warps_m warps_n swizzle_bytes swizzle_atom_bytes")
    loads, mmas = ch07_warp_work(k)
    a_kib, stage_kib = tm * tile_k * 2 // 1024, (tm + tn) * tile_k * 2 // 1024
    cv = Canvas(1400, 760, "Chapter 07: one thread hands each tile to TMA, an mbarrier per stage "
                "says when it has landed")
    x0, gy, tx, rx, sw = 40, 110, 220, 440, 118  # rx, sw: the ring, a stage's width
    cv.rect(x0, gy, 160, 170, face="#eeeeee", lw=1.5)  # global memory -> the ring -> the warps
    cv.bold(x0 + 80, gy + 22, "global memory", 12, ha="center")
    cv.box(x0 + 18, gy + 46, 124, 48, A_COLOR, text="op(A): M x K")
    cv.box(x0 + 18, gy + 106, 124, 48, B_COLOR, text="op(B): K x N")
    cv.bold(tx, gy - 4, "thread 0, per K tile t:", 11)
    cv.text(tx, gy + 12, f"1. arrive.expect_tx(\n   full[s], {stage_kib} KiB)\n2. TMA copy of "
            "A's tile\n3. TMA copy of B's tile", 10, va="top", family="monospace")
    cv.arrow(x0 + 162, gy + 92, rx - 4, gy + 92)
    cv.bold(rx, gy - 30, f"shared memory: a ring of {stages} stages of {stage_kib} KiB", 12)
    for s in range(stages):
        sx, aw = rx + s * (sw + 14), sw * a_kib / stage_kib
        cv.box(sx, gy, aw, 110, A_COLOR, text=f"A\n{tm}\nx {tile_k}", size=10)
        cv.box(sx + aw, gy, sw - aw, 110, B_COLOR, text=f"B\n{tn}\nx {tile_k}", size=10)
        cv.bold(sx + sw / 2, gy + 124, f"stage {s}", 11, ha="center")
        cv.box(sx + 14, gy + 144, sw - 28, 30, "black", 0, 1.5, text=f"full[{s}]", weight="bold")
    cv.text(rx, gy + 200, f"full[s] completes its phase when thread 0 has arrived and all "
            f"{stage_kib} KiB have landed", 10)
    wx, ww, wh = rx + stages * (sw + 14) + 42, 64, 55  # the block's warps, not to scale
    cv.arrow(wx - 52, gy + 55, wx - 6, gy + 55)
    cv.bold(wx, gy - 30, f"{warps_m * warps_n} warps, {k['ch07_warp_tile_m']} x "
            f"{k['ch07_warp_tile_n']} of C each", 12)
    for w in range(warps_m * warps_n):
        cv.box(wx + w % warps_n * ww, gy + w // warps_n * wh, ww, wh, MMA_COLOR, text=f"warp {w}",
               size=10)
    cv.note(wx + warps_n * ww / 2, gy + warps_m * wh + 8, f"the block's {tm} x {tn} tile of C",
            10, "center", "top")
    cv.lines(wx, gy + warps_m * wh + 42, ["each warp, per K tile: waits on full[s];", f"{loads} "
             f"ldmatrix.x4, {mmas} mma.sync (chapter 03's)"], step=20, size=10)
    y0, row_h = 450, 52  # the stages over time, with the phases of their full barriers
    cv.bold(x0, y0 - 66, f"Over time: K tile t uses stage t % {stages}; full[t % {stages}] "
            f"completes phase t / {stages} when it has landed")
    ring_timeline(cv, x0, y0, stages, 8, 92, row_h, 80, "TMA", phases=True)
    # tma.cuh's swizzled(): chunk c of row r in slot c ^ (r % 8); the 8 rows of chunk 2, which the
    # 8 lanes of an ldmatrix matrix read, highlighted.
    chunk, cw, ch, sx, sy = 2, 36, 26, 1027, y0 + 10
    chunks, rows = swizzle // 16, atom // swizzle
    cv.head(975, y0 - 66, f"The {swizzle}-byte swizzle (one {rows}-row atom)",
            "chunk c of row r in slot c ^ (r % 8)", family="monospace")
    cv.note(sx + chunks * cw / 2, sy - 28, "slot: 16 bytes, 4 of the 32 banks", 10, "center")
    for slot in range(chunks):
        cv.note(sx + (slot + 0.5) * cw, sy - 8, str(slot), 9, "center")
    for r in range(rows):
        cv.note(sx - 8, sy + (r + 0.5) * ch, f"row {r}", 9, "right")
        for slot in range(chunks):
            hit = slot ^ (r % 8) == chunk
            cv.rect(sx + slot * cw, sy + r * ch, cw, ch, face=tint(A_COLOR, 0.75 if hit else 0.1),
                    edge="white", lw=1.2, text=f"c{slot ^ (r % 8)}", size=9,
                    color="white" if hit else MUTED, weight="bold" if hit else None)
    cv.rect(sx, sy, chunks * cw, rows * ch, edge=A_COLOR, lw=1.2)
    cv.lines(975, sy + rows * ch + 26, [f"ldmatrix reads chunk {chunk} of rows 0-7: 8 slots, each "
             "bank once", f"unswizzled: all in slot {chunk}, 8-way bank conflicts"], step=20,
             size=10)
    y = y0 + stages * row_h + 34
    cv.legend(x0, y, [(PARITY_COLORS[0], 0.55, "copy in flight, phase of parity 0"), (
        PARITY_COLORS[1], 0.55, "parity 1"), (MMA_COLOR, 0.6, "ldmatrix + mma.sync, all warps")],
        spacing=30)
    cv.text(x0, y + 26, "P0 / P1: the parity the waits on full[s] name")
    cv.save(figures, "concept_07_tma.png")


def concept_08(k, figures):
    """Chapter 07's ring with wgmma: a warpgroup's operands read from shared memory."""
    tm, tn, stages, groups, wm, wn, wk, acc = pick(
        k, 8, "block_tile_m block_tile_n stages warpgroups wgmma_m wgmma_n wgmma_k accumulators")
    tile_k, swizzle, atom = pick(k, 7, "tile_k swizzle_bytes swizzle_atom_bytes")
    wgmmas = tile_k // wk
    cv = Canvas(1400, 680, f"Chapter 08: a warpgroup multiplies {wm} x {wn} x {wk} in one wgmma, "
                "A and B read from shared memory")
    x0, e, kk, ax, by = 40, 1.4, 1, 120, 122  # e: pixels per element; kk: the K step drawn
    cx, cy = ax + tile_k * e + 22, by + tile_k * e + 30
    cv.bold(x0, 70, f"A stage (of {stages}) and the block's {tm} x {tn} tile of C, to scale")
    for g in range(groups):
        gy = cy + g * wm * e
        cv.box(ax, gy, tile_k * e, wm * e, A_COLOR, 0.18)
        cv.box(cx, gy, tn * e, wm * e, C_COLOR, 0.12 + 0.2 * (g == 0), lw=1.5)
        cv.text(ax - 8, gy + wm * e / 2, f"rows\n{g * wm}-{(g + 1) * wm - 1}:\nwarp-\ngroup {g}",
                9, "right")
        cv.text(cx + tn * e / 2, gy + wm * e / 2, f"warpgroup {g}: {wm} x {wn} fp32 in its "
                f"registers,\n{acc} per thread", 10, "center", weight="bold" if g == 0 else None)
    cv.box(cx, by, tn * e, tile_k * e, B_COLOR, 0.18)
    for step in range(wgmmas):  # the K steps of one wgmma each
        cv.box(ax + step * wk * e, cy, wk * e, wm * e, A_COLOR, 0.7 * (step == kk), lw=0.6,
               linestyle="--")
        cv.box(cx, by + step * wk * e, tn * e, wk * e, B_COLOR, 0.7 * (step == kk), lw=0.6,
               linestyle="--")
    cv.bold(ax + tile_k * e / 2, cy - 12, f"A: {tm} x {tile_k}", 11, ha="center", color=A_COLOR)
    cv.bold(cx + tn * e / 2, by - 14, f"B: {tile_k} x {tn} (op(B), K x N)", 11, ha="center",
            color=B_COLOR)
    cv.text(cx + tn * e + 8, by + (kk + 0.5) * wk * e, f"K step {kk}:\nk {kk * wk}-"
            f"{(kk + 1) * wk - 1}", 9)
    cv.text(x0, cy + tm * e + 26, f"dark: warpgroup 0's operands for K step {kk} of {wgmmas}; "
            "one copy of B serves both warpgroups", 10)
    dx, bit = 700, 660 / 64  # the descriptor's 64 bits, bit 0 left (PTX ISA, "Matrix Descriptor")
    cv.bold(dx, 70, "A descriptor per operand and K step: 64 bits")
    cv.rect(dx, 104, 64 * bit, 40, face="#f4f4f4")
    for lo, hi, name, color in [(0, 14, "start address >> 4", A_COLOR),
                                (16, 30, "LBO >> 4", C_COLOR), (32, 46, "SBO >> 4", EPILOGUE_COLOR),
                                (49, 52, "base offset", GRID), (62, 64, "swizzle", MMA_COLOR)]:
        cv.box(dx + lo * bit, 104, (hi - lo) * bit, 40, color, 0.35, text=name if hi - lo > 5
               else None, size=9)
        if hi - lo <= 5:  # named above the bar
            cv.text(dx + (lo + hi) / 2 * bit, 95, name, 9, "center")
        for b in (lo, hi):
            cv.note(dx + b * bit, 154, str(b), 8, "center")
    cv.lines(dx, 186, [f"K-major: start + {k['ch08_warpgroup_rows_bytes'] // 1024} KiB for "
                       f"warpgroup 1, + {wk * 2} bytes per K step; SBO = {atom} bytes",
                       f"MN-major: SBO = {atom} bytes, LBO = {swizzle // 2 * tile_k * 2} bytes"],
             size=10, step=20)
    ty, warps7, (loads7, mmas7) = 540, k["ch07_warps_m"] * k["ch07_warps_n"], ch07_warp_work(k)
    blocks7 = tm * tn // (k["ch07_block_tile_m"] * k["ch07_block_tile_n"])
    cv.bold(x0, ty - 28, f"Per K tile of {tile_k}, one warpgroup ({wm} x {wn}): no ldmatrix, no "
            "operand in registers")
    cv.flow(x0, ty, 70, [("shared memory", "the swizzled stage", "#999999", 0.16, 180),
                         ("2 descriptors", "per wgmma, 64 bits\neach", COPY_COLOR, 0.35, 180),
                         (f"{wgmmas} wgmma", f"m{wm}n{wn}k{wk}, async:\nfence, commit, "
                          "wait_group 1", MMA_COLOR, 0.3, 240),
                         ("accumulators", f"{acc} floats per thread", C_COLOR, 0.2, 180)], gap=38)
    cv.lines(x0, ty + 100, [f"the {tm} x {tn} tile per K tile: chapter 07, {blocks7} blocks of "
                            f"{warps7} warps, {blocks7 * warps7 * loads7} ldmatrix.x4 + "
                            f"{blocks7 * warps7 * mmas7} mma.sync; chapter 08, {groups} "
                            f"warpgroups, {groups * wgmmas} wgmma"], size=11)
    cv.save(figures, "concept_08_wgmma.png")


def tile_origin(k, tiles_m, tiles_n, tile):
    """chapters/10_tile_scheduler/gemm.cuh's tile_origin, in tiles: (tile row, tile column)."""
    per_group = k["ch10_group_tile_rows"] * tiles_n
    first_row = tile // per_group * k["ch10_group_tile_rows"]
    group_rows, in_group = min(tiles_m - first_row, k["ch10_group_tile_rows"]), tile % per_group
    return first_row + in_group % group_rows, in_group // group_rows


ISSUE, LATENCY, WGMMA = 0.15, 2.6, 1.0  # schematic: a TMA issue, a copy's flight, a K tile's MMAs


def simulate_roles(stages, k_tiles, tiles, epilogue):
    """Chapters 09's and 10's barriers, schematic, over `tiles` tiles of `k_tiles` K tiles (i counts
    the block's K tiles): the producer issues K tile i once K tile i - stages released its stage
    (empty), it lands LATENCY later (full); the consumers start it once landed and free, release
    its stage when the next K tile's wgmmas are issued (wait_group 1) or at a tile's end, and run
    the epilogue after each tile. Returns issue, start, release times, epilogues' (start, end)."""
    @functools.lru_cache(maxsize=None)
    def issued(i):
        return -ISSUE if i < 0 else max(issued(i - 1) + ISSUE,
                                         released(i - stages) if i >= stages else 0.0)

    @functools.lru_cache(maxsize=None)
    def start(i):
        after = start(i - 1) + WGMMA + (epilogue if i % k_tiles == 0 else 0.0) if i else 0.0
        return max(after, issued(i) + LATENCY)

    def released(i):
        return start(i) + WGMMA if i % k_tiles == k_tiles - 1 else start(i + 1)

    ends = [start((j + 1) * k_tiles - 1) + WGMMA for j in range(tiles)]
    count = range(k_tiles * tiles)
    return ([issued(i) for i in count], [start(i) for i in count], [released(i) for i in count],
            [(e, e + epilogue) for e in ends])


def roles_run(tl, stages, k_tiles, run, last_release=True):
    """A simulate_roles run: the producer's issues (row 0), each stage's copy, wait and reads
    (rows 1 .. stages), the wgmmas (row stages + 1); where full[s] (F) and empty[s] (E)
    complete a phase."""
    issued, start, released, _ = run
    for i, (t0, t1, t2) in enumerate(zip(issued, start, released)):
        s, n, shown = 1 + i % stages, str(i % k_tiles), last_release or i % k_tiles != k_tiles - 1
        landed, y = t0 + LATENCY, tl.y + (s + 1) * tl.row_h - 5
        if i and t0 > issued[i - 1] + ISSUE + 1e-9:  # the producer waited on empty[s]
            tl.wait(0, issued[i - 1] + ISSUE, t0)
        tl.bar(0, t0, t0 + ISSUE, COPY_COLOR, 1, pad=8)
        tl.bar(s, t0, landed, COPY_COLOR, 0.55, pad=5, edge=GRID, hatch="//")
        tl.bar(s, landed, t1, COPY_COLOR, 0.2, pad=5, edge=GRID)
        tl.bar(s, t1, t2 if shown else t1 + WGMMA, MMA_COLOR, 0.55, pad=5, edge=GRID, text=n,
               size=10)
        tl.bar(stages + 1, t1, t1 + WGMMA, MMA_COLOR, 0.6, pad=5, lw=1, text=n, size=10)
        tl.c.mark(tl.X(landed), y, "F", COPY_COLOR)
        if shown:
            tl.c.mark(tl.X(t2), y, "E", MMA_COLOR)


def roles_timeline(cv, x0, y, title, stages, consumers, horizon, rh, extra=()):
    cv.bold(x0, y - 26, f"{title} (schematic, not to scale)")
    return Timeline(cv, x0 + 200, y, 1120 / horizon, rh, ["producer (thread 0)"] +
                    [f"stage {s}" for s in range(stages)] +
                    [f"consumers ({consumers} warpgroups)"] + list(extra), name_x=x0, rule=1120)


def roles_legend(cv, x, tl, rows, in_flight, epilogue, caption):
    """Under the `rows` rows of `tl`: its colours, its F and E marks, and a one-line caption."""
    y = tl.y + rows * tl.row_h + 44
    cv.legend(x, y, [(COPY_COLOR, "TMA load issued"), (COPY_COLOR, 0.55, in_flight), (
        COPY_COLOR, 0.2, "landed, not yet read"), (MMA_COLOR, 0.55, "read by the wgmmas"),
        (EPILOGUE_COLOR, 0.55, epilogue)], spacing=24)
    for dx, letter, color, what in [(8, "F", COPY_COLOR, "full[s] completes"),
                                    (178, "E", MMA_COLOR, "empty[s] completes")]:
        cv.mark(x + dx, y + 32, letter, color)
        cv.text(x + dx + 12, y + 32, what)
    cv.text(x + 360, y + 32, caption)


def concept_09(k, figures):
    """A producer and two consumer warpgroups meeting only at full[s] and empty[s]."""
    stages, consumers, threads, tm, tn, launch, preg, creg = pick(k, 9, "stages consumers threads "
        "block_tile_m block_tile_n launch_registers producer_registers consumer_registers")
    wg, wm, tile_k = k["ch08_warpgroup_threads"], k["ch08_wgmma_m"], k["ch07_tile_k"]
    cv = Canvas(1400, 640, "Chapter 09: a producer warpgroup and two consumer warpgroups, "
                "meeting only at mbarriers")
    x0, y = 40, 66
    cv.flow(x0, y, 86, [("warpgroup 0: producer", f"setmaxnreg.dec to {preg} registers;\nthread 0 "
                         "issues every TMA copy", COPY_COLOR, 0.45, 290)] + [
        (f"warpgroup {j}: consumer", f"setmaxnreg.inc to {creg} registers;\nrows {(j - 1) * wm}-"
         f"{j * wm - 1} of the {tm} x {tn} tile", MMA_COLOR, 0.3, 290)
        for j in range(1, consumers + 1)], gap=18, arrows=False)
    cv.text(x0, y + 108, f"{threads} threads, one block per SM, launched at {launch} registers "
            f"each: {wg} x {preg} + {consumers * wg} x {creg} = {threads} x {launch}.")
    cv.lines(x0 + 934, y + 14, [
        f"full[s]: the producer's arrive.expect_tx and {(tm + tn) * tile_k * 2 // 1024} KiB",
        f"empty[s]: {k['ch09_consumer_warps']} arrivals, one per consumer warp"], step=22, size=10)
    k_tiles, gap = 6, 0.8  # two blocks on one SM, one tile each
    run = simulate_roles(stages, k_tiles, 1, epilogue=3.0)
    length, ty, rh = run[3][0][1], 252, 44  # a block: from its first copy to its epilogue's end
    tl = roles_timeline(cv, x0, ty, "Two blocks, one after the other on one SM", stages,
                        consumers, 2 * length + gap + 0.2, rh)
    for b in range(2):
        tl.x0 = x0 + 200 + b * (length + gap) * tl.unit
        roles_run(tl, stages, k_tiles, run, last_release=False)
        tl.bar(stages + 1, *run[3][0], EPILOGUE_COLOR, 0.55, pad=5, lw=1, text="epilogue", size=10)
        cv.text(tl.X(0), ty + (stages + 2) * rh + 12, "the next block on this SM: its tile" if b
                else "block b: its tile", 10, color=MUTED)
    tl.x0 = x0 + 200  # dashed: the tensor cores idle from the last wgmma to the next tile's
    tl.frame(run[1][-1] + WGMMA, length + gap + run[1][0], stages + 2)
    roles_legend(cv, x0, tl, stages + 2, "copy in flight", "epilogue", "numbers: the K tile; "
                 "dotted: the producer waits on empty[s]; dashed: the tensor cores idle "
                 "(chapter 10)")
    cv.save(figures, "concept_09_roles.png")


def concept_10(k, figures):
    """Chapter 09's block made persistent: a grouped tile order, TMA stores under the next tile."""
    stages, consumers, tm, tn, group, box_cols, buffers, box_bytes = pick(k, 10, "stages consumers "
        "block_tile_m block_tile_n group_tile_rows store_box_columns store_buffers store_box_bytes")
    boxes, size, x0, cell, gy, sms = tn // box_cols, 8192, 40, 4, 118, k["sms"]
    tiles_m, tiles_n = size // tm, size // tn
    cv = Canvas(1400, 940, "Chapter 10: persistent blocks, a grouped tile order, and TMA stores "
                "under the next tile's work")
    cv.bold(1030, 62, f"The first {sms} tiles at {size}^3")
    for grouped in (True, False):  # the tiles dark to light in order, the rows and columns read
        px = 1040 + (not grouped) * (tiles_n * cell + 60)
        cv.rect(px, gy, tiles_n * cell, tiles_m * cell, face="#eeeeee")
        at = [tile_origin(k, tiles_m, tiles_n, t) if grouped else divmod(t, tiles_n)
              for t in range(sms)]
        for t, (r, c) in enumerate(at):
            cv.box(px + c * cell, gy + r * cell, cell, cell, plt.get_cmap("cividis")(t / sms), 1, 0)
        rows, cols = {r for r, _ in at}, {c for _, c in at}
        for r in rows:
            cv.rect(px - 9, gy + r * cell, 6, cell, face=A_COLOR, edge="none")
        for c in cols:
            cv.rect(px + c * cell, gy - 9, cell, 6, face=B_COLOR, edge="none")
        for g in range(1, tiles_m // group if grouped else 0):
            cv.line([px - 4, px + tiles_n * cell + 4], [gy + g * group * cell] * 2, "black", 1.2)
        cv.text(px + tiles_n * cell / 2, gy - 22, f"grouped ({group} tile rows)" if grouped
                else "row by row", ha="center")
        cv.text(px + tiles_n * cell / 2, gy + tiles_m * cell + 10, f"{len(rows) * tm} rows of A,"
                f"\n{len(cols) * tn} columns of B", 10, "center", "top")
    cv.lines(x0, 70, [
        f"persistent: {sms} blocks, one per SM ({sms} SMs on the H100 of the results); block b "
        f"computes tiles b, b + {sms}, b + {2 * sms}, ...", "the ring's stage and phase counters "
        "carry on from one tile to the next", "", f"epilogue through TMA (kStore): {box_cols}-"
        f"column boxes of {box_bytes // 1024} KiB through {buffers} staging buffers per consumer"],
             step=26, size=11)
    write, store, writes, t = 0.4, 0.4, [], 0.0  # one block, two tiles
    for box in range(boxes):  # box j once the store of box j - buffers has read its buffer
        t = max(t, writes[box - buffers] + write + store) if box >= buffers else t
        writes.append(t)
        t += write
    run, ty, rh = simulate_roles(stages, 6, 2, epilogue=t), 500, 42
    tl = roles_timeline(cv, x0, ty, "One block over time: tiles b and b + grid", stages,
                        consumers, run[3][-1][1] + store + 0.2, rh,
                        [f"staging buffer {b}" for b in range(buffers)])
    roles_run(tl, stages, 6, run)
    for j, (a, _) in enumerate(run[3]):
        for box in range(boxes):
            w0, r = a + writes[box], stages + 2 + box % buffers
            for row in (stages + 1, r):
                tl.bar(row, w0, w0 + write, EPILOGUE_COLOR, 0.55, pad=5, lw=0.8, text=str(box),
                       size=9)
            tl.bar(r, w0 + write, w0 + write + store, COPY_COLOR, 0.55, pad=5, edge=GRID,
                   hatch="//")
        cv.text(tl.X(run[1][j * 6]), ty + (stages + 4) * rh + 12, "tile b + grid" if j else
                "tile b", 10, color=MUTED)
    tl.frame(run[3][0][0], run[3][0][1] + store, stages + 4)  # next tile's copies, last stores
    roles_legend(cv, x0, tl, stages + 4, "TMA load or store in flight", "box written to staging",
                 f"numbers: the K tile, in the epilogue the box of {box_cols} columns; dashed: "
                 "the next tile's loads and the last stores overlap")
    cv.save(figures, "concept_10_tile_scheduler.png")


def concept_11(k, figures):
    """Chapter 10's kernel in clusters of two CTAs, each multicasting half of the shared B tile."""
    if k["ch11_cluster_blocks"] != 2:
        error("concept_11 draws clusters of 2 CTAs; chapter 11 says kClusterBlocks = "
              f"{k['ch11_cluster_blocks']}")
    tm, tn, tile_k, stages, cwarps = pick(k, 11, "block_tile_m block_tile_n tile_k stages "
                                               "consumer_warps")
    half = tn // 2
    a_kib, half_kib = tm * tile_k * 2 // 1024, half * tile_k * 2 // 1024
    stage_kib, own_kib = a_kib + 2 * half_kib, a_kib + half_kib
    rank, looks = [C_COLOR, EPILOGUE_COLOR], [(A_COLOR, 0.3), (B_COLOR, 0.5), (B_COLOR, 0.25)]
    cv = Canvas(1180, 740, "Chapter 11: two CTAs of a cluster share their B tile, each loading "
                "half of it for both")
    x0, gy, gh, cy, ch, slot_w = 40, 96, 80, 330, 270, 120
    cta_x, slot_x = [x0, x0 + 500], [20, 150, 280]  # the CTAs; A, B half 0, B half 1 in each
    a_src, b_src = [x0 + 30, x0 + 800], [x0 + 330, x0 + 520]  # in global memory, by CTA
    cv.rect(x0, gy - 30, 960, gh + 60, face="#f4f4f4", lw=1.2)  # global memory (L2)
    cv.bold(x0 + 12, gy - 14, "global memory (through L2), K tile t of the pair", 12)
    for sx, j, label in [(a_src[0], 0, "A: rows of tile 0"), (a_src[1], 0, "A: rows of tile 1"),
                         (b_src[0], 1, f"B half 0:\ncolumns 0-{half - 1}"),
                         (b_src[1], 2, f"B half 1:\ncolumns {half}-{tn - 1}")]:
        cv.box(sx, gy + 8, 140, gh - 16, *looks[j], 1.4, text=label, size=10)
    for r in range(2):  # the CTAs; their consumers and empty[s] face the other CTA
        bx, inner = cta_x[r], r == 0  # CTA 0's inner side is its right
        cv.box(bx, cy, 460, ch, rank[r], 0.06, lw=2)
        cv.bold(bx + 230, cy + ch + 16, f"CTA {r} (%cluster_ctarank = {r}): tile {r} of the pair",
                12, ha="center", color=rank[r])
        cv.note(bx + 20, cy + 128, f"stage s (of {stages}, {stage_kib} KiB), at the same address "
                "in both CTAs")
        for j, (label, rows, kib) in enumerate([("A tile", tm, a_kib), ("B half 0", half, half_kib),
                                                ("B half 1", half, half_kib)]):
            cv.box(bx + slot_x[j], cy + 20, slot_w, 84, *looks[j], 1.4, size=10,
                   text=f"{label}\n{rows} x {tile_k}\n{kib} KiB")
        prod_x, cons_x = bx + (20 if inner else 300), bx + (200 if inner else 20)
        full_x, empty_x = bx + (20 if inner else 320), bx + (320 if inner else 20)
        cv.box(prod_x, cy + 150, 140, 44, COPY_COLOR, 0.45, 1.5, text="producer:\nthread 0",
               size=10)
        cv.box(cons_x, cy + 150, 240, 44, MMA_COLOR, 0.3, 1.5, text=f"consumers: {cwarps} warps"
               f"\n({cwarps // 4} warpgroups)", size=10)
        for x, name in [(full_x, "full[s]"), (empty_x, "empty[s]")]:
            cv.box(x, cy + 222, 120, 32, "black", 0, 1.5, text=name, weight="bold")  # white
        cv.arrow(prod_x + 70, cy + 195, full_x + 60, cy + 220, COPY_COLOR, 1.4)
        # Its consumers arrive on its own empty[s] and on the other CTA's
        # (mbarrier.arrive.release.cluster, at the address mapa gives).
        cv.arrow(cons_x + (180 if inner else 60), cy + 195, empty_x + 60, cy + 220, MMA_COLOR, 1.4)
        cv.arrow(bx + (400 if inner else 60), cy + 195, cta_x[1 - r] + (60 if inner else 400),
                 cy + 220, MMA_COLOR, 1.4)
        # Its producer loads its A tile, and its half of B multicast into both.
        cv.arrow(a_src[r] + 70, gy + gh - 8, bx + slot_x[0] + slot_w / 2, cy + 18, rank[r], 2.0)
        for d in range(2):
            cv.arrow(b_src[r] + 70, gy + gh - 8, cta_x[d] + slot_x[1 + r] + slot_w / 2, cy + 18,
                     rank[r], 2.0)
    cv.note(x0 + 480, gy + gh + 50, "one multicast copy, written into both CTAs", 10, "center",
            style="italic", bbox=dict(facecolor="white", edgecolor="none", pad=1))
    cv.legend(x0, cy + ch + 54, [(rank[0], "copies CTA 0's producer issues"), (rank[1], "CTA 1's"),
                                 (COPY_COLOR, "the producer's arrival on full[s]"),
                                 (MMA_COLOR, "arrivals on empty[s]")], spacing=34)
    cv.lines(x0, cy + ch + 92, [
        f"full[s], in each CTA: 1 arrival (expect_tx of {stage_kib} KiB) and the bytes, {own_kib} "
        f"KiB from its own copies, {half_kib} KiB from the other CTA's multicast",
        f"empty[s], in each CTA: {2 * cwarps} arrivals, from the {cwarps} consumer warps of both "
        "CTAs: a multicast refills the stage in both"], step=24)
    cv.save(figures, "concept_11_clusters.png")


def concept_12(k, figures):
    """Swap AB, and the split-K sum by the last block to arrive, for one example product."""
    wm, tile_k = k["ch08_wgmma_m"], k["ch07_tile_k"]
    batch_tiles = read_ints(CH12_DISPATCH, r"constexpr int kBatchTiles\[\] = \{([\d, ]+)\};",
                            "constexpr int kBatchTiles[] = {...};")
    batch, outputs, inputs, splits = 32, 512, 1024, 4  # the example: Y = X W^T at batch 32
    if splits > k["ch13_most_splits"] or batch > k["ch12_max_batch"] or batch not in batch_tiles:
        error("concept_12: the example no longer fits chapters 12 and 13's limits")
    row_tiles, k_per, rows10 = outputs // wm, inputs // splits, k["ch09_block_tile_m"]
    cv = Canvas(1400, 700, "Chapters 12 and 13: the batch on wgmma's N, and K split inside the "
                "kernel")
    x0, cy, cw, ch = 40, 140, 400, 28  # C: batch x outputs, drawn 400 wide
    tx, ty, step = x0 + 70, cy + 110, cw / row_tiles  # C^T: outputs x batch, drawn 400 tall
    cv.bold(x0, 90, f"Swap AB: Y = X W^T at batch {batch}, {inputs} inputs, {outputs} outputs")
    cv.matrix(x0, cy, cw, ch, f"C = Y: {batch} x {outputs}", C_COLOR)
    cv.text(x0, cy + ch + 22, f"a block tile of chapter 10 ({rows10} rows of C) would hold "
            f"{batch} rows of batch and {rows10 - batch} of nothing", 10)
    cv.matrix(tx, ty, ch, cw, "C^T", C_COLOR)
    cv.arrow(x0 + 40, cy + ch + 34, tx + ch / 2, ty - 22, rad=0.2)
    cv.bold(x0 + 100, cy + 72, "C^T = W X^T", 11)
    for i in range(row_tiles):
        cv.rect(tx, ty + i * step, ch, step, face=tint(MMA_COLOR, 0.55) if i == 2 else "none",
                edge=C_COLOR, lw=0.8)
    cv.text(tx - 8, ty + cw / 2, f"{outputs} rows:\nthe outputs", 10, "right")
    cv.text(tx + ch / 2, ty + cw + 16, f"{batch}: the batch", 10, "center")
    cv.bold(tx + ch + 24, ty + 2 * step + 4, f"A block tile of C^T: {wm} x {batch}", 12)
    cv.lines(tx + ch + 24, ty + 2 * step + 30, [f"wgmma's M: {wm} rows of the weights;", "its N: "
             f"the batch tile, {', '.join(map(str, batch_tiles))}", f"({row_tiles} tiles for "
             f"{outputs} outputs)", "", "TMA copies the operands as stored;", "the epilogue stores "
             "(r, q) to C[q][r]"], step=22)
    rx, bh, slab_w = 760, 34, 120  # right: the splits of one tile and the last arrival's sum
    cv.head(rx, 90, f"One tile, K = {inputs} split {splits} ways: one block per split",
            f"({k_per} of K each, {k_per // tile_k} K tiles of {tile_k})")
    arrival = [2, 0, 3, 1]  # an example order in which the splits finish
    for s in range(splits):
        y, order = 140 + s * (bh + 12), arrival.index(s)
        w = 160 + 34 * order  # the later it arrives, the longer its box
        cv.text(rx, y + bh / 2, f"split {s}")
        cv.box(rx + 70, y, w, bh, MMA_COLOR, 0.45, 1, text=f"K {s * k_per}-{(s + 1) * k_per - 1}"
               ": wgmma", size=10)
        cv.box(rx + 70 + w, y, 70, bh, COPY_COLOR, 0.5, 1, text="store", size=10)
        cv.text(rx + 148 + w, y + bh / 2, f"its add returns {order}" + (" = S - 1" if order ==
                splits - 1 else ""), 10, weight="bold" if order == splits - 1 else None)
    wy = 180 + splits * (bh + 12)
    cv.bold(rx, wy - 14, f"workspace: {splits} partial tiles of fp32 ({wm} x {batch})", 11)
    for s in range(splits):
        sx = rx + s * (slab_w + 10)
        cv.box(sx, wy, slab_w, 40, C_COLOR, 0.25, 1, text=f"slab {s}", size=10)
        cv.arrow(sx + slab_w / 2, wy + 42, sx + slab_w / 2, wy + 78, lw=1.0)
    cv.box(rx, wy + 80, 4 * slab_w + 30, 52, EPILOGUE_COLOR, lw=1, text="the last block: "
           f"{' + '.join(f'slab {s}' for s in range(splits))}, in that order;\nthen the "
           "epilogue, once, and the counter back to 0", size=10)
    cv.lines(rx, wy + 160, ["each block: store its slab, fence, add 1 to the tile's counter;",
                            "any order of arrival, one order of the sum: the same bits every run",
                            "(an example: plan_split picks each product's splits)"], step=22)
    cv.save(figures, "concept_12_swap_ab_split_k.png")


SM_SHARED_BYTES, BLOCK_RESERVED_BYTES = 228 * 1024, 1024  # the H100's: an SM's, each block's


def concept_14(k, figures):
    """One block of the weight update, its shared memory filled and emptied by TMA, and the blocks
    that share an SM, each at another point of its life."""
    rows, cols, most = pick(k, 14, "update_tile_rows update_tile_cols max_update_k_tiles")
    tile_k, swizzle, atom = pick(k, 7, "tile_k swizzle_bytes swizzle_atom_bytes")
    box = rows * swizzle  # a box: 8 swizzle atoms of 128-byte rows
    dy_tile, x_tile = rows * tile_k * 2, cols * tile_k * 2  # a stage: dY^T's tile, then X's
    masters, copies = cols // k["ch10_store_box_columns"], cols * 2 // swizzle
    fixed = atom + (masters + copies) * box + 8  # the mbarrier: 8 bytes
    kib = lambda k_tiles: (fixed + k_tiles * (dy_tile + x_tile)) / 1024
    per_sm = lambda k_tiles: int(SM_SHARED_BYTES // (kib(k_tiles) * 1024 + BLOCK_RESERVED_BYTES))
    cv = Canvas(1400, 490, "Chapter 14: the weight gradient and its SGD through shared memory, "
                "TMA loads and TMA stores")
    batch = 32  # the example: one K tile, half of it zeros
    cv.head(40, 80, f"One block, one warpgroup: a {rows} x {cols} tile of dW at batch {batch}",
            f"shared memory, {kib(1):.0f} KiB at one K tile of {tile_k}")
    x, y, scale = 190, 190, 460 / (kib(1) * 1024)
    for label, color, size in [(f"dY^T tile\n{dy_tile // 1024} KiB", A_COLOR, dy_tile),
                               (f"X tile\n{x_tile // 1024} KiB", B_COLOR, x_tile),
                               (f"masters\n{masters} x {box // 1024} KiB", C_COLOR, masters * box),
                               (f"fp16 copy\n{copies} x {box // 1024} KiB", EPILOGUE_COLOR,
                                copies * box)]:
        cv.box(x, y, size * scale, 60, color, 0.3, text=label, size=10)
        x += size * scale
    stored = 190 + (dy_tile + x_tile + (masters + copies) * box / 2) * scale  # mid masters, copy
    cv.box(x, y, 22, 60, GRID, 0.2)
    cv.note(x + 11, y - 12, "mbarrier", ha="center")
    cv.box(40, y - 10, 110, 36, GRID, 0.1, text="dY, X", size=10)
    cv.box(40, y + 46, 110, 36, GRID, 0.1, text="W fp32, fp16", size=10)
    cv.note(95, y + 100, "global memory", ha="center")
    cv.arrow(152, y + 8, 188, y + 20, COPY_COLOR)
    cv.arrow(152, y + 60, 188, y + 44, COPY_COLOR)
    cv.arrow(stored, y + 62, 120, y + 84, EPILOGUE_COLOR, rad=-0.25)
    cv.note(stored, y + 104, "TMA store", ha="center")
    cv.lines(40, y + 140, [
        "thread 0: every TMA load at once (operands and masters), counted on the one mbarrier",
        f"the warpgroup: wgmma {rows} x {cols} over the K tiles, then m -= lr acc where TMA put",
        "     the masters, the fp16 copy into a box of its own: the bytes wait in shared memory",
        "a proxy fence and a barrier; thread 0: TMA-stores both, and waits until they are read",
        "     before the block ends: its shared memory must outlive the copy engine's reads"],
        step=24, size=10)
    n, life = per_sm(1), [(COPY_COLOR, 5), (MMA_COLOR, 2), (EPILOGUE_COLOR, 4)]  # schematic
    cv.head(760, 80, f"An SM: {n} blocks of {kib(1):.0f} KiB at once",
            "each at another point of its life (schematic)")
    span = sum(d for _, d in life)
    tl = Timeline(cv, 860, 150, 470 / (2 * span), 40, [f"block slot {i}" for i in range(n)])
    for i in range(n):
        t = -i * span / n
        while t < 2 * span:
            for color, d in life:
                if t + d > 0 and t < 2 * span:
                    tl.bar(i, max(t, 0), min(t + d, 2 * span), color, 0.55)
                t += d
    cv.legend(760, 150 + n * 40 + 30, [(c, 0.55, name) for (c, _), name in zip(life, [
        "TMA loads in flight", "wgmma, SGD", "TMA stores in flight"])], size=10, spacing=36)
    cv.lines(760, 150 + n * 40 + 70, [
        "some block's copies are always on their way: the bytes in flight per SM,",
        f"not the registers, set the pace; at {most} K tiles (batch {most * tile_k}) a block takes",
        f"{kib(most):.0f} KiB, {per_sm(most)} blocks an SM"], step=22, size=10)
    cv.save(figures, "concept_14_weight_update.png")


def tiles(rows, cols, tile_m, tile_n):
    """How many tiles of tile_m x tile_n cover rows x cols."""
    return -(-rows // tile_m) * -(-cols // tile_n)


def concept_15(k, figures):
    """Chapter 15's tiles against chapter 14's on two products of a step: the SMs they fill."""
    (tm, tn), (mm, mn), sms = pick(k, 15, "tile_m tile_n"), pick(k, 3, "mma_m mma_n"), k["sms"]
    rows14, cols14, wm = k["ch14_update_tile_rows"], k["ch14_update_tile_cols"], k["ch08_wgmma_m"]
    cv = Canvas(1400, 500, f"Chapter 15: tiles of {tm} x {tn}, a block each, for the small "
                "products of a training step")
    cases = [(f"forward, layer 2: 32 x 128 (chapter 12's tile: {wm} weight rows by the batch)",
              tiles(128, 1, wm, 1), tiles(32, 128, tm, tn)),
             (f"weight gradient, layer 2: 128 x 128 (chapter 14's {rows14} x {cols14})",
              tiles(128, 128, rows14, cols14), tiles(128, 128, tm, tn))]
    cols, cell = 22, 17
    for i, (name, ch14, ch15) in enumerate(cases):
        y = 80 + i * 205
        cv.bold(40, y, name, 12)
        for j, (label, blocks) in enumerate([("chapter 14", ch14), ("chapter 15", ch15)]):
            x = 40 + j * (cols * cell + 50)
            cv.text(x, y + 28, f"{label}: {blocks} blocks on {sms} SMs")
            for s in range(sms):
                cv.box(x + s % cols * cell, y + 44 + s // cols * cell, cell - 2, cell - 2,
                       *((MMA_COLOR, 0.6) if s < blocks else (GRID, 0.15)), 0)
    x0, y0, w, h = 940, 110, 384, 192  # one tile: mma tiles of mm x mn, a warp each
    cv.bold(x0, 80, f"One block tile, {tm} x {tn}: {k['ch15_warps']} warps", 12)
    across, ww, wh = tn // mn, w * mn / tn, h * mm / tm
    for warp in range(tm // mm * across):
        cv.box(x0 + warp % across * ww, y0 + warp // across * wh, ww, wh, C_COLOR, 0.25,
               text=f"warp {warp}\n{mm} x {mn}")
    cv.lines(x0, y0 + h + 40, [
        "each warp: one mma tile over all of K", f"K tiles of {k['ch15_tile_k']} through a ring "
        f"of {k['ch15_stages']} cp.async stages", "then the epilogue of the step's product", "",
        f"the rule: at most {k['ch15_max_tiles']} tiles of C, K <= {k['ch15_max_k']}"], step=26)
    cv.save(figures, "concept_15_small_tile.png")


def concept_16(k, figures):
    """One step of chapter 14's CUDA graph against one of chapter 16's persistent kernel, to
    scale from the measurements (784-128-128-128-10 at batch 32, 2 L + 1 phases)."""
    tile = pick(k, 15, "tile_m tile_n")
    ch14 = read_rows(CH14_STEPS, implementation="14_weight_update", batch=CH16_BATCH,
                     hidden=MODEL[1])[0]
    kernel_counts = {int(r["kernels_per_step"]) for r in read_rows(
        CH14_KERNELS, chapter="14_weight_update", layers="-".join(map(str, MODEL)),
        batch=CH16_BATCH)}
    if len(kernel_counts) != 1:
        error(f"concept_16: chapter 14's kernels a step differ between runs in {CH14_KERNELS}")
    ch14_us, kernels = 1000 * float(ch14["ms_per_step"]), kernel_counts.pop()
    node_us = float(read_rows(CH16_SYNC, what="graph")[0]["us_each"])
    barrier_us = float(read_rows(CH16_SYNC, what="barrier", scheme="release_acquire",
                                 blocks=CH16_BLOCKS)[0]["us_each"])
    phase_rows = read_rows(CH16_PHASES, batch=CH16_BATCH, hidden=MODEL[1])
    phases = [(r["phase"], float(r["after_us"])) for r in phase_rows if r["phase"] != "step"]
    ch16_us, layers = sum(us for _, us in phases), len(MODEL) - 1
    busy = [tiles(CH16_BATCH, MODEL[l + 1], *tile) for l in range(layers)] + [1]  # forward, loss
    for j in range(layers):  # backward phase j: dX of layer L-1-j, SGD of layer L-j (and 0)
        data = layers - 1 - j
        updates = ([layers - j] if j >= 1 else []) + ([0] if data == 0 else [])
        busy.append((tiles(CH16_BATCH, MODEL[data], *tile) if data >= 1 else 0) +
                    sum(tiles(MODEL[u + 1], MODEL[u], *tile) for u in updates))
    if len(busy) != len(phases) or len(phases) != 2 * layers + 1:
        error(f"concept_16: {len(phases)} phases in {CH16_PHASES}, {len(busy)} in the model, "
              f"{2 * layers + 1} in chapter 16")
    rows, row_h, x0, scale = 6, 22, 150, 19.0  # scale: pixels per microsecond
    cv = Canvas(1400, 700, "Chapter 16: one launch for every step, grid barriers between its "
                "phases")
    blocks = [f"block {b}" for b in range(rows)] + ["..."]
    y14, slot = 110, ch14_us / kernels  # chapter 14: kernels, a graph node's gap between two
    cv.head(40, y14 - 48, "Chapter 14, a step as a CUDA graph:", f"{kernels} kernels, "
            f"{ch14_us:.1f} µs a step (measured, {ch14['date']}); each kernel drawn the same "
            f"length, {node_us:.2f} µs of it between kernels (an empty graph node, "
            "bench/sync_costs)")
    tl = Timeline(cv, x0, y14, scale, row_h, blocks)
    for i in range(kernels):
        tl.span(i * slot, i * slot + node_us, rows, tint(OKABE_ITO["grey"], 0.35), over=3)
        for b in range(rows):
            tl.bar(b, i * slot + node_us, (i + 1) * slot, MMA_COLOR, pad=3)
    y16, t = 350, 0.0  # chapter 16: phases, each its products' tiles, then a grid barrier
    cv.head(40, y16 - 48, "Chapter 16, the persistent step:", f"{len(phases)} phases (2 L + 1: "
            f"the loss alone, by block 0), {ch16_us:.1f} µs a step (clock64 per phase, "
            f"{phase_rows[0]['date']}); {CH16_BLOCKS} blocks, a grid barrier of {barrier_us:.2f} µs"
            " after each phase")
    tl = Timeline(cv, x0, y16, scale, row_h, blocks + [""])
    for (name, us), units in zip(phases, busy):
        work = max(us - barrier_us, 0.2)
        for b in range(rows):  # the busy blocks, then the waiting ones
            tl.bar(b, t, t + work, MMA_COLOR, pad=3) if b < units else tl.wait(b, t, t + work)
        tl.span(t + work, t + us, rows, tint(COPY_COLOR, 0.5), over=3)
        cv.text(tl.X(t + us / 2), y16 + rows * row_h + 22, name.replace("forward ", "fwd ")
                .replace("backward ", "bwd "), 10, "center")
        cv.text(tl.X(t + us / 2), y16 + rows * row_h + 40, "block 0" if name == "loss" else
                f"{units}", 10, "center", color=GRID)
        t += us
    cv.text(x0 - 10, y16 + rows * row_h + 40, "tiles", 10, "right", color=GRID)
    cv.text(tl.X(ch16_us) + 8, y16 + rows * row_h / 2, "next step\nat once, no\nlaunch", 10)
    ya = 560  # the time axis, shared
    cv.line([x0, tl.X(ch14_us)], [ya, ya], "black")
    for us in range(0, int(ch14_us) + 1, 10):
        cv.line([tl.X(us)] * 2, [ya - 4, ya + 4], "black")
        cv.text(tl.X(us), ya + 16, f"{us} µs", 10, "center")
    cv.legend(x0, ya + 52, [(MMA_COLOR, 0.45, "a block's tiles (a kernel's work, above)"), (
        OKABE_ITO["grey"], 0.35, "between kernels"), (COPY_COLOR, 0.5, "grid barrier"),
        ("white", "...... a block with no tile, waiting")], spacing=30)
    cv.lines(x0, ya + 90, [
        "Measured: the step times, the phases' lengths, the barrier and the graph node (runs of "
        f"{' and '.join(sorted({ch14['date'], phase_rows[0]['date']}))}; the docs' tables hold the "
        "comparisons).", "Not measured: how a phase's or a "
        "kernel's time divides among its blocks; each busy block is drawn for the whole phase less "
        "the barrier."], step=22)
    cv.save(figures, "concept_16_persistent_step.png")


def concept_17(k, figures):
    """One warp's K steps, one accumulator chain against kChains; the weight gradients' tile."""
    tile_m, tile_n = pick(k, 15, "tile_m tile_n")
    mma_m, mma_n, mma_k = pick(k, 3, "mma_m mma_n mma_k")
    (_, _, layer_k, chains), (wide_m, wide_n, weight_k, weight_chains) = (read_ints(
        CH17_TILE_HEADER, rf"using {name} = StepTile<(\d+), (\d+), (\d+), (\d+)>;",
        f"`using {name} = StepTile<...>;`") for name in ("LayerTile", "WeightTile"))
    steps, w = layer_k // mma_k, 58
    cv = Canvas(1400, 660, "Chapter 17: the persistent step's tiles, made fast")
    colors = [OKABE_ITO[c] for c in ("vermillion", "blue", "green", "purple")]
    for y, title, sub, count in [
            (110, "Chapters 15-16: one chain", f"a warp's {mma_m} x {mma_n} mma tile over "
             f"{layer_k} of K: each mma.sync adds to the accumulators the one before it wrote, "
             "and waits for it", 1),
            (260, f"Chapter 17: kChains = {chains} chains (LayerTile, K tiles of {layer_k})",
             f"step s goes to chain s % {chains}: an mma waits for the one {chains} back; the "
             "chains are added once, in the epilogue", chains)]:
        cv.head(40, y - 44, title, sub)
        for s in range(steps):
            x = 60 + s * (w + 10)
            cv.box(x, y, w, 34, colors[s % count % 4], 0.35, text=f"k {s * mma_k}", size=10)
            if s >= count:  # waits for the mma `count` steps back: same accumulators
                cv.arrow(x - count * (w + 10) + w / 2, y + 36, x + w / 2, y + 36, color=GRID,
                         lw=1.0, rad=0.35 if count > 1 else 0.6)
        cv.text(x + w + 20, y + 17, f"{count} set{'s' * (count > 1)} of accumulators")
    x0, y0, cell = 60, 420, 3.0  # WeightTile: wide_m x wide_n tiles, the same warp in each
    cv.bold(40, y0 - 40, f"Chapter 17: WeightTile, {wide_m} x {wide_n} tiles of {tile_m} x "
            f"{tile_n} ({wide_m * tile_m} x {wide_n * tile_n} of dW, K = the batch in tiles of "
            f"{weight_k}, {weight_chains} chains)")
    warps_m, warps_n, wm, wn = tile_m // mma_m, tile_n // mma_n, 1, 1  # the warp: row 1, col 1
    for i in range(wide_m):
        for j in range(wide_n):
            tx, ty = x0 + j * tile_n * cell, y0 + i * tile_m * cell
            cv.box(tx, ty, tile_n * cell, tile_m * cell, C_COLOR, 0.1, lw=1.6)
            cv.grid(tx, ty, warps_n, warps_m, mma_n * cell, mma_m * cell, lw=0.4)
            cv.box(tx + wn * mma_n * cell, ty + wm * mma_m * cell, mma_n * cell, mma_m * cell,
                   MMA_COLOR, 0.6, lw=1)
    cv.lines(x0 + wide_n * tile_n * cell + 40, y0 + 10, [
        f"warp {wm * warps_n + wn} (shaded): the same {mma_m} x {mma_n} mma tile in each of the "
        f"{wide_m * wide_n} tiles;", f"{wide_m} A and {wide_n} B fragments a step feed "
        f"{wide_m * wide_n} mma.sync, where chapter 15's tile loads one of each per mma", "",
        "the loss in the output layer's tiles: 2 L phases and grid barriers a step,", "where "
        "chapter 16 has 2 L + 1"], step=26, size=12)
    cv.save(figures, "concept_17_step_tile.png")


def model_layout_bytes(c, sizes):
    """The bytes of each kind of buffer in a block's shared memory, as model_layout() in
    chapters/18_cluster_model/layout.cuh takes them (16-byte aligned), for the model `sizes`."""
    def take(n):
        return -(-n // 16) * 16
    rows, pad, blocks, padded = pick(c, 18, "on_chip_rows pad cluster_blocks classes_padded")
    parts = {"batch": take(rows * (sizes[0] + pad) * 2), "fp16 weights": 0, "fp32 masters": 0,
             "X of layers 1..L-1": 0, "dZ, bias, logits": 0, "partial products": 0}
    layers, partial_cols = len(sizes) - 1, 0
    for l in range(layers):
        hidden = l + 1 < layers
        own = sizes[l + 1] // blocks if hidden else sizes[-1]
        rows16 = padded if not hidden else (-(-own // 8) * 8 if l == 0 else 16)
        parts["fp16 weights"] += take(rows16 * (sizes[l] + pad) * 2)
        if l > 0:
            parts["fp32 masters"] += take(own * sizes[l] * 4)
            parts["X of layers 1..L-1"] += take(rows * (sizes[l] + pad) * 2)
        parts["dZ, bias, logits"] += take(padded * 4) + take(rows * c["ch18_dz_stride"] * 2)
        if l + 2 < layers:
            partial_cols = max(partial_cols, own)
    parts["dZ, bias, logits"] += take(rows * sizes[-1] * 4) + take(rows * sizes[-1] * 2)  # grad
    parts["partial products"] = 2 * take(blocks * rows * partial_cols * 4)
    return parts


def concept_18(k, figures):
    """The model in one cluster: the stores into each other's shared memory, the layout, a step."""
    parts = model_layout_bytes(k, MODEL)
    blocks, rows, limit = pick(k, 18, "cluster_blocks on_chip_rows on_chip_smem_limit")
    own, sender, layers = MODEL[1] // blocks, 2, len(MODEL) - 1
    cv = Canvas(1400, 810, "Chapter 18: the model in one cluster's shared memory, the blocks "
                "storing into each other's")
    x0, y0, bw = 60, 160, 70  # the blocks in a row, each owning rows of every hidden layer
    cv.bold(x0, 70, f"one cluster of {blocks} blocks ({'-'.join(map(str, MODEL))}, batch "
            f"{rows}): block b owns rows [{own}b, {own}b + {own}) of each hidden layer", 12)
    for b in range(blocks):
        bx = x0 + b * (bw + 10)
        cv.rect(bx, y0, bw, 120, face=tint(C_COLOR, 0.08), edge=MMA_COLOR if b == sender else
                GRID, lw=2.2 if b == sender else 1.0)
        cv.text(bx + bw / 2, y0 + 14, f"block {b}", 10, "center", weight="bold")
        cv.box(bx + 8, y0 + 28, bw - 16, 30, A_COLOR, 0.35, lw=0.8, text=f"W rows\n{own * b}-"
               f"{own * b + own - 1}", size=8)
        cv.box(bx + 8, y0 + 66, bw - 16, 44, B_COLOR, 0.2, lw=0.8, text=f"X whole\n{rows} x "
               f"{MODEL[1]}", size=8)
        if b != sender:
            cv.arrow(x0 + sender * (bw + 10) + bw / 2, y0 - 2, bx + bw / 2, y0 - 2,
                     color=MMA_COLOR, lw=0.9, rad=-0.12 if b > sender else 0.5)
    cv.lines(x0, y0 + 146, [
        f"forward layer l: every block stores its {rows} x {own} outputs into X of layer l + 1 in "
        f"all {blocks} blocks (map_shared_rank; arrows: block {sender}'s stores)",
        f"backward layer l: partial products go to their columns' owner, which adds the {blocks} "
        "slots in block order"], step=22)
    y1, scale, x = 400, 1200 / limit, x0  # one block's shared memory, to scale
    cv.bold(x0, y1 - 22, f"a block's shared memory, to scale: {sum(parts.values()) / 1024:.1f} "
            f"of {limit // 1024} KiB (model_layout(); the first layer's fp32 masters stay in "
            "global memory)", 12)
    colors = [COPY_COLOR, A_COLOR, A_COLOR, B_COLOR, EPILOGUE_COLOR, MMA_COLOR, OKABE_ITO["grey"]]
    for i, ((name, size), color) in enumerate(zip(parts.items(), colors)):
        cv.box(x, y1, size * scale, 50, color, 0.35, lw=1)
        cv.text(x + size * scale / 2, y1 + 58 + 34 * (i % 2), f"{name}: {size / 1024:.1f} KiB",
                9, "center", va="top")
        x += size * scale
    cv.rect(x0, y1, limit * scale, 50, edge="black", lw=1.2, linestyle="--")
    # A step: phases, each ending where the next reads what the others stored (training.cuh's
    # cluster.sync() calls: after each forward layer but the output, after each backward layer
    # that sends partial products, at the step's end).
    y2, pw, x = 610, 118, x0
    phases = [f"fwd {l}" for l in range(layers - 1)] + \
        [f"output, loss,\nbwd {layers - 1}, {layers - 2}"] + \
        [f"bwd {l}" for l in range(layers - 3, 0, -1)] + ["bwd 0 (SGD)"]
    cv.bold(x0, y2 - 40, "a step (not to scale): a cluster barrier wherever a block next reads "
            "what the others stored, and at the step's end", 12)
    for name in phases:
        cv.box(x, y2, pw, 50, MMA_COLOR, 0.3, lw=1, text=name, size=10)
        cv.rect(x + pw, y2 - 8, 14, 66, face=tint(COPY_COLOR, 0.8), edge="none")
        x += pw + 24
    cv.legend(x0, y2 + 100, [(MMA_COLOR, 0.3, "products from the block's own shared memory"), (
        COPY_COLOR, 0.8, "cluster.sync(): barrier.cluster, release and acquire")], spacing=30)
    cv.text(x0, y2 + 140, f"{len(phases)} cluster barriers a step, each across the {blocks} blocks "
            f"of one GPC; chapter 17's step has 2 L = {2 * layers} grid barriers, through L2.")
    cv.save(figures, "concept_18_cluster_model.png")


def concept_19(k, figures):
    """Chapter 19 against chapter 18: one forward exchange of a few blocks, schematic."""
    blocks, rows, unit = k["ch18_cluster_blocks"], 5, 46
    # Not measured: each block's product, its stores, the fence, the barrier, the last landing.
    work, send, fence, barrier, land = [5.0, 6.2, 4.6, 5.6, 5.2], 1.2, 1.6, 1.4, 0.5
    cv = Canvas(1400, 720, "Chapter 19: a block waits for the bytes it reads, not for the cluster")
    names = [f"block {b}" for b in range(rows)] + [f"... {blocks} in all"]
    release, landed = max(work) + send + fence, max(w + send for w in work) + land
    for y, ch18, title, sub in [
            (130, True, "Chapter 18: stores, then cluster.sync()", f"each block stores its columns "
             f"into all {blocks} blocks, then arrives: MEMBAR.ALL.GPU waits for its stores, and "
             "no block goes on before the last has arrived"),
            (430, False, "Chapter 19: st.async, then each block's own mbarrier", "each block "
             f"sends its columns to the {blocks - 1} others, each store counting its bytes off "
             "the receiver's mbarrier; a block goes on once the bytes it expects have landed")]:
        cv.head(40, y - 52, title, sub)
        tl, go = Timeline(cv, 190, y, unit, 26, names), release + barrier if ch18 else landed
        for b, w in enumerate(work):  # product, stores, (fence), wait, the next layer
            tl.bar(b, 0, w, MMA_COLOR)
            tl.bar(b, w, w + send, COPY_COLOR, 0.7)
            if ch18:
                tl.bar(b, w + send, w + send + fence, OKABE_ITO["grey"], 0.5)
            else:  # the next batch's copy, under the wait
                cv.box(tl.X(w + send), y + b * 26 + 17, 2.4 * unit, 5, OKABE_ITO["yellow"], 0.9, 0)
            tl.wait(b, w + send + fence * ch18, release if ch18 else landed)
            tl.bar(b, go, go + 3, MMA_COLOR, 0.25)
        if ch18:
            tl.span(release, go, rows, tint(OKABE_ITO["blue"], 0.8), over=4)
        cv.text(tl.X(release + barrier / 2) if ch18 else tl.X(landed) + 4, y + rows * 26 + 22,
                "barrier" if ch18 else "the last bytes land: the phase completes", 10,
                "center" if ch18 else "left")
    cv.legend(190, 640, [
        (MMA_COLOR, 0.45, "a block's product"), (COPY_COLOR, 0.7, "its stores to the others"),
        (OKABE_ITO["grey"], 0.5, "the release fence"), (OKABE_ITO["blue"], 0.8, "cluster barrier"),
        (OKABE_ITO["yellow"], 0.9, "the next batch's copy (layer 0)"),
        (MMA_COLOR, 0.25, "the next layer")], spacing=14)
    cv.text(190, 680, "Schematic: the lengths are drawn, not measured. The measured sections of "
            "a step, both ways, are in docs/19_on_chip.md.")
    cv.save(figures, "concept_19_on_chip.png")


def concept_20(k, figures):
    """Chapter 20: e4m3 and e5m2, a tensor's scale and its amax's path, the promoted consumer."""
    cv = Canvas(1400, 860, "Chapter 20: 8-bit operands, a scale per tensor, sums promoted to fp32")
    cv.head(40, 70, "The two formats", "1 sign bit, then exponent and mantissa bits; a code is "
            "the value of x * s, s a power of two per tensor")
    colors = {"s": OKABE_ITO["grey"], "e": OKABE_ITO["blue"], "m": OKABE_ITO["orange"]}
    for row, (name, bits, facts) in enumerate([
            ("e4m3", "seeeemmm", "bias 7, largest 448, smallest 2^-9; no infinity, one NaN a sign"),
            ("e5m2", "seeeeemm", "bias 15, largest 57344, smallest 2^-16; infinities, NaNs")]):
        y = 130 + row * 54
        cv.bold(40, y + 17, name, 13)
        for i, bit in enumerate(bits):
            cv.box(110 + i * 34, y, 34, 34, colors[bit], 0.35, text=bit, size=12)
        cv.text(400, y + 17, facts)
    cv.legend(110, 250, [(colors["s"], 0.35, "sign"), (colors["e"], 0.35, "exponent"),
                         (colors["m"], 0.35, "mantissa")], spacing=18)
    cv.head(40, 310, "A tensor's scale and its amax", "each kernel that writes a tensor's fp8 "
            "copy raises its amax; once a step, the amax joins a history of the last 16")
    cv.flow(40, 360, 100, [
        ("epilogue", "codes of x * s\n+ |x|'s warp maximum", MMA_COLOR, 0.25, 230),
        ("amax slot", "one atomicMax\na warp", COPY_COLOR, 0.3, 190),
        ("history", "the last 16 amaxes\n(advance_scaling)", OKABE_ITO["yellow"], 0.35, 220),
        ("next scale", "largest power of two\nwith amax * s <= 448", OKABE_ITO["green"], 0.3, 240)],
        gap=50)
    cv.text(40, 490, "The next step's epilogues quantise at the new scale; a product multiplies "
            "its sum by the 1 / s each operand's copy was made at.")
    cv.head(40, 560, "The consumer: a K tile in two halves, each promoted, the two consumers in "
            "turns", "4 wgmma m64n128k32 e4m3 into a 64-register part, wait, add it to the fp32 "
            "total; each issues a half only after the other has issued its own")
    names = ["tensor cores", "consumer 0", "consumer 1"]
    tl = Timeline(cv, 190, 620, 92, 34, names)
    for i in range(8):  # schematic: a half's wgmmas, then its adds while the other's half runs
        c = i % 2
        tl.bar(0, i, i + 1, MMA_COLOR, 0.45 if c == 0 else 0.25, text=f"c{c} h{i // 2 % 2}",
               size=10)
        tl.bar(1 + c, i, i + 1, MMA_COLOR, 0.45 if c == 0 else 0.25)
        tl.bar(1 + c, i + 1, i + 1.6, OKABE_ITO["green"], 0.35)
    cv.legend(190, 756, [(MMA_COLOR, 0.45, "consumer 0's half"), (MMA_COLOR, 0.25,
                          "consumer 1's half"), (OKABE_ITO["green"], 0.35,
                          "64 adds into the fp32 total")], spacing=18)
    cv.text(190, 800, "Schematic: the lengths are drawn, not measured. The measured error as K "
            "grows: fp8_error_vs_k.png.")
    cv.save(figures, "concept_20_fp8_gemm.png")


def main():
    figures = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "figures")
    os.makedirs(figures, exist_ok=True)
    sns.set_theme(style="white", font="DejaVu Sans")
    k = {**read_constants(), "sms": read_ints(SM_LOG, r"(\d+) SMs", "'N SMs'")[0]}
    for name in sorted(name for name in globals() if name.startswith("concept_")):
        globals()[name](k, figures)

if __name__ == "__main__":
    main()
