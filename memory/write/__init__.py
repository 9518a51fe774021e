"""The long-term write path: the write policy and pipeline (cleaning, PII redaction, importance, anchors,
tiers, de-duplication under the user's lock; `policy`) and its pure scoring rules (`scoring`).

Stands above `recall` because de-duplication uses the user's keyword index; may import the shared
leaves, `text`, `embedding`, `longterm` and `recall`.
"""
