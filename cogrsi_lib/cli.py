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
        where = out_dir or Path("reports") / name
        typer.secho(
            f"stage '{name}' failed in cell {err.exec_count}: {err.ename}: {err.evalue}"
            f" (executed notebook: {where / f'{name}.ipynb'})",
            fg=typer.colors.RED,
            err=True,
        )
        raise typer.Exit(1) from err
    typer.echo(f"stage '{name}' done: {executed}")


if __name__ == "__main__":
    app()
