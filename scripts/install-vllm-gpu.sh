#!/usr/bin/env bash
# vLLM for GPUs into the active environment, after `pip install -e '.[dev,gpu]'`.
#
# The floor is the `vllm` extra's (pyproject.toml): the structured-outputs API the backend
# sends. vLLM pins lark==1.2.2 while pddl 0.5.1 declares lark<1.2 (the pddl tests pass on
# 1.2.2), so pip cannot resolve the two together; installed second, pip reports that conflict
# and goes on. vLLM brings the CUDA build of torch it was built against.
set -euo pipefail
VLLM_FLOOR=0.12

python -c 'import cogrsi_lib' 2>/dev/null || {
    echo "install the project first: pip install -e '.[dev,gpu]'" >&2; exit 1; }
pip install -q "vllm>=${VLLM_FLOOR}" 2>&1 \
    | grep -v -E "^WARNING: Location|dependency resolver does not|pddl 0.5.1 requires lark" || true
python - <<'PY'
import importlib.metadata as md

import vllm  # noqa: F401  (fails loudly if the build does not import)

print("vllm", md.version("vllm"), "| torch", md.version("torch"),
      "| transformers", md.version("transformers"), "| lark", md.version("lark"))
PY
