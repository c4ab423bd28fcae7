"""dvc.yaml is derived from the notebooks' imports and must match the committed file."""

from __future__ import annotations

from pathlib import Path

import yaml

from cogrsi_lib.dvc_graph import dvc_yaml, stage_deps, stage_plots

ROOT = Path(__file__).resolve().parents[1]


def test_committed_dvc_yaml_is_the_derived_one():
    assert (ROOT / "dvc.yaml").read_text() == dvc_yaml(ROOT), "run `cogrsi dvc-yaml`"


def test_every_stage_declares_its_summary_as_a_metric():
    doc = yaml.safe_load((ROOT / "dvc.yaml").read_text())
    assert {m.split("/")[1] for m in doc["metrics"]} == set(doc["stages"])
    assert all(p.endswith(".svg") for p in doc["plots"])


def write(root: Path, rel: str, text: str = "") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_deps_follow_lazy_relative_and_data_reading_imports(tmp_path):
    write(tmp_path, "cogrsi_lib/__init__.py")
    write(tmp_path, "cogrsi_lib/alpha/__init__.py", "from .one import f\n")
    write(tmp_path, "cogrsi_lib/alpha/one.py", "def f():\n    from cogrsi_lib import beta\n")
    # a module of a reached package that nothing imports is still followed (lazy exports)
    write(tmp_path, "cogrsi_lib/alpha/lazy.py", "import cogrsi_lib.gamma.deep\n")
    write(tmp_path, "cogrsi_lib/beta.py", "from cogrsi_lib.bench import load\n")
    write(tmp_path, "cogrsi_lib/gamma/__init__.py")
    write(tmp_path, "cogrsi_lib/gamma/deep.py")
    write(tmp_path, "cogrsi_lib/bench/__init__.py", "def load(): ...\n")
    write(tmp_path, "cogrsi_lib/unused.py")
    write(tmp_path, "notebooks/demo.py",
          "from cogrsi_lib.alpha import f\nshow_chart(chart, out / 'curve')\n")
    deps = stage_deps("demo", tmp_path)
    assert deps == ["notebooks/demo.ipynb", "cogrsi_lib/__init__.py", "cogrsi_lib/alpha",
                    "cogrsi_lib/bench", "cogrsi_lib/beta.py", "cogrsi_lib/gamma", "data"]
    assert stage_plots("demo", tmp_path) == ["reports/demo/curve.svg"]
    write(tmp_path, "notebooks/plain.py", "import cogrsi_lib.gamma\n")
    assert stage_deps("plain", tmp_path) == ["notebooks/plain.ipynb", "cogrsi_lib/__init__.py",
                                             "cogrsi_lib/gamma"]


def test_a_stage_depends_on_its_parameter_schema(tmp_path, monkeypatch):
    """The schema is imported by name (cogrsi_lib.stage_params.SCHEMAS), out of the notebook's
    imports: its module, and what that imports, are dependencies all the same."""
    from cogrsi_lib import stage_params

    write(tmp_path, "cogrsi_lib/__init__.py")
    write(tmp_path, "cogrsi_lib/stage_params.py")
    write(tmp_path, "cogrsi_lib/alpha/__init__.py")
    write(tmp_path, "cogrsi_lib/alpha/params.py", "from cogrsi_lib.gamma import Base\n")
    write(tmp_path, "cogrsi_lib/gamma/__init__.py", "class Base: ...\n")
    write(tmp_path, "cogrsi_lib/beta.py")
    write(tmp_path, "notebooks/demo.py", "from cogrsi_lib import stage_params\n"
                                         "p = stage_params.load('demo', params)\n")
    assert stage_deps("demo", tmp_path) == ["notebooks/demo.ipynb", "cogrsi_lib/__init__.py",
                                            "cogrsi_lib/stage_params.py"]
    monkeypatch.setitem(stage_params.SCHEMAS, "demo", "cogrsi_lib.alpha.params:DemoParams")
    assert stage_deps("demo", tmp_path) == ["notebooks/demo.ipynb", "cogrsi_lib/__init__.py",
                                            "cogrsi_lib/alpha", "cogrsi_lib/gamma",
                                            "cogrsi_lib/stage_params.py"]
    # every stage of the repository: its schema's part is among its dependencies
    for stage, entry in stage_params.SCHEMAS.items():
        if stage == "demo":
            continue
        part = "/".join(entry.partition(":")[0].split(".")[:2])
        assert part in stage_deps(stage, ROOT), stage


def test_a_stage_that_names_an_adapter_or_a_rules_file_depends_on_it(tmp_path):
    from cogrsi_lib.dvc_graph import file_deps

    write(tmp_path, "params.yaml", "reader_eval:\n  model: {backend: embedded, adapter: "
                                   "reports/train/adapter}\nloops:\n  model: {backend: "
                                   "embedded, adapter: null}\naudit:\n  translators:\n"
                                   "  - {model: {backend: vllm, adapter: a/b}}\n"
                                   "  rules: [handwritten, reports/loops/c.parquet]\n"
                                   "harness:\n  rules: handwritten\n")
    assert file_deps("reader_eval", tmp_path) == ["reports/train/adapter"]
    assert file_deps("loops", tmp_path) == []
    assert file_deps("audit", tmp_path) == ["a/b", "reports/loops/c.parquet"]
    assert file_deps("harness", tmp_path) == []
    assert file_deps("pairs", tmp_path) == []
    assert file_deps("pairs", tmp_path / "nowhere") == []


def test_the_audit_of_the_committed_pipeline_runs_after_the_loops():
    import yaml

    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    assert "reports/loops/audit_candidates.parquet" in stages["audit"]["deps"]
