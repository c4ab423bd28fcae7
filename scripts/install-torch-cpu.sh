#!/usr/bin/env bash
# Install torch's CPU build (the `embedded` extra's runtime) before the package itself, so that
# pip does not fetch the much larger CUDA build from PyPI. It comes from torch's own CPU index;
# where that index cannot be reached, pip's configured sources (e.g. a local wheel directory)
# are tried, and failing those the later install takes torch from PyPI (it runs on the CPU too).
set -uo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n 's/^torch==//p' constraints.txt)
# --no-deps: torch alone from that index; its dependencies come with the package install
if pip install -q --no-deps --retries 0 --timeout 10 \
        --index-url https://download.pytorch.org/whl/cpu "torch==${version}"; then
    echo "torch ${version} (CPU build) installed"
else
    echo "torch's CPU index unreachable and no local build: torch will come from PyPI" >&2
fi
