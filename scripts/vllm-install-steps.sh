# The steps install-vllm-cpu.sh and install-vllm-gpu.sh share (sourced by both, not run).
#
# vLLM pins lark==1.2.2 while pddl 0.5.1 declares lark<1.2 (the pddl tests pass on 1.2.2), so
# pip cannot resolve vLLM together with the package: it is installed after it, and pip
# reports that conflict and goes on.

# pip_install_vllm REQUIREMENT EXTRAS: REQUIREMENT into the active environment, once the
# project is installed (with EXTRAS, named in the error); pip's notes on the lark conflict and
# on unreachable local indexes are dropped
pip_install_vllm() {
    python -c 'import cogrsi_lib' 2>/dev/null || {
        echo "install the project first: pip install -e '.[$2]'" >&2; exit 1; }
    pip install -q "$1" 2>&1 \
        | grep -v -E "^WARNING: Location|dependency resolver does not|pddl 0.5.1 requires lark" \
        || true
}

# report_vllm DISTRIBUTION: import vLLM (failing loudly if the build does not import) and
# print the versions that matter
report_vllm() {
    python - "$1" <<'PY'
import importlib.metadata as md
import sys

from vllm import LLM, SamplingParams  # noqa: F401  (a broken or partial install fails here)

print(sys.argv[1], md.version(sys.argv[1]), "| torch", md.version("torch"),
      "| transformers", md.version("transformers"), "| lark", md.version("lark"))
PY
}
