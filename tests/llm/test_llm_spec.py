"""One way to name a model: ModelSpec, the backend registry and the settings of each kind."""

from __future__ import annotations

import ast
import importlib.util
import typing
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from cogrsi_lib.llm import CachedBackend, ScriptedBackend
from cogrsi_lib.llm.backend import BACKEND_SPECS, BackendSpec, register_backend
from cogrsi_lib.llm.config import build_backend
from cogrsi_lib.llm.embedded import EmbeddedSpec
from cogrsi_lib.llm.fake import FakeSpec, ScriptedSpec
from cogrsi_lib.llm.openai_backend import OpenAIBackend, OpenAISpec
from cogrsi_lib.llm.spec import CATALOGUE, parse_model, spec_union
from cogrsi_lib.llm.vllm_backend import VLLMBackend, VLLMEngine, VLLMSpec
from cogrsi_lib.stage_params import SCHEMAS, StageParams, StageParamsError, load, schema


def test_the_catalogue_registers_every_kind_and_a_bare_kind_is_its_defaults() -> None:
    assert set(BACKEND_SPECS) >= {"embedded", "vllm", "openai", "fake", "scripted"}
    assert len(CATALOGUE) == len({m for m in CATALOGUE})
    for kind, cls in BACKEND_SPECS.items():
        if kind == "openai":  # model and base_url have no defaults
            continue
        assert parse_model(kind) == parse_model({"backend": kind}) == cls()
        assert type(parse_model(kind)) is cls
    spec = parse_model({"backend": "embedded", "cache_dir": "c", "max_batch": 4})
    assert parse_model(spec) is spec


@pytest.mark.parametrize("given,message", [
    ({"backend": "gpt"}, "'model': unknown backend (kinds: embedded, vllm, openai, fake"),
    ("scripted-alt", "'model': unknown backend"),
    ({"cache_dir": "c"}, "'model': a model's settings name their backend"),
    ({"backend": "embedded", "engine": {}}, "unknown key 'model.engine'"),
    ({"backend": "fake", "base_url": "http://x/v1"}, "unknown key 'model.base_url'"),
    ({"backend": "vllm", "engine": {"max_model_len": "long"}},
     "'model.engine.max_model_len': Input should be a valid integer"),
    ({"backend": "vllm", "engine": {"swap_space": 4}}, "unknown key 'model.engine.swap_space'"),
    ({"backend": "openai", "model": "m", "base_url": "http://x/v1",
      "structured_outputs": "grammar"}, "'model.structured_outputs': Input should be"),
    ({"backend": "openai", "model": "m", "base_url": []}, "'model.base_url'"),
    ({"backend": "scripted", "cache_dir": "c"}, "'model.cache_dir': Input should be None"),
])
def test_bad_settings_are_refused_naming_the_key(given, message) -> None:
    with pytest.raises(ValueError) as err:
        parse_model(given)
    assert message in str(err.value)


def test_vllm_engine_names_are_vllm_engine_args() -> None:
    """Every engine setting is an ``EngineArgs`` field of the installed vLLM (read from its
    source, not imported)."""
    found = importlib.util.find_spec("vllm")
    if found is None or not found.submodule_search_locations:
        pytest.skip("vllm is not installed")
    source = Path(next(iter(found.submodule_search_locations))) / "engine" / "arg_utils.py"
    tree = ast.parse(source.read_text())
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "EngineArgs"]
    names = {n.target.id for n in cls.body
             if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    assert set(VLLMEngine.model_fields) <= names, set(VLLMEngine.model_fields) - names


def test_only_the_engine_settings_given_reach_the_engine(fake_vllm) -> None:
    b = build_backend({"backend": "vllm", "model": "m", "engine": {"max_model_len": 4096,
                                                                    "enforce_eager": True}})
    direct = VLLMBackend("m", engine_kwargs={"max_model_len": 4096, "enforce_eager": True})
    assert b.engine_kwargs == direct.engine_kwargs and b.identity == direct.identity
    # an engine setting given as vLLM's own default is still given (and keyed) as before
    assert (build_backend({"backend": "vllm", "model": "m", "engine": {"seed": 0}}).identity
            == VLLMBackend("m", engine_kwargs={"seed": 0}).identity)
    assert VLLMSpec(model="m").engine.kwargs() == {}


@pytest.mark.parametrize("settings,direct", [
    ({"chat_template_kwargs": None}, {}),
    ({"chat_template_kwargs": {}}, {"chat_template_kwargs": {}}),
    ({"chat_template_kwargs": {"enable_thinking": True}},
     {"chat_template_kwargs": {"enable_thinking": True}}),
    ({"engine": {"dtype": "bfloat16", "gpu_memory_utilization": 0.5}},
     {"engine_kwargs": {"dtype": "bfloat16", "gpu_memory_utilization": 0.5}}),
])
def test_vllm_identity_is_the_backends_own(fake_vllm, settings, direct) -> None:
    spec = parse_model({"backend": "vllm", "model": "m", **settings})
    assert spec.build().identity == VLLMBackend("m", **direct).identity


@pytest.mark.parametrize("settings,extra_body", [
    ({}, None),
    ({"extra_body": {"top_k": 5}}, {"top_k": 5}),
    ({"chat_template_kwargs": {"enable_thinking": True}},
     {"chat_template_kwargs": {"enable_thinking": True}}),
    ({"extra_body": {"chat_template_kwargs": {"a": 1}}, "chat_template_kwargs": {"b": 2}},
     {"chat_template_kwargs": {"a": 1, "b": 2}}),
    ({"chat_template_kwargs": None}, None),
])
def test_openai_identity_is_the_backends_own(settings, extra_body) -> None:
    pytest.importorskip("openai")
    urls = ["http://b:1/v1", "http://a:1/v1"]
    spec = parse_model({"backend": "openai", "model": "m", "base_url": urls, **settings})
    built = spec.build()
    direct = OpenAIBackend("m", base_url=urls, extra_body=extra_body)
    assert built.identity == direct.identity and built.extra_body == direct.extra_body
    assert built.base_urls == urls


def test_fake_and_the_cache(tmp_path) -> None:
    b = build_backend({"backend": "fake", "reply": {"answer": "A", "text": "t"},
                       "cache_dir": "c"}, base_dir=tmp_path)
    assert isinstance(b, CachedBackend) and b.cache.root == tmp_path / "c"
    assert b.identity == ScriptedBackend("x").identity == "fake:scripted"
    assert FakeSpec(model="named").build().identity == "fake:named"


def test_embedded_settings_reach_the_backend(tmp_path) -> None:
    from cogrsi_lib.llm.embedded import EmbeddedBackend, embedded_available

    ok, why = embedded_available()
    if not ok:
        pytest.skip(f"embedded model unavailable: {why}")
    spec = EmbeddedSpec(max_batch=4, threads=1, cache_dir="c")
    built = spec.build(tmp_path)
    direct = EmbeddedBackend(max_batch=4, threads=1)
    assert isinstance(built, CachedBackend) and built.cache.root == tmp_path / "c"
    assert (built.identity, built.inner.max_batch, built.inner.threads) == (
        direct.identity, 4, 1)


def test_scripted_is_built_from_the_stages_stand_ins() -> None:
    made = ScriptedBackend("a", model="stand-in")
    spec = parse_model("scripted")
    assert spec.build(stand_in={"default": lambda: made}) is made
    with pytest.raises(ValueError, match="built by the stage"):
        spec.build()
    with pytest.raises(ValueError, match=r"unknown scripted variant 'alt' here \(variants: "
                                         r"default\)"):
        ScriptedSpec(variant="alt").build(stand_in={"default": lambda: made})
    # a real backend ignores the stand-ins
    assert FakeSpec().build(stand_in={"default": lambda: made}) is not made


def test_a_new_backend_is_one_registered_spec() -> None:
    """An SGLang server, sketched as a test would add it: its settings class, registered,
    whose ``make`` builds the OpenAI-compatible client on its URL. Nothing else changes but
    the catalogue line (cogrsi_lib/llm/spec.py) that lets the stage schemas take it."""
    pytest.importorskip("openai")

    @register_backend("sglang")
    class SGLangSpec(BackendSpec):
        backend: Literal["sglang"] = "sglang"
        model: str
        url: str = "http://127.0.0.1:30000/v1"

        def make(self, base_dir: Any = None) -> OpenAIBackend:
            return OpenAIBackend(self.model, base_url=self.url,
                                 extra_body={"separate_reasoning": False})

    try:
        spec = parse_model({"backend": "sglang", "model": "served", "cache_dir": "c"})
        assert isinstance(spec, SGLangSpec)
        built = spec.build("/repo")
        assert isinstance(built, CachedBackend) and str(built.cache.root) == "/repo/c"
        assert built.inner.base_urls == ["http://127.0.0.1:30000/v1"]
        assert built.identity.startswith("openai:served#")
        with pytest.raises(ValueError, match="unknown key 'model.engine'"):
            parse_model({"backend": "sglang", "model": "served", "engine": {}})

        class Demo(StageParams):  # a schema built after the registration takes the kind
            model: spec_union() = "scripted"  # type: ignore[valid-type]

        assert isinstance(Demo.model_validate({"model": {"backend": "sglang", "model": "x"}}
                                              ).model, SGLangSpec)
        # the stage schemas take the catalogue's kinds, built when they were defined
        with pytest.raises(StageParamsError, match="'model': unknown backend"):
            load("reader_eval", {"model": {"backend": "sglang", "model": "x"}})
        with pytest.raises(TypeError, match="already"):
            register_backend("sglang")(type("Other", (SGLangSpec,), {}))
    finally:
        BACKEND_SPECS.pop("sglang", None)
    with pytest.raises(ValueError, match="unknown backend"):
        parse_model({"backend": "sglang", "model": "served"})


def test_a_registered_kind_names_itself() -> None:
    class Misnamed(BackendSpec):
        backend: Literal["x"] = "x"

    with pytest.raises(TypeError, match="must default to 'y'"):
        register_backend("y")(Misnamed)
    assert "y" not in BACKEND_SPECS


# -- free-form settings ----------------------------------------------------------------------
def _free_form(model: type[BaseModel], seen: set[type]) -> set[str]:
    """``Class.field`` of every field of ``model`` and the models it holds whose type takes
    anything (``Any``), at any depth."""
    if model in seen:
        return set()
    seen.add(model)
    out: set[str] = set()
    for name, field in model.model_fields.items():
        todo, any_here = [field.annotation], False
        while todo:
            t = todo.pop()
            if t is Any:
                any_here = True
            elif isinstance(t, type) and issubclass(t, BaseModel):
                out |= _free_form(t, seen)
            todo.extend(typing.get_args(t))
        if any_here:
            out.add(f"{model.__name__}.{name}")
    return out


def test_the_only_free_form_settings_are_the_three_declared() -> None:
    """Every nested mapping of every stage schema is typed but three pass-throughs, each
    documented where it is declared: a chat template's arguments, an OpenAI-compatible
    request's extra body fields and a constant reply's fields."""
    found: set[str] = set()
    seen: set[type] = set()
    for stage in SCHEMAS:
        found |= _free_form(schema(stage), seen)
    assert found == {"VLLMSpec.chat_template_kwargs", "OpenAISpec.chat_template_kwargs",
                     "OpenAISpec.extra_body", "FakeSpec.reply"}
    # the chat template's arguments are one declared type, used by both backends
    assert (VLLMSpec.model_fields["chat_template_kwargs"].annotation
            == OpenAISpec.model_fields["chat_template_kwargs"].annotation)
