#!/usr/bin/env bash
# The Python tools outside the build, from the outside (meson test, suite cpu):
#   tests/python_tools_test.sh plots SOURCE_ROOT
#       tools/plot_comparison.py draws every figure and the table from the synthetic CSVs in
#       tests/data/plots/ (curves equal at every step drawn once, a missing point marked), and
#       skips (without failing) when it has no inputs at all; tools/plot.py draws its figures
#       from docs/results/; tools/draw_concepts.py draws the concept figures, the same bytes
#       every run, and stops with an error when a header no longer has a constant it uses
#   tests/python_tools_test.sh pytorch-self-test SOURCE_ROOT DATA_DIR BUILD_ROOT
#       bench/pytorch_mlp.py --self-test: the initial parameters and two epochs of batches it
#       reads from the files of BUILD_ROOT/common/trainer_inputs equal the C++ ones, checksum for
#       checksum: its lines equal those of trainer_inputs --checksums run here
#   tests/python_tools_test.sh docs SOURCE_ROOT
#       tools/check_docs.py on README.md and docs/: excerpts, links, anchors, generated tables
#   tests/python_tools_test.sh docs-self-test SOURCE_ROOT
#       tests/docs_self_test.py: check_docs.py and results_tables.py fail on broken docs
# Exit status 77 (SKIP) when no Python has the modules (Debian: apt-get install python3-seaborn),
# unless MNIST_REQUIRE_PYTHON_TOOLS=1 (set by .ci/run) makes that a failure.
set -u
mode=$1
root=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export MPLCONFIGDIR="$scratch/matplotlib"

fail() {
  echo "FAIL $*"
  exit 1
}

# The first of /usr/bin/python3 (Debian's, where python3-seaborn installs) and python3 on PATH
# that imports every module named.
find_python() {
  local python
  for python in /usr/bin/python3 python3; do
    if command -v "$python" >/dev/null &&
      "$python" -c "import $(IFS=,; echo "$*")" 2>/dev/null; then
      echo "$python"
      return 0
    fi
  done
  # Called as $(find_python ...): what it says goes to stderr.
  local why="no python3 imports $*"
  if [ "${MNIST_REQUIRE_PYTHON_TOOLS:-0}" = 1 ]; then
    echo "FAIL $why (MNIST_REQUIRE_PYTHON_TOOLS=1)" >&2
    exit 1
  fi
  echo "SKIP: $why (Debian: apt-get install python3-seaborn)" >&2
  exit 77
}

is_png() {
  [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
}

plots() {
  local python figures=$scratch/figures output
  python=$(find_python seaborn pandas matplotlib numpy) || exit $?
  output=$("$python" "$root/tools/plot_comparison.py" --results "$root/tests/data/plots" \
    --figures "$figures" 2>&1) || fail "plot_comparison.py on tests/data/plots: $output"
  ! grep -i skipped <<<"$output" || fail "a figure was skipped on complete inputs"
  local png
  for png in comparison_time comparison_speedup comparison_loss; do
    is_png "$figures/$png.png" || fail "$png.png missing, empty or not a PNG"
  done
  [ ! -e "$figures/comparison_gemm.png" ] || fail "comparison_gemm.png is drawn again"
  local table=$figures/comparison_table.md rows
  [ -s "$table" ] || fail "comparison_table.md missing or empty"
  # 2 batch sizes x 3 hidden widths; the newest chapter, then the PyTorch variants in order.
  local header='| batch | hidden | 05_split_k | pytorch_eager | pytorch_compile'
  header+=' | pytorch_cudagraph |'
  grep -qxF "$header" "$table" || fail "table header: $(head -n 3 "$table")"
  rows=$(grep -c '^| [0-9]' "$table")
  [ "$rows" -eq 6 ] || fail "table has $rows rows, expected 6"
  grep -qxF '| 32 | 1024 | 534.4 | 1350.0 (2.53x) | 637.5 (1.19x) | 446.2 (0.84x) |' "$table" ||
    fail "table row batch 32 hidden 1024 is wrong"
  grep -qxF "$header" <<<"$output" || fail "the table was not printed"

  # A chapter whose losses equal chapter 05's at every step is drawn once, with 05 as the
  # reference; a missing point is marked.
  local edited=$scratch/edited
  cp -r "$root/tests/data/plots" "$edited"
  sed 's/^05_split_k,/06_fused_step,/' "$root/tests/data/plots/loss_05_split_k.csv" \
    >"$edited/loss_06_fused_step.csv"
  grep -v '^2000-01-01,.*,pytorch_compile,pytorch,256,4096,' \
    "$root/tests/data/plots/comparison_pytorch.csv" >"$edited/comparison_pytorch.csv"
  output=$("$python" "$root/tools/plot_comparison.py" --results "$edited" \
    --figures "$scratch/edited_figures" 2>&1) || fail "plot_comparison.py on edited CSVs: $output"
  grep -qxF 'equal at every step: 05_split_k = 06_fused_step' <<<"$output" ||
    fail "the equal curves of 05 and 06 were not found: $output"
  grep -qxF 'marked missing point: pytorch_compile at batch 256, hidden 4096' <<<"$output" ||
    fail "the missing point was not marked: $output"
  is_png "$scratch/edited_figures/comparison_loss.png" || fail "comparison_loss.png (edited)"

  mkdir "$scratch/empty"
  output=$("$python" "$root/tools/plot_comparison.py" --results "$scratch/empty" \
    --figures "$scratch/none" 2>&1) || fail "plot_comparison.py without inputs: $output"
  [ "$(grep -c '^skipped' <<<"$output")" -eq 2 ] || fail "without inputs: $output"
  [ -z "$(ls -A "$scratch/none")" ] || fail "without inputs it wrote $(ls "$scratch/none")"

  # tools/plot.py on the committed results.
  output=$("$python" "$root/tools/plot.py" "$root/docs/results" "$scratch/chapter_figures" 2>&1) ||
    fail "plot.py on docs/results: $output"
  for png in loss_curves gemm_tflops epilogue_versions; do
    is_png "$scratch/chapter_figures/$png.png" || fail "plot.py: $png.png missing or not a PNG"
  done

  # The concept figures: all of them, the same bytes twice, and a constant the script cannot
  # find in its header stops it with one error line.
  local concepts=(concept_01_naive concept_02_tiles concept_03_fragments concept_04_ring
    concept_05_split_k concept_06_epilogue concept_07_tma concept_08_wgmma concept_09_roles
    concept_10_tile_scheduler concept_11_clusters concept_12_swap_ab_split_k concept_14_weight_update
    concept_15_small_tile concept_16_persistent_step concept_17_step_tile concept_18_cluster_model
    concept_19_on_chip concept_20_fp8_gemm)
  output=$("$python" "$root/tools/draw_concepts.py" "$scratch/concepts" 2>&1) ||
    fail "draw_concepts.py: $output"
  output=$("$python" "$root/tools/draw_concepts.py" "$scratch/concepts_again" 2>&1) ||
    fail "draw_concepts.py (second run): $output"
  for png in "${concepts[@]}"; do
    is_png "$scratch/concepts/$png.png" || fail "draw_concepts.py: $png.png missing or not a PNG"
    cmp -s "$scratch/concepts/$png.png" "$scratch/concepts_again/$png.png" ||
      fail "draw_concepts.py: $png.png differs between two runs"
  done
  local written
  written=$(find "$scratch/concepts" -type f | wc -l)
  [ "$written" -eq ${#concepts[@]} ] || fail "draw_concepts.py wrote $written files"
  local copy=$scratch/repository
  mkdir -p "$copy/tools"
  cp "$root/tools/draw_concepts.py" "$copy/tools/"
  cp -r "$root/chapters" "$root/common" "$copy/"
  sed -i 's/^constexpr int kStages = /constexpr int kRingStages = /' \
    "$copy/chapters/04_cp_async/gemm.cuh"
  if output=$("$python" "$copy/tools/draw_concepts.py" "$scratch/renamed" 2>&1); then
    fail "draw_concepts.py ran although chapter 04's kStages was renamed"
  fi
  grep -q '^error: chapters/04_cp_async/gemm.cuh .*kStages' <<<"$output" ||
    fail "draw_concepts.py with kStages renamed: $output"
  echo "plots: comparison figures and table from tests/data/plots (equal curves found, a" \
    "missing point marked; no inputs: 2 skips), plot.py on docs/results, ${#concepts[@]}" \
    "concept figures drawn twice, the same bytes; a renamed constant stops draw_concepts.py"
}

# What --self-test asks trainer_inputs for (784-1024-1024-1024-10, seed 42, 2 epochs), asked
# here again, so that the lines to match come from the C++ and not from the script under test.
pytorch_self_test() {
  local python data_dir=$1 build_root=$2
  python=$(find_python numpy) || exit $?
  "$build_root/common/trainer_inputs" --out-dir "$scratch/inputs" --data-dir "$data_dir" \
    --hidden 1024 --seed 42 --epochs 2 --checksums >"$scratch/expected" ||
    fail "trainer_inputs (above)"
  "$python" "$root/bench/pytorch_mlp.py" --self-test --data-dir "$data_dir" \
    --build-dir "$build_root" >"$scratch/actual" 2>"$scratch/stderr" ||
    fail "pytorch_mlp.py --self-test: $(cat "$scratch/stderr")"
  diff "$scratch/expected" "$scratch/actual" ||
    fail "pytorch_mlp.py --self-test differs from trainer_inputs (< C++, > Python)"
  echo "pytorch_mlp --self-test: $(cat "$scratch/stderr")"
}

# The docs' checker needs no module beyond Python's own.
docs() {
  local python
  python=$(find_python json) || exit $?
  "$python" "$root/tools/check_docs.py" --root "$root" || fail "tools/check_docs.py (above)"
}

docs_self_test() {
  local python
  python=$(find_python json) || exit $?
  "$python" "$root/tests/docs_self_test.py" "$root" || fail "tests/docs_self_test.py (above)"
}

case $mode in
  plots) plots ;;
  pytorch-self-test) pytorch_self_test "$3" "$4" ;;
  docs) docs ;;
  docs-self-test) docs_self_test ;;
  *) fail "unknown mode '$mode' (plots, pytorch-self-test, docs or docs-self-test)" ;;
esac
