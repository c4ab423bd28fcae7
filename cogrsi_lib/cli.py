"""The `cogrsi` command line."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from cogrsi_lib.bench.cli import app as bench_app
from cogrsi_lib.oracle.cli import app as oracle_app

app = typer.Typer(
    name="cogrsi",
    help="Build, evolve and audit reasoning strategies about other minds.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(oracle_app, name="oracle")
app.add_typer(bench_app, name="bench")


def _version(value: bool) -> None:
    if value:
        import importlib.metadata

        typer.echo(f"cogrsi {importlib.metadata.version('cogrsi')}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Build, evolve and audit reasoning strategies about other minds."""


@app.command()
def stage(
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="Stage name: runs notebooks/NAME.ipynb.")
    ],
    params: Annotated[
        Path | None,
        typer.Option(
            "--params", help="Parameters file (default: params.yaml at the repository root)."
        ),
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out-dir", help="Output directory (default: reports/NAME at the repository root)."
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option("--check", help="Check the settings, the benchmark data they name and "
                                     "the models' endpoints; run nothing."),
    ] = False,
) -> None:
    """Run one pipeline stage notebook with its section of params.yaml."""
    from papermill.exceptions import PapermillExecutionError

    from cogrsi_lib.pipeline import StageError, run_stage

    if check:
        _check_stage(name, params)
        return
    try:
        _refuse_several_engines(name, params)
        executed = run_stage(
            name,
            params_path=params.resolve() if params else "params.yaml",
            out_dir=out_dir.resolve() if out_dir else None,
        )
    except StageError as err:
        typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from err
    except PapermillExecutionError as err:
        from cogrsi_lib.pipeline import FAILED_DIR, find_repo_root

        where = (find_repo_root() or Path.cwd()) / FAILED_DIR / name
        typer.secho(
            f"stage '{name}' failed in cell {err.exec_count}: {err.ename}: {err.evalue}"
            f" (nothing published; executed notebook: {where / f'{name}.ipynb'})",
            fg=typer.colors.RED,
            err=True,
        )
        raise typer.Exit(1) from err
    typer.echo(f"stage '{name}' done: {executed}")


def _refuse_several_engines(name: str, params: Path | None) -> None:
    """A stage whose settings name several vLLM engines is not started (StageError)."""
    from cogrsi_lib import stage_params
    from cogrsi_lib.pipeline import StageError, find_repo_root, load_stage_params
    from cogrsi_lib.stage_check import several_engines

    if name not in stage_params.SCHEMAS:
        return  # run_stage names the unknown stage
    path = params.resolve() if params else (find_repo_root() or Path.cwd()) / "params.yaml"
    try:
        loaded = stage_params.load(name, load_stage_params(name, path))
    except stage_params.StageParamsError:
        return  # run_stage reports it, naming the key
    why = several_engines(name, loaded)
    if why:
        raise StageError(why)


def _check_stage(name: str, params: Path | None) -> None:
    """``cogrsi stage NAME --check``: exit 2 with one line on the first problem."""
    from cogrsi_lib.pipeline import StageError, find_repo_root, load_stage_params
    from cogrsi_lib.stage_check import CheckError, check_stage

    root = find_repo_root() or Path.cwd()
    path = params.resolve() if params else root / "params.yaml"
    try:
        result = check_stage(name, load_stage_params(name, path), root)
    except (StageError, CheckError) as err:
        typer.secho(f"error: {err} (in {path})", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from err
    for line in result.lines:
        typer.echo(f"ok  {line}")
    for note in result.notes:
        typer.echo(f"note  {note}")
    typer.echo(f"stage '{name}' can run with {path}")


records_app = typer.Typer(help="Per-item records of a stage (reports/<stage>/records.parquet).",
                           no_args_is_help=True)
app.add_typer(records_app, name="records")


@records_app.command("show")
def records_show(
    path: Annotated[Path, typer.Argument(help="A records file: .parquet, .csv or .jsonl.")],
    filters: Annotated[
        list[str] | None,
        typer.Option("--filter", "-f",
                     help="COL=VALUE, COL!=VALUE, COL<VALUE, COL<=VALUE, COL>VALUE, "
                          "COL>=VALUE (numbers) or COL~TEXT (contains); repeat to combine."),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=0, help="Records to show.")] = 5,
    offset: Annotated[int, typer.Option("--offset", min=0, help="Records to skip.")] = 0,
    columns: Annotated[
        str | None, typer.Option("--columns", "-c", help="Comma-separated columns to show.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
) -> None:
    """Show per-item records: the shared core columns first (ids, system, model, prompt,
    reply, parse status, answer, gold, calls and tokens), then the stage's own; JSON columns
    decoded."""
    from cogrsi_lib.records import (
        RecordsError,
        filter_records,
        load_records,
        render_record,
        to_json_lines,
    )

    try:
        frame = load_records(path)
        total = frame.height
        frame = filter_records(frame, filters or [])
        chosen = [c.strip() for c in columns.split(",")] if columns else None
        page = frame.slice(offset, limit)
        if chosen:
            missing = [c for c in chosen if c not in frame.columns]
            if missing:
                raise RecordsError(f"no columns {missing} (columns: {', '.join(frame.columns)})")
        if as_json:
            for line in to_json_lines(page.select(chosen) if chosen else page):
                typer.echo(line)
            return
        typer.echo(f"{path}: {frame.height} of {total} records match; "
                   f"showing {page.height} from {offset}")
        for i, row in enumerate(page.iter_rows(named=True), start=offset):
            typer.echo(f"\n--- record {i} " + "-" * 60)
            typer.echo(render_record(row, chosen))
    except RecordsError as err:
        typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from err


@app.command("papers")
def papers_command(
    as_json: Annotated[bool, typer.Option("--json", help="A JSON list of the rows.")] = False,
    paper: Annotated[str | None, typer.Option(help="Only this paper's rows.")] = None,
    status: Annotated[str | None, typer.Option(
        help="Only rows of this status: produced, partial or 'not reproducible here'.")] = None,
) -> None:
    """The source papers' tables and figures: the stage and outputs that reproduce each one,
    and its status (cogrsi_lib/papers.yaml)."""
    import json

    import polars as pl

    from cogrsi_lib.papers import KINDS, manifest, summary
    from cogrsi_lib.reports import markdown_table

    rows = manifest()
    papers = sorted({r.paper for r in rows})
    if paper is not None and paper not in papers:
        typer.secho(f"error: no paper {paper!r} (papers: {', '.join(papers)})",
                    fg=typer.colors.RED, err=True)
        raise typer.Exit(2)
    if status is not None and status not in KINDS:
        typer.secho(f"error: no status {status!r} (statuses: {', '.join(KINDS)})",
                    fg=typer.colors.RED, err=True)
        raise typer.Exit(2)
    rows = [r for r in rows if paper in (None, r.paper) and status in (None, r.kind)]
    if as_json:
        typer.echo(json.dumps([r.model_dump() for r in rows], indent=1, ensure_ascii=False))
        return
    table = pl.DataFrame([{"paper": r.paper, "id": r.id, "title": r.title,
                           "stage": ", ".join(r.stage), "status": r.status} for r in rows],
                         schema=["paper", "id", "title", "stage", "status"])
    typer.echo(markdown_table(table))
    typer.echo("")
    typer.echo(markdown_table(pl.DataFrame(summary(rows))))


@app.command("serve")
def serve_command(
    params: Annotated[Path, typer.Option("--params", help="Parameters file naming the models.")
                      ] = Path("params.gpu.yaml"),
    out: Annotated[Path, typer.Option(
        "--out", help="Where to write the params file that reaches the servers.")
    ] = Path("params.served.yaml"),
    gpus: Annotated[int | None, typer.Option(
        help="GPUs on this node (default: those CUDA shows; 0: serve on the CPU).")] = None,
    host: Annotated[str, typer.Option(help="Address the servers listen on.")] = "127.0.0.1",
    base_port: Annotated[int, typer.Option(help="Port of the first server.")] = 8000,
    remote: Annotated[list[str] | None, typer.Option(
        help="NAME=URL: a model served on another node (repeatable).")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the servers and write --out; start nothing.")] = False,
) -> None:
    """One `vllm serve` per vLLM model of a params file, each on GPUs of its own; writes the
    params file with those models reached through `backend: openai` (cogrsi_lib/serve.py)."""
    import yaml

    from cogrsi_lib.serve import ServeError, describe, launch, plan, served_params, visible_gpus

    try:
        named = dict(r.split("=", 1) for r in remote or [] if "=" in r)
        if len(named) != len(remote or []):
            raise ServeError("--remote takes NAME=URL")
        given = yaml.safe_load(params.read_text(encoding="utf-8")) or {}
        n = visible_gpus() if gpus is None else gpus
        servers = plan(given, n or None, base_port=base_port, remote=named)
        served = served_params(given, servers, host, named)
    except (OSError, ValueError) as err:  # ServeError, StageParamsError, a missing file
        typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from err
    for line in describe(servers, host, cpu=not n):
        typer.echo(line)
    out.write_text(yaml.safe_dump(served, sort_keys=False), encoding="utf-8")
    typer.echo(f"wrote {out}: run `cogrsi stage NAME --params {out}`")
    if dry_run or not servers:
        return
    with launch(servers, Path(".cache/serve-logs"), host, cpu=not n):
        typer.echo("every server answers /health; Ctrl-C stops them")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            typer.echo("stopping the servers")


@app.command("rehearse")
def rehearse_command(
    params: Annotated[Path, typer.Option("--params", help="The settings to rehearse.")
                      ] = Path("params.gpu.yaml"),
    scale: Annotated[float, typer.Option(
        help="Share of the file's counts to run, 0 to 1 (0: every count at its floor).")
    ] = 0.0,
    out: Annotated[Path, typer.Option(help="Folder of the rehearsal's outputs and budget.")
                   ] = Path(".cache/rehearsal"),
    stages: Annotated[list[str] | None, typer.Option(
        "--stage", help="Only this stage (repeatable; default: every stage of the file).")
    ] = None,
    server: Annotated[str | None, typer.Option(
        help="The /v1 URL of a running `vllm serve` of the embedded weights that answers to "
             "every model's name (default: one is started on the CPU).")] = None,
    jobs: Annotated[int, typer.Option(help="Stages run at a time.")] = 1,
) -> None:
    """Run a params file's stages on the CPU through the path they take on GPUs (every model
    behind `vllm serve`, here of the embedded weights), each count cut by the scale; write
    and print the GPU budget at the file's own counts (cogrsi_lib/rehearse.py)."""
    from cogrsi_lib.rehearse import RehearsalError, rehearse

    try:
        text = rehearse(params, scale=scale, out=out, stages=stages, server=server, jobs=jobs,
                        echo=typer.echo)
    except RehearsalError as err:
        typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
        raise typer.Exit(1) from err
    except (OSError, ValueError) as err:  # bad file or option; a server that did not start
        typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from err
    typer.echo(text)
    typer.echo(f"wrote {out / 'budget.md'}")


@app.command("dvc-yaml")
def dvc_yaml_command(
    check: Annotated[
        bool, typer.Option("--check", help="Fail if dvc.yaml differs from the derived one.")
    ] = False,
) -> None:
    """Write dvc.yaml from the stage notebooks' imports (deps), summaries and charts."""
    from cogrsi_lib.dvc_graph import dvc_yaml
    from cogrsi_lib.pipeline import find_repo_root

    root = find_repo_root() or Path.cwd()
    text, path = dvc_yaml(root), root / "dvc.yaml"
    if check:
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            typer.secho("dvc.yaml is not the derived one: run `cogrsi dvc-yaml`",
                        fg=typer.colors.RED, err=True)
            raise typer.Exit(1)
        typer.echo("dvc.yaml is up to date")
        return
    path.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {path}")


if __name__ == "__main__":
    app()
