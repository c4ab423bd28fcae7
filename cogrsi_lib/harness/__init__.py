"""An Actio-style harness around a frozen model, as reader variants (zing-social-mind-report §5).

Modules: :mod:`taxonomy` (families, dimensions, item annotations), :mod:`skills` and
:mod:`router` (PRISM: skill library, routing with self-exit), :mod:`state_memory` (Starling:
attribution-first state), SAGE's experience memory of distilled strategies with a fallback
cascade (:mod:`experience_store`: entries and the store; :mod:`selector`: recall at deployment;
:mod:`dimension`: the Selector's dimension call; :mod:`reflector` and :mod:`curator`: labels,
proposals and store edits; :mod:`distil`: their loop on development items),
:mod:`retrieval` (gated RAG over normative notes), :mod:`runtime` (the composed system and its
ablations) and :mod:`stage` (the ``harness`` stage).
"""
