#!/usr/bin/env bash
# One chapter's trainer from two source trees, A and B (say main and a change), timed in one call:
# both built, then run alternately, A first on odd repetitions and B first on even ones (the
# second of two runs meets a hotter GPU), every run a fresh process of EPOCHS epochs without
# evaluation. A claim that B is faster than A then rests on one call, as docs/conventions.md asks.
#   maint/ab_train.sh OUT CHAPTER A_DIR B_DIR [C_DIR...] BATCHxHIDDEN...
#   e.g. git worktree add /tmp/main main; maint/ab_train.sh OUT 16_persistent_step /tmp/main . \
#          32x128 256x128 32x512
# More than two trees (variants c, d, ... in the order given) are run in turn too, the order
# rotating by one each repetition, and each is compared with A.
# REPS (default 3) repetitions, EPOCHS (default 3) epochs a run, DATA_DIR (default the tree's
# data/mnist). Writes OUT/ab.csv (every epoch of every run: variant, batch, hidden, rep, epoch,
# ms_per_step, sm_clock_mhz, date, gpu, driver) and OUT/ab_summary.csv (per shape, the median
# over runs of epochs 2 on, and B / A, C / A, ...), prints both, and keeps each run's log and CSVs
# under OUT.
set -uo pipefail
if [ $# -lt 5 ]; then
  echo "error: usage: maint/ab_train.sh OUT CHAPTER A_DIR B_DIR [C_DIR...] BATCHxHIDDEN..." >&2
  exit 1
fi
out=$1 chapter=$2
shift 2
variants=() dirs=()
for letter in a b c d e f g h; do
  [ $# -gt 0 ] && [ -d "$1" ] || break  # the trees, then the shapes
  variants+=("$letter") dirs+=("$(cd "$1" && pwd)")
  shift
done
[ ${#variants[@]} -ge 2 ] && [ $# -ge 1 ] ||
  { echo "error: usage: maint/ab_train.sh OUT CHAPTER A_DIR B_DIR [C_DIR...] BATCHxHIDDEN..." >&2
    exit 1; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
reps=${REPS:-3} epochs=${EPOCHS:-3} data_dir=${DATA_DIR:-$root/data/mnist}
meson_cmd=(meson)
command -v meson >/dev/null || meson_cmd=(python3 -m mesonbuild.mesonmain)
[ "$epochs" -ge 2 ] 2>/dev/null ||
  { echo "error: EPOCHS=$epochs: the summary uses epochs 2 on, so at least 2" >&2; exit 1; }
[ -f "$data_dir/train-images-idx3-ubyte" ] ||
  { echo "error: no MNIST in $data_dir (data/fetch.sh mnist, or DATA_DIR=...)" >&2; exit 1; }
for shape in "$@"; do
  [[ $shape =~ ^[0-9]+x[0-9]+$ ]] || { echo "error: shape '$shape' is not BATCHxHIDDEN" >&2; exit 1; }
done
mkdir -p "$out"

build() {  # variant, source tree
  local build_dir=$out/build_$1
  { [ -f "$build_dir/build.ninja" ] || "${meson_cmd[@]}" setup "$build_dir" "$2"; } \
    >"$out/build_$1.txt" 2>&1 &&
    ninja -C "$build_dir" "chapters/train_$chapter" >>"$out/build_$1.txt" 2>&1 ||
    { echo "error: building $chapter from $2 failed (last lines of $out/build_$1.txt):" >&2
      tail -n 5 "$out/build_$1.txt" >&2; return 1; }
}
pids=()
for i in "${!variants[@]}"; do
  build "${variants[i]}" "${dirs[i]}" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || exit 1; done

echo "variant,batch,hidden,rep,epoch,ms_per_step,sm_clock_mhz,date,gpu,driver" >"$out/ab.csv"
for ((rep = 1; rep <= reps; rep++)); do
  shift_by=$(((rep - 1) % ${#variants[@]}))
  order="${variants[*]:shift_by} ${variants[*]:0:shift_by}"
  for shape in "$@"; do
    batch=${shape%x*} hidden=${shape#*x}
    for variant in $order; do
      run=$out/runs/${variant}_b${batch}_h${hidden}_r$rep
      mkdir -p "$run"
      if ! "$out/build_$variant/chapters/train_$chapter" --batch "$batch" --hidden "$hidden" \
        --epochs "$epochs" --no-eval --data-dir "$data_dir" --out-dir "$run" >"$run/log.txt" 2>&1; then
        echo "error: $variant at batch $batch, hidden $hidden failed:" >&2
        tail -n 3 "$run/log.txt" >&2
        exit 1
      fi
      python3 - "$run/${chapter}_epochs.csv" "$variant" "$rep" >>"$out/ab.csv" <<'PY'
import csv, sys
path, variant, rep = sys.argv[1:4]
for r in csv.DictReader(open(path)):
    print(",".join([variant, r["batch"], r["layers"].split("-")[1], rep, r["epoch"],
                    r["ms_per_step"], r["sm_clock_mhz"], r["date"], f'"{r["gpu"]}"',
                    r["driver"]]))
PY
    done
  done
done

python3 - "$out/ab.csv" "$out/ab_summary.csv" "${dirs[@]}" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
dirs = sys.argv[3:]
variants = "abcdefgh"[: len(dirs)]
shapes = sorted({(int(r["batch"]), int(r["hidden"])) for r in rows})
with open(sys.argv[2], "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["batch", "hidden", "a_us"] + [c for v in variants[1:] for c in (f"{v}_us", f"{v}_over_a")]
               + ["runs", "sm_clock_mhz_min", "sm_clock_mhz_max"])
    for batch, hidden in shapes:
        mine = [r for r in rows if (int(r["batch"]), int(r["hidden"])) == (batch, hidden)]
        us = {v: statistics.median(1000 * float(r["ms_per_step"]) for r in mine
                                   if r["variant"] == v and int(r["epoch"]) >= 2)
              for v in variants}
        clocks = [int(r["sm_clock_mhz"]) for r in mine]
        w.writerow([batch, hidden, f"{us['a']:.2f}"]
                   + [c for v in variants[1:] for c in (f"{us[v]:.2f}", f"{us[v] / us['a']:.3f}")]
                   + [len({r["rep"] for r in mine}), min(clocks), max(clocks)])
for v, d in zip(variants, dirs):
    print(f"{v.upper()} = {d}")
print(open(sys.argv[2]).read(), end="")
PY
