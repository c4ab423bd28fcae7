"""The `cogrsi` command line."""

from __future__ import annotations

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
) -> None:
    """Run one pipeline stage notebook with its section of params.yaml."""
    from papermill.exceptions import PapermillExecutionError

    from cogrsi_lib.pipeline import StageError, run_stage

    try:
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
