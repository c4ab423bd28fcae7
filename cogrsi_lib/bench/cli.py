"""``cogrsi bench ...``: list, fetch, count, show protocol deviations and draw sample
manifests of the benchmarks."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(help="Benchmark loaders, their protocols and scorers, and sample manifests.",
                  no_args_is_help=True)


@app.callback()
def _group() -> None:
    """Benchmark loaders, their protocols and scorers, and sample manifests."""


@app.command("list")
def list_cmd() -> None:
    """Every registered benchmark, its suites, what its tests read, and whether it is here."""
    from cogrsi_lib.bench.registry import get, names

    for n in names():
        b = get(n)
        where = b.root()
        status = "available" if b.is_available() else "missing"
        typer.echo(f"{n:13s} {b.title:13s} {','.join(b.suites):20s} sample={b.sample:9s} "
                   f"{status:9s} {where}")


@app.command("fetch")
def fetch_cmd(
    names_: Annotated[list[str] | None, typer.Argument(metavar="NAME...",
                                                       help="Benchmarks to download.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every benchmark with a source.")] = False,
    dest: Annotated[Path | None, typer.Option(help="Base folder [default: data/benchmarks].")
                    ] = None,
    force: Annotated[bool, typer.Option(help="Download files that are already present.")
                     ] = False,
) -> None:
    """Download the full official release(s) into data/benchmarks, checking sha256."""
    from cogrsi_lib.bench.fetch import ChecksumError, fetch
    from cogrsi_lib.bench.registry import get, names

    chosen = [n for n in names() if get(n).sources] if all_ else list(names_ or [])
    if not chosen:
        typer.secho("error: give NAME... or --all", fg=typer.colors.RED, err=True)
        raise typer.Exit(2)
    for n in chosen:
        try:
            files = fetch(n, base=dest, force=force, log=typer.echo)
        except (ChecksumError, ValueError, KeyError, OSError) as err:
            typer.secho(f"error: {n}: {err}", fg=typer.colors.RED, err=True)
            raise typer.Exit(1) from err
        typer.echo(f"{n}: {len(files)} file(s) in place")


@app.command("deviations")
def deviations_cmd(
    names_: Annotated[list[str] | None, typer.Argument(metavar="NAME...")] = None,
    update: Annotated[bool, typer.Option(help="Rewrite the table in cogrsi_lib/bench/README.md."
                                         )] = False,
    check: Annotated[bool, typer.Option(help="Exit 1 if that table is not current.")] = False,
) -> None:
    """How each benchmark's official and uniform protocols differ from its release."""
    from cogrsi_lib.bench.report import deviations_markdown, readme_with_deviations

    readme = Path(__file__).with_name("README.md")
    if update or check:
        text = readme.read_text(encoding="utf-8")
        new = readme_with_deviations(text)
        if check:
            if new != text:
                typer.secho(f"error: {readme} is out of date (cogrsi bench deviations --update)",
                            fg=typer.colors.RED, err=True)
                raise typer.Exit(1)
            typer.echo(f"{readme}: deviations table is current")
            return
        readme.write_text(new, encoding="utf-8")
        typer.echo(f"wrote {readme}")
        return
    typer.echo(deviations_markdown(names_ or None), nl=False)


@app.command("counts")
def counts_cmd(
    names_: Annotated[list[str] | None, typer.Argument(metavar="NAME...")] = None,
) -> None:
    """Questions and units per benchmark and question type (available benchmarks only)."""
    from cogrsi_lib.bench.report import counts_by_type, load_available
    from cogrsi_lib.reports import markdown_table

    loaded = load_available(names_ or None)
    typer.echo(markdown_table(counts_by_type(loaded)))


@app.command("manifest")
def manifest_cmd(
    out: Annotated[Path, typer.Option(help="Folder for <benchmark>.json manifests.")
                   ] = Path("data/manifests"),
    params: Annotated[Path, typer.Option(help="params.yaml with a 'benchmarks' section.")
                      ] = Path("params.yaml"),
) -> None:
    """Draw the disjoint S0-S4 samples of every available benchmark and write manifests."""
    import yaml

    from cogrsi_lib.bench.manifest import ManifestError, draw_manifests, write_manifest
    from cogrsi_lib.bench.report import load_available

    section = (yaml.safe_load(params.read_text(encoding="utf-8")) or {}).get("benchmarks", {})
    loaded = load_available(section.get("benchmarks") or None)
    try:
        manifests = draw_manifests(loaded, section.get("sample_sizes", {}),
                                   section.get("sample_sizes_by_benchmark", {}),
                                   section.get("seeds", {}))
    except ManifestError as err:
        typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
        raise typer.Exit(1) from err
    for m in manifests:
        typer.echo(f"wrote {write_manifest(m, out / f'{m.benchmark}.json')}")
