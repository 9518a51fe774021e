"""The long-term write path: the write policy and pipeline (cleaning, PII redaction, importance, anchors,
tiers, de-duplication under the user's lock; `policy`), its pure scoring rules (`scoring`), and facts that
change: the zh/en claim rules (`supersession`), their application to a write round (`superseder`) and
the pairs an optional LLM judge is asked about (`judge`).

Stands above `recall` because de-duplication uses the user's keyword index; may import the shared
leaves, `text`, `embedding`, `longterm` and `recall`.
"""
