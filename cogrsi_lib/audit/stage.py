"""What the ``audit`` stage notebook calls, from ``params.yaml: audit`` (CogRSI §4.3, §5.4).

The notebook stays a list of calls: :func:`audit_config` turns the stage's parameters into an
:class:`~cogrsi_lib.audit.audit.AuditConfig`, :func:`replay_answerer` builds the reader that
answers rendered counterexamples, and :func:`summary` collects the run's sizes, timings and
translator roles for ``summary.json``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cogrsi_lib.audit.audit import AuditConfig, Auditor, RuleAudit
from cogrsi_lib.audit.replay import Answerer, reader_answerer
from cogrsi_lib.audit.sandbox import SandboxLimits
from cogrsi_lib.audit.verdict import VerdictConfig

if TYPE_CHECKING:
    from cogrsi_lib.llm.backend import BackendSpec
    from cogrsi_lib.reader import ReaderConfig


def audit_config(vacuous_threshold: float = 0.001, agreement_threshold: float = 0.8,
                 agreement_over: str = "either",
                 limits: SandboxLimits | Mapping[str, Any] | None = None,
                 recompile_max_tokens: int | None = None, workers: int | None = None
                 ) -> AuditConfig:
    """The audit's settings from the stage parameters of the same names."""
    return AuditConfig(
        verdict=VerdictConfig(agreement_threshold, vacuous_threshold, agreement_over),  # type: ignore[arg-type]
        limits=limits if isinstance(limits, SandboxLimits) else SandboxLimits.from_params(limits),
        recompile_max_tokens=recompile_max_tokens,
        workers=workers,
    )


def replay_answerer(model: BackendSpec | Mapping[str, Any] | str,
                    reader_config: ReaderConfig | Mapping[str, Any] | None = None,
                    root: str | Path | None = None) -> tuple[Answerer, str]:
    """The grounded reader on ``model`` (its :data:`~cogrsi_lib.llm.spec.ModelSpec`), with
    ``reader_config`` (:class:`~cogrsi_lib.reader.ReaderConfig` or its overrides); returns
    the answerer and the backend's identity."""
    from cogrsi_lib.llm.spec import parse_model
    from cogrsi_lib.reader import GroundedReader, ReaderConfig

    backend = parse_model(model, "replay.model").build(root)
    config = (reader_config if isinstance(reader_config, ReaderConfig)
              else ReaderConfig.model_validate(dict(reader_config or {})))
    system = GroundedReader(backend, None, config)
    return reader_answerer(system), backend.identity


#: the hand-written rules' own translations, served by scripted translators
REFERENCE_TRANSLATORS = (
    {"name": "A", "model": "scripted", "prompt": "literal", "seed": 0},
    {"name": "B", "model": "scripted", "prompt": "plain", "seed": 1},
)
#: how the verdict tables label where their translations came from
MODEL_LABEL, REFERENCE_LABEL = "model translations", "reference translations (hand-written code)"


def uses_models(translators: Sequence[Any]) -> bool:
    """Whether any translator role is played by a model (not the scripted reference code)."""
    return any(not t.backend.model.startswith("scripted-translator") for t in translators)


def reference_audit(sample: Any, config: AuditConfig, rules: Any
                    ) -> tuple[Auditor, list[RuleAudit]]:
    """The rules audited with the hand-written reference translations, through the same
    sandbox, sample and verdict rule as the model translations: the verdicts these rules are
    known to have, so a run on a weak model still shows the audit deciding."""
    from cogrsi_lib.audit.translate import build_translators

    auditor = Auditor(sample, build_translators(REFERENCE_TRANSLATORS), config)
    pairs = list(zip(rules["rule_id"], rules["text"], strict=True))
    return auditor, auditor.audit_many(pairs)


def summary(auditor: Auditor, audits: Sequence[RuleAudit], **extra: Any) -> dict[str, Any]:
    """Sizes and translator roles of one audit run (its timings: :func:`timings`)."""
    sample = auditor.sample
    return {
        "n_worlds": len(sample.worlds),
        "n_questions": sample.n_questions,
        "max_depth": sample.max_depth,
        "seed": sample.seed,
        "n_rules": len(audits),
        "n_texts": len({a.text for a in audits}),
        "translators": [t.describe() for t in auditor.translators],
        "one_model_both_roles": len({t.backend.identity for t in auditor.translators}) == 1,
        "config": auditor.config,
        **extra,
    }


def timings(auditor: Auditor, audits: Sequence[RuleAudit]) -> dict[str, float | None]:
    """Seconds spent translating and in the sandbox, the slowest rule's pair of runs and the
    median run. They vary from run to run, so they go to the log, not to the stage's files."""
    runs = [r for a in audits for r in a.runs if r.ok]
    per_rule = [a.sandbox_s for a in audits if all(r.ok for r in a.runs)]
    return {
        "translate_s": round(auditor.timings["translate_s"], 3),
        "sandbox_s": round(auditor.timings["sandbox_s"], 3),
        "max_rule_pair_s": round(max(per_rule), 3) if per_rule else None,
        "median_translation_run_s": (round(sorted(r.wall_s for r in runs)[len(runs) // 2], 3)
                                     if runs else None),
    }
