#!/usr/bin/env bash
# Installs, from Debian 12 packages, whatever zlcore needs to build and test
# and is not installed yet. Idempotent: on a machine that has everything it
# runs no apt at all. Needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libboost-dev libboost-program-options-dev libboost-filesystem-dev
  libyaml-cpp-dev rapidjson-dev libsqlitecpp-dev libsqlite3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-pytest python3-numpy python3-yaml
  sqlite3
)
# Extra groups, asked for by name: `install-deps.sh chromium slurm`.
for extra in "$@"; do
  case "$extra" in
    chromium) packages+=(chromium) ;;
    slurm) packages+=(slurm-wlm munge) ;;
    bench) packages+=(libbenchmark-dev hyperfine) ;;
    lint) packages+=(clang-format-14 clang-tidy-14 python3-flake8) ;;
    # clang-14 with its runtime libraries, which hold libFuzzer and the sanitizers.
    fuzz) packages+=(clang-14 libclang-rt-14-dev) ;;
    *) echo "install-deps.sh: unknown group '$extra' (known: chromium, slurm, bench, lint, fuzz)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
