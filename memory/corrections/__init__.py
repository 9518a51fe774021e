"""Corrections: reading one memory with its version, editing it, and reading its history.

Owns the use cases a person (or an agent) needs to correct what mnemo remembers: `MemoryEditor.read`
(one memory in any tier, with the version an edit must name), `MemoryEditor.edit` (content, importance,
pinned, topic, validity; optimistic concurrency on the version) and `MemoryEditor.history`; and the way
back from a delete or a forget: `MemoryRestorer` lists what is still restorable and restores it. The history
log itself lives with the store it describes (memory/longterm/history.py), so deletes and exports below
this package record and read it too.
"""

from memory.corrections.editor import VERSION_RE, Changes, Edited, MemoryEditor, version_of
from memory.corrections.restore import MemoryRestorer

__all__ = ["VERSION_RE", "Changes", "Edited", "MemoryEditor", "MemoryRestorer", "version_of"]
