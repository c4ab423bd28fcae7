"""An Actio-style harness around a frozen model, as reader variants (zing-social-mind-report §5).

Modules: :mod:`taxonomy` (families, dimensions, item annotations), :mod:`skills` and
:mod:`router` (PRISM: skill library, routing with self-exit), :mod:`state_memory` (Starling:
attribution-first state), :mod:`experience` (SAGE: distilled strategies with a fallback
cascade), :mod:`retrieval` (gated RAG over normative notes), :mod:`runtime` (the composed
system and its ablations) and :mod:`stage` (the ``harness`` stage).
"""
