"""PRISM's skill library as data (zing-social-mind-report §5.3.1 and §5.3.3, Table 9).

A skill unit is a target mental variable, positive and negative triggers, a short workflow,
a failure check and a self-exit condition, plus the family (layer L0-L7) it belongs to, its
kind (``macro``: a scene-level entry point such as false belief or faux pas; ``micro``: one
capability) and the annotation tags it is an acceptable choice for (``covers``, fnmatch
patterns over :func:`cogrsi_lib.harness.taxonomy.annotate` tags). The library ships as
``skills.yaml`` next to this module; :func:`load_library` validates it strictly.

The asked variables (:data:`ASKED_VARIABLES`) are what the router names in its first step;
each belongs to one family, which is where :meth:`SkillLibrary.candidates` looks after the
skills that target the variable itself. Our choice of ten variables: reality and perception
(L0), knowledge (L1), first- and higher-order belief (L2), desire, emotion, intention,
non-literal meaning and norm (L3-L7).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from cogrsi_lib.harness.taxonomy import FAMILIES

#: the library that ships with the package
DEFAULT_PATH = Path(__file__).with_name("skills.yaml")

#: asked mental variable -> (family, what a question about it asks)
ASKED_VARIABLES: dict[str, tuple[str, str]] = {
    "reality": ("perception", "how things really are or what really happened, not anyone's view"),
    "perception": ("perception", "what a character saw, heard or noticed"),
    "knowledge": ("knowledge", "whether or what a character knows, from access or being told"),
    "first_order_belief": ("belief", "what one character thinks or expects about the world"),
    "higher_order_belief": ("belief", "what a character thinks another character thinks"),
    "desire": ("desire", "what a character wants, prefers or is persuaded to choose"),
    "emotion": ("emotion", "how a character feels, or how they handle a feeling"),
    "intention": ("intention", "why a character acts, or what they will do next"),
    "non_literal": ("non_literal", "what an utterance really means: lies, irony, jokes"),
    "norm": ("norms", "whether something said or done was socially appropriate"),
}

Kind = Literal["macro", "micro"]
_FIELDS = (
    "id", "family", "kind", "target_variable", "positive_trigger", "negative_trigger",
    "workflow", "failure_check", "self_exit", "covers",
)  # fmt: skip
_TEXT_FIELDS = ("positive_trigger", "negative_trigger", "failure_check", "self_exit")


class SkillLibraryError(ValueError):
    """A malformed skill library; the message names the file and the skill."""


@dataclass(frozen=True)
class Skill:
    """One PRISM skill unit (Table 9)."""

    id: str
    family: str
    kind: Kind
    target_variable: str
    positive_trigger: str
    negative_trigger: str
    workflow: tuple[str, ...]
    failure_check: str
    self_exit: str
    covers: tuple[str, ...]

    def covers_tag(self, tag: str) -> bool:
        """Whether one of ``covers`` matches ``tag`` (fnmatch, case-sensitive)."""
        return any(fnmatch.fnmatchcase(tag, pattern) for pattern in self.covers)


class SkillLibrary:
    """The skills in file order, looked up by id."""

    def __init__(self, skills: Iterable[Skill], path: str | Path | None = None) -> None:
        self.skills: tuple[Skill, ...] = tuple(skills)
        self.path = Path(path) if path is not None else None
        self._by_id: dict[str, Skill] = {}
        for s in self.skills:
            if s.id in self._by_id:
                raise SkillLibraryError(f"{self.path or '<skills>'}: duplicate skill id {s.id!r}")
            self._by_id[s.id] = s

    def __len__(self) -> int:
        return len(self.skills)

    def __iter__(self) -> Iterator[Skill]:
        return iter(self.skills)

    def __contains__(self, skill_id: object) -> bool:
        return skill_id in self._by_id

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._by_id)

    def lookup(self, skill_id: str) -> Skill:
        """The skill with this id; KeyError naming it otherwise."""
        try:
            return self._by_id[skill_id]
        except KeyError:
            raise KeyError(f"no skill {skill_id!r} in {self.path or 'the library'}") from None

    __getitem__ = lookup

    def family_of(self, skill_id: str) -> str:
        return self.lookup(skill_id).family

    def candidates(self, variable: str, exclude: Iterable[str] = ()) -> list[Skill]:
        """Skills targeting ``variable``, then the other skills of its family (eq. 4-5's
        candidate pool), both in file order, without the ids in ``exclude``."""
        if variable not in ASKED_VARIABLES:
            raise ValueError(f"unknown asked variable {variable!r}")
        family = ASKED_VARIABLES[variable][0]
        skip = set(exclude)
        first = [s for s in self.skills if s.target_variable == variable]
        rest = [s for s in self.skills if s.family == family and s.target_variable != variable]
        return [s for s in first + rest if s.id not in skip]

    def acceptable(self, tag: str) -> set[str]:
        """Ids of the skills whose ``covers`` match ``tag``: the strict-hit set S*(x)."""
        return {s.id for s in self.skills if s.covers_tag(tag)}

    def by_family(self, family: str) -> list[Skill]:
        return [s for s in self.skills if s.family == family]


def _text(where: str, name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SkillLibraryError(f"{where}: {name} must be a non-empty string")
    return " ".join(value.split())


def _texts(where: str, name: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise SkillLibraryError(f"{where}: {name} must be a non-empty list")
    return tuple(_text(where, f"{name}[{i}]", v) for i, v in enumerate(value))


def parse_skill(entry: Any, where: str) -> Skill:
    """One validated skill from a YAML mapping; ``where`` names the file and entry."""
    if not isinstance(entry, Mapping):
        raise SkillLibraryError(f"{where}: a skill must be a mapping")
    if isinstance(entry.get("id"), str):
        where = f"{where} ({entry['id']})"
    missing = [f for f in _FIELDS if f not in entry]
    if missing:
        raise SkillLibraryError(f"{where}: missing field(s) {', '.join(missing)}")
    unknown = sorted(set(entry) - set(_FIELDS))
    if unknown:
        raise SkillLibraryError(f"{where}: unknown field(s) {', '.join(map(str, unknown))}")
    sid = _text(where, "id", entry["id"])
    if entry["family"] not in FAMILIES:
        raise SkillLibraryError(f"{where}: unknown family {entry['family']!r}")
    if entry["kind"] not in ("macro", "micro"):
        raise SkillLibraryError(f"{where}: kind must be macro or micro, not {entry['kind']!r}")
    if entry["target_variable"] not in ASKED_VARIABLES:
        raise SkillLibraryError(f"{where}: unknown target variable {entry['target_variable']!r}")
    texts = {name: _text(where, name, entry[name]) for name in _TEXT_FIELDS}
    return Skill(
        id=sid,
        family=entry["family"],
        kind=entry["kind"],
        target_variable=entry["target_variable"],
        workflow=_texts(where, "workflow", entry["workflow"]),
        covers=_texts(where, "covers", entry["covers"]),
        **texts,
    )


def load_yaml_list(
    path: Path,
    key: str,
    label: str,
    parse: Callable[[Any, str], Any],
    error: type[Exception],
    *,
    what: str,
    empty: str,
) -> list[Any]:
    """The ``key`` list of a YAML mapping, each entry parsed by ``parse(entry, where)``;
    unreadable or malformed files, a missing list, duplicate ids and an empty list raise
    ``error`` naming the file (and the entry: ``<label> #i``). Shared by the skill library
    and the retrieval notes."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise error(f"{path}: cannot read {what} ({e})") from e
    except yaml.YAMLError as e:
        raise error(f"{path}: malformed YAML ({e})") from e
    if not isinstance(data, Mapping) or not isinstance(data.get(key), list):
        raise error(f"{path}: expected a mapping with a '{key}' list")
    out: list[Any] = []
    seen: set[str] = set()
    for i, entry in enumerate(data[key]):
        obj = parse(entry, f"{path}: {label} #{i}")
        if obj.id in seen:
            raise error(f"{path}: {label} #{i}: duplicate {label} id {obj.id!r}")
        seen.add(obj.id)
        out.append(obj)
    if not out:
        raise error(f"{path}: {empty}")
    return out


def load_library(path: str | Path | None = None) -> SkillLibrary:
    """The library in ``path`` (default: the shipped ``skills.yaml``), strictly validated:
    unknown family, kind or target variable, a duplicate id, a missing or unknown field, an
    empty text or workflow raise :class:`SkillLibraryError` naming the file and the skill."""
    p = Path(path) if path is not None else DEFAULT_PATH
    skills = load_yaml_list(
        p,
        "skills",
        "skill",
        parse_skill,
        SkillLibraryError,
        what="skill library",
        empty="the library has no skills",
    )
    return SkillLibrary(skills, p)
