#!/usr/bin/env bash
# vLLM for GPUs into the active environment, after `pip install -e '.[dev,gpu]'`.
#
# The floor is the `vllm` extra's (pyproject.toml): the structured-outputs API the backend
# sends. It is installed after the package (scripts/vllm-install-steps.sh says why) and
# brings the CUDA build of torch it was built against.
set -euo pipefail
VLLM_FLOOR=0.12
# shellcheck source=scripts/vllm-install-steps.sh
. "$(dirname "$0")/vllm-install-steps.sh"

pip_install_vllm "vllm>=${VLLM_FLOOR}" dev,gpu
report_vllm vllm
