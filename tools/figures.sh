#!/usr/bin/env bash
# Redraws every figure of docs/figures/ in one go, from the committed CSVs and the headers:
#   tools/plot.py             loss_curves.png, gemm_tflops.png, epilogue_versions.png,
#                             fp8_error_vs_k.png
#                             (docs/results/)
#   tools/plot_comparison.py  comparison_time.png, comparison_speedup.png, comparison_loss.png,
#                             comparison_table.md (docs/results/comparison/), and the same
#                             four in comparison_14_19/ (docs/results/comparison_14_19/)
#   tools/draw_concepts.py    concept_01_naive.png ... concept_11_clusters.png (the chapters'
#                             headers), concept_12_swap_ab_split_k.png (chapters 12 and 13),
#                             concept_14_weight_update.png (chapters 07, 10 and 14),
#                             concept_15_small_tile.png (chapters 12, 14 and 15),
#                             concept_16_persistent_step.png
#                             (chapter 16, docs/results/alternatives/persistent_step/,
#                             comparison_14_19/ and training/small_tile/),
#                             concept_17_step_tile.png (chapter 17's tile.cuh),
#                             concept_18_cluster_model.png, concept_19_on_chip.png and
#                             concept_20_fp8_gemm.png
# Usage: tools/figures.sh [FIGURES_DIR]    (default: docs/figures)
# Python: the first of /usr/bin/python3 (Debian's, where python3-seaborn installs) and python3
# that imports seaborn, pandas, matplotlib and numpy.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
figures=${1:-docs/figures}

python=
for candidate in /usr/bin/python3 python3; do
  if command -v "$candidate" >/dev/null &&
    "$candidate" -c "import seaborn, pandas, matplotlib, numpy" 2>/dev/null; then
    python=$candidate
    break
  fi
done
if [ -z "$python" ]; then
  echo "error: no python3 imports seaborn, pandas, matplotlib, numpy" \
    "(Debian: apt-get install python3-seaborn)" >&2
  exit 1
fi

"$python" tools/plot.py docs/results "$figures"
"$python" tools/plot_comparison.py --results docs/results/comparison --figures "$figures"
"$python" tools/plot_comparison.py --results docs/results/comparison_14_19 \
  --figures "$figures/comparison_14_19"
"$python" tools/draw_concepts.py "$figures"
