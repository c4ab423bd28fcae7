"""A rehearsal of a params file on the CPU, and the GPU budget it measures (``cogrsi rehearse``).

Before GPU hours are booked, the papers' settings (``params.gpu.yaml``) run here through the
code path they take on GPUs. There, ``cogrsi serve`` puts each vLLM model on a server of its
own and rewrites the file so that every stage reaches its models through ``backend: openai``
(:func:`cogrsi_lib.serve.served_params`). The rehearsal takes the same rewritten file with one
difference: every server is one ``vllm serve`` of the embedded weights on the CPU, which
answers under every model's name (:func:`served_names`), so each request still names its
real model and each record says which one it was for. A file that names server models
already (``params.served.yaml``) is rehearsed the same way, its endpoints replaced.

Every count that a model stage puts to a model (items, cohorts, rounds, seeds) and every reply
cap is cut by the scale and never below its floor (:data:`FLOORS`), so the smallest scale
runs every stage, variant and arm of the file on a few items; the other settings are the
file's. What only a larger share of the work calls on (the audit's replays of
counterexamples, the loops' audit gate) may not be called at the smallest scale. The
model-free stages run as given: they cost no GPU time.

The budget (:func:`budget`) reads each stage's completion cache, which holds one entry per
request the server answered (every call of the stage, a repeated one only once): per stage and
model, the requests and their prompt and completion tokens, scaled to the file's counts by the
stage's driving counts (:data:`DRIVERS`: requests are taken to grow with their product), and
GPU-hours at the published throughputs of :data:`THROUGHPUT`.
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from cogrsi_lib import stage_params
from cogrsi_lib.llm.openai_backend import THROUGHPUT_LOG, OpenAISpec
from cogrsi_lib.llm.vllm_backend import VLLMSpec
from cogrsi_lib.reports import markdown_table, write_table
from cogrsi_lib.serve import (
    EMBEDDED_NAME,
    Server,
    free_port,
    launch,
    served_name,
    served_spec,
    set_path,
)
from cogrsi_lib.stage_check import model_specs

__all__ = ["DRIVERS", "FLOORS", "THROUGHPUT", "First", "RehearsalError", "Throughput", "budget",
           "cache_usage", "cut_counts", "read_upstream", "rehearsal_params", "rehearse",
           "run_stages", "served_names", "stand_ins", "upstream_first"]


class RehearsalError(RuntimeError):
    """A rehearsed stage failed, or wrote less than the papers' manifest lists; the message
    says which. A file or option that cannot be rehearsed is a ``ValueError``."""


@dataclass(frozen=True)
class First:
    """A list the scale shortens (seeds): at least its first ``n`` items are kept."""

    n: int


#: per model stage, the counts and reply caps the scale cuts, by key path in the stage's
#: section: an int is the floor of a count (of each count, in a list or mapping of counts);
#: :class:`First` a list of which the first items are kept
FLOORS: dict[str, dict[str, int | First]] = {
    "scorecard": {"n_per_cell": 1, "n_per_game": 1, "selfpred_test": 1,
                  "selfpred_classes": First(1),
                  "bootstrap_resamples": 50, "reply_caps.bare": 48,
                  "reply_caps.perspective": 64, "reply_caps.store": 64},
    "reader_eval": {"models": First(1), "runs": 1,
                    "n_per_benchmark": 1, "n_pairs": 1, "pairs.n_eval_narrative": 1,
                    "pairs.n_eval_dialogue": 1, "reader_config.sample_max_tokens": 64,
                    "reader_config.perception_max_tokens": 96,
                    "reader_config.arbitration_max_tokens": 64,
                    "gold_perceivers.n_questions": 4, "confirmatory": 1,
                    "development": 1},
    "loops": {"seeds": First(1), "rounds": 1, "discovery_size": 4, "trial_size": 4,
              "n_trials": 2, "final_size": 4, "heldout_size": 2, "max_candidates": 1,
              "builder_max_tokens": 64, "dev_stories": 30, "noise_rounds": 200,
              "gepa_seeds": First(1), "gepa_budget": 4, "gepa_val_size": 2,
              "gepa_reflection_max_tokens": 128,
              "reader.sample_max_tokens": 48, "reader.perception_max_tokens": 96,
              "reader.arbitration_max_tokens": 48,
              "pairs.n_gate_narrative": 1, "pairs.n_gate_dialogue": 1,
              "pairs.n_eval_narrative": 1, "pairs.n_eval_dialogue": 1,
              "test_benchmarks": First(1), "test_main": 1, "bigtom_u_pairs": 1,
              "shadow_study.seeds": First(1), "shadow_study.rounds": 1,
              "shadow_study.discovery_size": 4, "shadow_study.trial_size": 4,
              "shadow_study.dev_stories": 30, "shadow_study.final_size": 8,
              "shadow_audit.n_worlds": 20, "audit.n_worlds": 30, "audit.max_tokens": 256,
              "audit.recompile_max_tokens": 512},
    "audit": {"n_worlds": 30, "max_tokens": 256, "recompile_max_tokens": 512,
              "registration.seeds": First(1), "registration.rounds": 1,
              "registration.discovery_size": 8, "registration.trial_size": 8,
              "registration.dev_stories": 60, "registration.final_size": 20,
              "replay.max_per_rule": 1, "replay.n_controls": 1,
              "replay.reader_config.sample_max_tokens": 48,
              "replay.reader_config.perception_max_tokens": 96,
              "replay.reader_config.arbitration_max_tokens": 48},
    "pddl_mind": {"models": First(1), "n_stories": 1, "questions_per_story": 1,
                  "n_cross_check": 4, "n_per_category": 1, "parse_max_tokens": 256,
                  "domain_max_tokens": 256, "answer_max_tokens": 64, "state_max_tokens": 64},
    "harness": {"models": First(1), "n_per_benchmark": 1, "n_oracle": 1,
                "agreement.n_worlds": 10, "dev.n_tombench": 1, "dev.n_oracle": 1,
                "dev.rounds": 1, "dev.budget": 8, "dev.max_tokens": 64},
    "train": {"n_worlds": 12, "n_examples": 8, "n_pairs": 2, "n_heldout": 4, "n_grpo": 2,
              "sft.steps": 2, "sft.batch_size": 2, "sft.max_length": 512,
              "grpo.steps": 1, "checkpoint_every": 1, "heldout_every": 1,
              "eval_n_per_depth": 1, "eval_n_pairs": 1, "eval_benchmarks": 1},
}

#: per model stage, the counts its model requests grow with (an estimate: their product)
DRIVERS: dict[str, tuple[str, ...]] = {
    "scorecard": ("n_per_cell",),
    "reader_eval": ("n_per_benchmark", "runs"),
    "loops": ("seeds", "rounds", "discovery_size"),
    "audit": (),  # one translation per rule and translator; replays as the rehearsal found
    # the benchmarks' stories (500 to 1,000 words) outweigh the oracle's short ones
    "pddl_mind": ("n_per_category",),
    "harness": ("n_per_benchmark",),
    "train": ("n_heldout",),
}


@dataclass(frozen=True)
class Throughput:
    """A published serving throughput: total tokens (prompt and completion) per second of one
    server on the ``gpus`` GPUs of the cited run (GPU-hours are counted on those), and where
    it comes from."""

    gpus: int
    tokens_per_s: float
    source: str


#: the models of params.gpu.yaml: req/s times (input + output) tokens of the cited run
THROUGHPUT: dict[str, Throughput] = {
    "Qwen/Qwen3.5-35B-A3B-FP8": Throughput(
        1, 30.0 * (1024 + 128),
        "GPUStack performance lab, Qwen3.5-35B-A3B FP8 on one H200, vLLM 0.17.1, "
        "1,024 in / 128 out, 1,000 requests: 30.0 req/s (docs.gpustack.ai)"),
    "meta-llama/Llama-3.3-70B-Instruct": Throughput(
        4, 3070.0 * (1024 + 512) / 512,
        "vLLM blog 2026-05-11 (TurboQuant), Fig. 1: Llama-3.3-70B bf16 on 4 H100 (TP4), "
        "1,024 in / 512 out: about 3,070 output tok/s"),
    "Qwen/Qwen3.5-122B-A10B": Throughput(
        4, 3.94 * (4000 + 200),
        "no published figure; bound by GPUStack's Qwen3-235B-A22B FP8 on 4 H100 (TP4), "
        "vLLM 0.11.0, 4,000 in / 200 out: 3.94 req/s (twice the active parameters)"),
    "Qwen/Qwen3.5-9B": Throughput(
        1, 25.6 * (1024 + 128),
        "GPUStack performance lab, Qwen3.5-9B bf16 on one H100, vLLM 0.17.1, "
        "1,024 in / 128 out: 25.6 req/s"),
}


def _get(tree: Any, path: str) -> Any:
    for key in path.split("."):
        tree = getattr(tree, key) if not isinstance(tree, Mapping) else tree.get(key)
        if tree is None:
            return None
    return tree


def _scaled(real: Any, floor: int | First, scale: float) -> Any:
    """A count (or each of a list or mapping of counts) ``real × scale``, at least ``floor``
    and at most ``real``; a :class:`First` list cut to its first items."""
    if isinstance(floor, First):
        return list(real)[: max(floor.n, math.ceil(len(real) * scale))]
    if isinstance(real, list | tuple):
        return [_scaled(v, floor, scale) for v in real]
    if isinstance(real, Mapping):
        return {k: _scaled(v, floor, scale) for k, v in real.items()}
    return max(floor, round(real * scale)) if real > floor else real


def cut_counts(stage: str, section: Mapping[str, Any], scale: float) -> dict[str, Any]:
    """``section`` with the counts and caps of :data:`FLOORS` cut: ``real × scale``, at least
    the floor (never above the real value); a count the section leaves to the schema's default
    is cut from that default."""
    checked = stage_params.load(stage, section)
    out = copy.deepcopy(dict(section))
    for path, floor in FLOORS.get(stage, {}).items():
        real = _get(checked, path)
        if real is None:
            continue
        if isinstance(floor, First) and isinstance(_get(out, path), list):
            real = _get(out, path)  # as the file gives it (a list of model specs stays so)
        node = out
        *parents, last = path.split(".")
        for key in parents:
            if not isinstance(node.get(key), dict):
                node[key] = dict(node.get(key) or {})
            node = node[key]
        node[last] = _scaled(real, floor, scale)
    return out


def served_names(params: Mapping[str, Any]) -> list[str]:
    """Every model name a rehearsal's server answers to: each vLLM model (as ``cogrsi serve``
    names it) and each server model of the file."""
    names: list[str] = []
    for stage, checked in stage_params.validate_file(params).items():
        for _, spec in model_specs(checked, stage):
            if isinstance(spec, VLLMSpec):
                names.append(served_name(spec))
            elif isinstance(spec, OpenAISpec):
                names.append(spec.model)
    return list(dict.fromkeys(names))


def rehearsal_params(params: Mapping[str, Any], scale: float, base_url: str,
                     cache_root: Path) -> dict[str, Any]:
    """The file the rehearsal runs: counts cut (:func:`cut_counts`), every vLLM or server
    model reached at ``base_url`` under its own name, each stage's completions cached in
    ``cache_root/<stage>`` (the budget reads them: one entry per request sent)."""
    if not 0.0 <= scale <= 1.0:
        raise ValueError(f"the scale is a share of the file's counts, 0 to 1 (got {scale})")
    out = {stage: cut_counts(stage, section or {}, scale) for stage, section in params.items()}
    for stage, checked in stage_params.validate_file(out).items():
        for path, spec in model_specs(checked, stage):
            if isinstance(spec, VLLMSpec | OpenAISpec):
                name = served_name(spec) if isinstance(spec, VLLMSpec) else spec.model
                set_path(out, path, served_spec(name, base_url, spec.chat_template_kwargs,
                                                str(cache_root / stage)))
    stage_params.validate_file(out)
    return out


def read_upstream(params: dict[str, Any], stages: Sequence[str], out: Path
                  ) -> dict[str, set[str]]:
    """Point every file a rehearsed stage reads from another rehearsed stage's reports
    (:func:`cogrsi_lib.dvc_graph.map_files`, e.g. the audit's ``rules`` from
    ``reports/loops``, or its ``loops_run``, that whole folder) at that stage's rehearsal
    output, in place; returns each stage's
    upstream stages, which it runs after."""
    from cogrsi_lib.dvc_graph import map_files

    upstream: dict[str, set[str]] = {s: set() for s in stages}
    for stage in stages:
        def moved(value: str, stage: str = stage) -> str:
            parts = value.rstrip("/").split("/", 2)  # reports/<stage>[/<path>]
            if len(parts) >= 2 and parts[0] == "reports" and parts[1] in stages:
                upstream[stage].add(parts[1])
                return str(out.joinpath(*parts[1:]))
            return value

        map_files(params.get(stage) or {}, moved)
    return upstream


def upstream_first(stages: Sequence[str], upstream: Mapping[str, set[str]]) -> list[str]:
    """``stages`` in their order, except that each comes after the stages it reads (e.g.
    reader_eval after the loops whose principles it reads); a cycle is refused."""
    ordered: list[str] = []

    def visit(stage: str, path: tuple[str, ...]) -> None:
        if stage in path:
            raise RehearsalError("stages read each other's outputs: "
                                 + " -> ".join((*path, stage)))
        if stage not in ordered:
            for before in sorted(upstream.get(stage, ())):
                visit(before, (*path, stage))
            ordered.append(stage)

    for stage in stages:
        visit(stage, ())
    return ordered


@dataclass(frozen=True)
class StageRun:
    """One rehearsed stage: its exit status, seconds and log."""

    stage: str
    code: int
    seconds: float
    log: Path


def run_stages(stages: Sequence[str], params_file: Path, out: Path, *, jobs: int = 1,
               env: Mapping[str, str] | None = None, echo=print,
               upstream: Mapping[str, set[str]] | None = None) -> list[StageRun]:
    """Run each stage with ``cogrsi stage NAME --params params_file --out-dir out/NAME``,
    ``jobs`` at a time, each logging to ``out/NAME.log``; a stage starts once its
    ``upstream`` stages (earlier in ``stages``) are done, and fails unrun if one failed."""
    done: dict[str, Future] = {}

    def call(stage: str, failed: list[str], fh) -> int:
        if failed:
            fh.write(f"not run: it reads the outputs of {', '.join(failed)}, which "
                     "failed\n".encode())
            return 1
        try:
            return subprocess.call(
                [sys.executable, "-m", "cogrsi_lib.cli", "stage", stage, "--params",
                 str(params_file), "--out-dir", str(out / stage)], stdout=fh,
                stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {}),
                     THROUGHPUT_LOG: str(out / f"{stage}.throughput.jsonl")})
        except OSError as err:  # the interpreter could not be started
            fh.write(f"could not start the stage: {err}\n".encode())
            return 127

    def one(stage: str) -> StageRun:
        log = out / f"{stage}.log"
        failed = [u for u in sorted((upstream or {}).get(stage, ())) if done[u].result().code]
        start = time.monotonic()  # once its upstream stages are done
        with log.open("wb") as fh:
            code = call(stage, failed, fh)
        run = StageRun(stage, code, time.monotonic() - start, log)
        echo(f"{stage}: {'done' if code == 0 else f'FAILED ({code})'} in {run.seconds:.0f} s")
        return run

    out.mkdir(parents=True, exist_ok=True)
    # submitted in order, so a stage's upstream ones have started before it waits on them
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for stage in stages:
            done[stage] = pool.submit(one, stage)
        return [done[stage].result() for stage in stages]


def served_throughput(out: Path, stages: Iterable[str]) -> pl.DataFrame:
    """Per stage, model and endpoint, what the server answered while the stage's model work
    streamed (``backend: openai``'s own figures, ``<stage>.throughput.jsonl``)."""
    rows = []
    for stage in stages:
        path = out / f"{stage}.throughput.jsonl"
        if path.exists():
            rows += [{"stage": stage, **json.loads(line)}
                     for line in path.read_text(encoding="utf-8").splitlines() if line]
    cols = {"stage": pl.Utf8, "model": pl.Utf8, "endpoint": pl.Utf8, "requests": pl.Int64,
            "completion_tokens": pl.Int64, "busy_s": pl.Float64}
    if not rows:
        return pl.DataFrame(schema={**cols, "completion_tokens_per_s": pl.Float64})
    return (pl.DataFrame([{k: r[k] for k in cols} for r in rows], schema=cols)
            .group_by("stage", "model", "endpoint", maintain_order=True)
            .agg(pl.col("requests").sum(), pl.col("completion_tokens").sum(),
                 pl.col("busy_s").sum().round(1))
            .with_columns(completion_tokens_per_s=(pl.col("completion_tokens")
                                                   / pl.col("busy_s")).round(1)))


def _factor(stage: str, real: Mapping[str, Any], rehearsed: Mapping[str, Any]) -> float:
    """How many times the file's run asks the stage's models what the rehearsal asked."""
    if stage not in DRIVERS:
        return 1.0
    a, b = stage_params.load(stage, real), stage_params.load(stage, rehearsed)
    factor = 1.0
    for path in DRIVERS[stage]:
        x, y = _get(a, path), _get(b, path)
        if isinstance(x, list | tuple):
            x, y = len(x), len(y)
        if x and y:
            factor *= x / y
    return factor


def cache_usage(folder: Path) -> dict[str, dict[str, int]]:
    """Per served model, what a stage's completion cache holds: one entry per request the
    server answered (a repeat is a cache hit, never sent), with its tokens and whether the
    reply stopped at its cap. Models of other kinds (the embedded one) are left out."""
    usage: dict[str, dict[str, int]] = {}
    for path in sorted(folder.glob("*/*.json")):
        entry = json.loads(path.read_text(encoding="utf-8"))
        kind, _, rest = str(entry["request"]["model"]).partition(":")
        if kind != "openai":
            continue
        c = entry["completion"]
        row = usage.setdefault(rest.rsplit("#", 1)[0], dict.fromkeys(
            ("requests", "prompt_tokens", "completion_tokens", "capped"), 0))
        row["requests"] += 1
        row["prompt_tokens"] += int(c["prompt_tokens"])
        row["completion_tokens"] += int(c["completion_tokens"])
        row["capped"] += int(c.get("finish_reason") == "length")
    return usage


def _model_names(stage: str, section: Mapping[str, Any]) -> list[str]:
    """The names of a stage's ``models`` (:mod:`cogrsi_lib.matrix`), in order; [] without."""
    models = getattr(stage_params.load(stage, section), "models", None) or []
    return [str(getattr(m, "model", "")) for m in models]


def stand_ins(stage: str, real: Mapping[str, Any], rehearsed: Mapping[str, Any]
              ) -> dict[str, str]:
    """The models of the file's ``models`` list that the rehearsal cut (:data:`FLOORS`), each
    with the rehearsed model whose requests it is estimated from (the first): every model of
    the list is asked the same questions."""
    names, kept = _model_names(stage, real), _model_names(stage, rehearsed)
    return {m: kept[0] for m in names if kept and m not in kept}


def budget(out: Path, params: Mapping[str, Any], rehearsed: Mapping[str, Any],
           stages: Iterable[str]) -> list[dict[str, Any]]:
    """One row per stage and served model: what the rehearsal sent (from the stage's
    completion cache), the factor to the file's counts, the estimate at those counts, and
    GPU-hours at :data:`THROUGHPUT` (null for a model without a figure). A model the
    rehearsal cut from a ``models`` list (:func:`stand_ins`) is estimated from the
    requests of the one it kept (``estimated_from``)."""
    rows = []
    for stage in stages:
        real, cut = params.get(stage) or {}, rehearsed.get(stage) or {}
        factor = _factor(stage, real, cut)
        usage = {m: (u, None) for m, u in cache_usage(out / "cache" / stage).items()}
        for model, kept in stand_ins(stage, real, cut).items():
            if kept in usage:
                usage[model] = (usage[kept][0], kept)
        for model, (u, kept) in sorted(usage.items()):
            tokens = (u["prompt_tokens"] + u["completion_tokens"]) * factor
            tp = THROUGHPUT.get(model)
            rows.append({
                "stage": stage, "model": model, "estimated_from": kept, **u,
                "factor": round(factor, 1),
                "est_requests": round(u["requests"] * factor), "est_tokens": round(tokens),
                "gpus": tp.gpus if tp else None,
                "gpu_hours": (round(tokens / tp.tokens_per_s / 3600 * tp.gpus, 4)
                              if tp else None),
            })
    return rows


#: the rehearsal server's engine on the CPU: bf16 weights, no graph compilation, a context
#: that holds every floor-sized prompt with its reply
CPU_ENGINE = {"dtype": "bfloat16", "max_model_len": 4096, "enforce_eager": True}
#: marks a folder as a rehearsal's, which a new rehearsal may clear
MARK = ".cogrsi-rehearsal"


def _check(stage: str, section: Mapping[str, Any]) -> str:
    """``cogrsi stage NAME --check`` of a rehearsed section: ``ok``, or its one line (what
    the stage runs without, such as benchmark data this machine lacks; the stage's own
    report says how it went on)."""
    from cogrsi_lib.pipeline import find_repo_root
    from cogrsi_lib.stage_check import CheckError, check_stage

    try:
        check_stage(stage, section, find_repo_root() or Path.cwd())
    except CheckError as err:
        return str(err)
    return "ok"


def papers_outputs(out: Path, stages: Iterable[str]) -> list[dict[str, Any]]:
    """Each table or figure of ``cogrsi papers`` (produced or partial) whose stages were all
    rehearsed: whether the rehearsal wrote every output file it lists."""
    from cogrsi_lib.papers import manifest

    ran = set(stages)
    rows = []
    for row in manifest():
        if row.kind == "not reproducible here" or not set(row.stage) <= ran:
            continue
        mine = [o for o in row.outputs if o.split("/")[1] in ran]
        missing = [o for o in mine if not (out / o.removeprefix("reports/")).exists()]
        rows.append({"paper": row.paper, "id": row.id, "status": row.kind,
                     "outputs": len(mine), "missing": ", ".join(missing)})
    return rows


def _fresh(out: Path) -> None:
    """An empty rehearsal folder (a former rehearsal's cleared; anything else refused)."""
    import shutil

    if out.exists() and any(out.iterdir()):
        if not (out / MARK).is_file():
            raise RehearsalError(f"{out} holds files of its own; give --out an empty folder")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARK).write_text("written by cogrsi rehearse; cleared by the next one\n")


def rehearse(params_file: Path, *, scale: float, out: Path,
             stages: Sequence[str] | None = None, server: str | None = None, jobs: int = 1,
             echo=print) -> str:
    """Rehearse ``params_file`` (see the module docstring) into ``out``: the rehearsed file
    (``params.yaml``), each stage's outputs and log, and ``budget.md``/``.csv``. Starts one
    ``vllm serve`` of the embedded weights on the CPU unless ``server`` (a ``/v1`` base URL
    serving every name of :func:`served_names`) is given. Raises :class:`RehearsalError`
    naming each stage that failed, after the others ran. Returns the budget's markdown."""
    import yaml

    try:
        params = yaml.safe_load(params_file.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as err:
        raise ValueError(f"{params_file} is not valid YAML: {err}") from None
    if not isinstance(params, Mapping):
        raise ValueError(f"{params_file} must hold a mapping of stage sections")
    order = [s for s in stage_params.SCHEMAS if s in params]
    unknown = sorted(set(stages or []) - set(order))
    if unknown:
        raise ValueError(f"{params_file} has no section {unknown[0]} "
                         f"(sections: {', '.join(order)})")
    chosen = [s for s in order if stages is None or s in stages]
    out = out.resolve()
    port = free_port()
    url = server or f"http://127.0.0.1:{port}/v1"
    # every input checked before anything is cleared or started
    rehearsed = rehearsal_params(params, scale, url, out / "cache")
    upstream = read_upstream(rehearsed, chosen, out)
    chosen = upstream_first(chosen, upstream)
    names = served_names(params)
    _fresh(out)
    (out / "params.yaml").write_text(yaml.safe_dump(rehearsed, sort_keys=False),
                                     encoding="utf-8")
    if server is None:
        one = Server(EMBEDDED_NAME, VLLMSpec(engine=CPU_ENGINE), (), port, (),
                     aliases=tuple(n for n in names if n != EMBEDDED_NAME))
        serving = launch([one], out / "server", cpu=True,
                         env={"VLLM_CPU_KVCACHE_SPACE":
                              os.environ.get("VLLM_CPU_KVCACHE_SPACE", "2")})
    else:
        serving = contextlib.nullcontext([server])
    with serving:
        echo(f"serving {', '.join(names) or 'no model'} at {url} (the embedded weights)")
        checks = {stage: _check(stage, rehearsed.get(stage) or {}) for stage in chosen}
        for stage, line in checks.items():
            if line != "ok":
                echo(f"{stage}: its check says: {line}")
        runs = run_stages(chosen, out / "params.yaml", out, jobs=jobs, echo=echo,
                          upstream=upstream)
    rows = budget(out, params, rehearsed, [r.stage for r in runs if r.code == 0])
    table = pl.DataFrame(rows, schema=BUDGET_COLUMNS)
    table.write_csv(out / "budget.csv")  # budget.md is the report below
    outputs = pl.DataFrame(papers_outputs(out, [r.stage for r in runs if r.code == 0]),
                           schema=["paper", "id", "status", "outputs", "missing"])
    write_table(outputs, out / "papers_outputs", title="Paper tables the rehearsal wrote")
    served = served_throughput(out, [r.stage for r in runs])
    served.write_csv(out / "throughput.csv")
    text = render(table, runs, checks, params_file, scale, served)
    (out / "budget.md").write_text(text, encoding="utf-8")
    failed = [r for r in runs if r.code != 0]
    if failed:
        tails = "\n".join(f"--- {r.stage} (exit {r.code}, {r.log}):\n"
                          + r.log.read_text(errors="replace")[-1500:] for r in failed)
        raise RehearsalError(f"{len(failed)} of {len(runs)} stages failed: "
                             f"{', '.join(r.stage for r in failed)}\n{tails}")
    missing = outputs.filter(pl.col("missing") != "")
    if missing.height:
        raise RehearsalError(f"outputs the papers' manifest lists were not written: "
                             f"{'; '.join(missing['missing'])}")
    return text


#: the columns of :func:`budget`'s rows and their types
BUDGET_COLUMNS = {"stage": pl.Utf8, "model": pl.Utf8, "estimated_from": pl.Utf8,
                  "requests": pl.Int64,
                  "prompt_tokens": pl.Int64, "completion_tokens": pl.Int64, "capped": pl.Int64,
                  "factor": pl.Float64, "est_requests": pl.Int64, "est_tokens": pl.Int64,
                  "gpus": pl.Int64, "gpu_hours": pl.Float64}


def render(table: pl.DataFrame, runs: Sequence[StageRun], checks: Mapping[str, str],
           params_file: Path, scale: float, served: pl.DataFrame | None = None) -> str:
    """The budget report: the stages' runs, the budget by stage and model, the totals by
    model, the throughput figures used, what the rehearsal's server delivered per endpoint
    and what the estimate leaves out."""

    runs_table = pl.DataFrame([{"stage": r.stage, "status": "ok" if r.code == 0 else
                                f"failed ({r.code})", "seconds": round(r.seconds),
                                "check": checks.get(r.stage, "")} for r in runs],
                              schema=["stage", "status", "seconds", "check"])
    totals = (table.group_by("model", maintain_order=True)
              .agg(pl.col("est_requests").sum(), pl.col("est_tokens").sum(),
                   pl.col("gpu_hours").sum()).sort("model")) if table.height else table
    hours = table["gpu_hours"].sum() if table.height else 0.0
    lines = [f"# GPU budget of {params_file.name}", "",
             f"Rehearsed on the CPU at scale {scale:g}: every model of the file served by one "
             "`vllm serve` of the embedded weights under the model's own name; each count "
             "cut to its share of the file's, never below its floor (cogrsi_lib/rehearse.py).",
             "", "## Stages", "",
             "`check`: `cogrsi stage NAME --check` of the rehearsed section; a stage may run "
             "on without what it names (its own report says how).", "",
             markdown_table(runs_table), "",
             "## By stage and model", "",
             "`requests`, `prompt_tokens`, `completion_tokens`: what the rehearsal sent "
             "(cache hits left out; `estimated_from`: a model cut from a `models` list, "
             "counted as the model the rehearsal kept); `factor`: the file's driving counts "
             "over the rehearsal's; `est_*`: at the file's counts; `gpu_hours`: `est_tokens` at "
             "the throughput below, times the GPUs of its cited run (`gpus`).", "",
             markdown_table(table) if table.height else "(no model stage ran)", "",
             "## By model", "", markdown_table(totals) if table.height else "", "",
             f"**In all: {hours:,.1f} GPU-hours**, at the throughput figures below.", "",
             "## Throughput figures", ""]
    for model, tp in THROUGHPUT.items():
        lines.append(f"- {model} ({tp.gpus} GPU{'s' if tp.gpus > 1 else ''}): "
                     f"{tp.tokens_per_s:,.0f} tokens/s. {tp.source}.")
    if served is not None and served.height:
        lines += ["", "## What the rehearsal's server delivered", "",
                  "Per stage, model and endpoint, as `backend: openai` measured it while the "
                  "stage's model work streamed (`busy_s`: seconds with a request in flight, added "
                  "over the stage's streams, which overlap where it runs pieces side by side). "
                  "The embedded model on this CPU, so these say how busy a stage keeps its "
                  "server, not what a GPU delivers.", "", markdown_table(served)]
    lines += ["", "## What the estimate leaves out", "",
              "- Requests are what each stage's completion cache holds: every call the stage "
              "made, a repeated one once. The audit's replays of counterexamples are as "
              "many as the rehearsal's translations disagreed on, and its rules as many as "
              "the rehearsal's loops wrote (the file's loops write many more): not scaled.",
              "- The embedded model's replies stand in for the real models': their lengths "
              "differ, and replies cut at the rehearsal's smaller caps make the completion "
              "tokens a lower bound.",
              "- Requests are taken to grow with the product of the stage's driving counts "
              "(`DRIVERS`); counts outside them add to the error.",
              "- The throughput figures are published serving benchmarks of the same or "
              "similar models on H100/H200; real throughput depends on the prompts' lengths "
              "and the batch sizes reached.", ""]
    return "\n".join(lines)
