"""Reader systems by name: the registry, its families, the checks on stage parameters, and a
new system added as one module of cogrsi_lib/baselines, used end to end."""

from __future__ import annotations

import sys
import textwrap

import pytest

from cogrsi_lib import baselines, stage_params
from cogrsi_lib.baselines import SYSTEMS, check_systems, is_system, make_system, registry
from cogrsi_lib.baselines.systems import SimToM, SinglePrompt
from cogrsi_lib.llm import ScriptedBackend
from cogrsi_lib.pairs import generate_split, to_frame
from cogrsi_lib.reader import evaluate as ev
from cogrsi_lib.scorecard.variants import make_variant

from .helpers import Script, narrative

#: what a new reader system's module holds: its code and one registration
TOY_MODULE = '''
"""Toy: answers directly, like zero-shot, under its own name."""

from cogrsi_lib.baselines.registry import reader_system
from cogrsi_lib.baselines.systems import SinglePrompt


@reader_system("toy")
def toy(backend, config, principle):
    return SinglePrompt(backend, config, k=1, think=False, name="toy")
'''


@pytest.fixture
def scratch(monkeypatch):
    """The registry as it is, restored after the test (registrations made here vanish)."""
    monkeypatch.setattr(registry, "_ENTRIES", dict(registry._ENTRIES))


@pytest.fixture
def toy_module(scratch, monkeypatch, tmp_path):
    """A new module ``toy_system`` in the package's path: nothing else names it."""
    (tmp_path / "toy_system.py").write_text(textwrap.dedent(TOY_MODULE), encoding="utf-8")
    monkeypatch.setattr(baselines, "__path__", [*baselines.__path__, str(tmp_path)])
    monkeypatch.setattr(registry, "_DISCOVERED", False)
    yield "cogrsi_lib.baselines.toy_system"
    sys.modules.pop("cogrsi_lib.baselines.toy_system", None)


def test_the_standard_set_comes_from_the_registrations() -> None:
    assert SYSTEMS == ("zero_shot", "cot", "sc6", "sc9", "simtom", "perceptom", "simtom_sc6",
                       "perceptom_sc6", "cogrsi")
    # the reader's ablations (Table 2) are registered but not in the standard set
    assert sorted(registry.known()) == sorted([
        "zero_shot", "cot", "sc<k>", "simtom", "perceptom", "simtom_sc<k>", "perceptom_sc<k>",
        "cogrsi", "cogrsi_noprinciple", "cogrsi_plain", "cogrsi_annotated", "cogrsi_noarb",
        "cogrsi_neutralarb"])
    assert all(is_system(n) for n in SYSTEMS)


@pytest.mark.parametrize("name,kind,k", [("sc3", SinglePrompt, 3), ("sc12", SinglePrompt, 12),
                                         ("simtom_sc9", SimToM, 9)])
def test_a_family_member_outside_the_standard_set_is_built_under_its_name(name, kind, k):
    system = make_system(name, ScriptedBackend(Script(other="Answer: A")))
    assert isinstance(system, kind) and system.name == name
    assert (system.k if kind is SinglePrompt else system.n) == k
    rec = system.answer_batch([narrative()])[0]
    assert rec.system == name and rec.answer == "A"


@pytest.mark.parametrize("name", ["sc1", "sc0", "sc06", "simtom_sc1", "sc", "SC6", "gepa",
                                  "cogrsi2"])
def test_names_outside_the_registry_are_refused_with_the_known_ones(name) -> None:
    """``simtom_sc1`` used to build a system named ``simtom``; ``<k>`` is a whole number >= 2."""
    assert not is_system(name)
    with pytest.raises(ValueError, match="unknown system") as err:
        make_system(name, ScriptedBackend())
    assert "known: zero_shot, cot, sc<k>," in str(err.value) and "cogrsi" in str(err.value)


def test_check_systems_names_every_unknown_one() -> None:
    assert check_systems(["sc6", "cogrsi"]) == ["sc6", "cogrsi"]
    with pytest.raises(ValueError, match=r"unknown systems 'sc1', 'cto'; known: .*perceptom"):
        check_systems(["sc1", "zero_shot", "cto"])


def test_the_stage_parameters_refuse_unknown_systems_when_they_load() -> None:
    p = stage_params.load("reader_eval", {"systems": ["sc3", "simtom_sc9"], "reference": "sc3"})
    assert p.systems == ["sc3", "simtom_sc9"]
    with pytest.raises(stage_params.StageParamsError, match="'systems'.*unknown system 'sc_6'"):
        stage_params.load("reader_eval", {"systems": ["zero_shot", "sc_6"]})
    with pytest.raises(stage_params.StageParamsError, match="'reference'.*unknown system"):
        stage_params.load("reader_eval", {"reference": "SC (k=6)"})


def test_the_scorecard_takes_every_registered_system_and_no_other() -> None:
    """The scorecard's comparison systems are the registry's (it used to refuse ``sc3``,
    which reader_eval ran)."""
    assert make_variant("sc3", ScriptedBackend("x")).name == "sc3"
    with pytest.raises(ValueError, match="unknown variant 'sc1'.*reader systems.*sc<k>"):
        make_variant("sc1", ScriptedBackend("x"))


def test_a_registration_may_not_clash(scratch) -> None:
    with pytest.raises(ValueError, match="already registered"):
        registry.reader_system("cot")(lambda backend, config, principle: None)
    with pytest.raises(ValueError, match="overlaps 'sc<k>'"):
        registry.reader_system("sc7")(lambda backend, config, principle: None)
    registry.reader_system("poll3")(lambda backend, config, principle: None)
    with pytest.raises(ValueError, match="overlaps 'poll3'"):
        registry.reader_system("poll<k>")(lambda backend, config, principle, k: None)
    with pytest.raises(ValueError, match="is not a name of"):
        registry.reader_system("vote<k>", standard=("poll3",))
    with pytest.raises(ValueError, match="at most one <k>"):
        registry.reader_system("a<k>b<k>")
    assert "vote<k>" not in registry.known() and "poll<k>" not in registry.known()


def test_a_system_built_under_another_name_is_refused(scratch) -> None:
    @registry.reader_system("vote<k>", standard=())
    def vote(backend, config, principle, k):
        return SinglePrompt(backend, config, k=k, name="vote")

    assert is_system("vote5") and "vote5" not in baselines.standard_systems()
    with pytest.raises(ValueError, match="'vote5' built a system named 'vote'"):
        make_system("vote5", ScriptedBackend())


def test_a_new_module_in_the_package_is_a_system_end_to_end(toy_module) -> None:
    """Dropping the module in is all it takes: the stage parameters accept the name, the
    registry builds it, and reader_eval's evaluation runs it on its scripted backend."""
    assert toy_module not in sys.modules
    p = stage_params.load("reader_eval", {"systems": ["toy", "zero_shot"], "reference": "toy",
                                          "reader_config": {"direct_max_tokens": 16}})
    assert toy_module in sys.modules and "toy" in registry.known()
    assert "toy" in baselines.standard_systems()  # an exact name is standard unless told
    backend = ScriptedBackend(Script(other="Answer: A"))
    config = p.reader()
    chosen = [make_system(n, backend, config, p.principle) for n in p.systems]
    records = ev.select_pairs(to_frame(generate_split("eval", 23, 8, 4)), 2)
    result = ev.evaluate(chosen, records)
    toy = result.items.filter(result.items["system"] == "toy")
    assert toy.height == records.height and (toy["calls"] == 1).all()
    # the same prompt as zero-shot on the same backend: the same answers
    zs = result.items.filter(result.items["system"] == "zero_shot")
    assert toy["answer"].to_list() == zs["answer"].to_list()
    assert result.paired_table(p.reference)["system"].to_list() == ["zero_shot"]
