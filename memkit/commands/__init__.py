"""What a chat turn does to long-term memory: memory commands and the admission rule.

Two questions are answered for every message, in Chinese and English:

1. **Is it a command about memory?** :func:`parse` (:mod:`~memkit.commands.parser`) recognises
   remember / forget / delete_last / show and returns a :class:`Command`, or ``None``.
2. **What should be kept, and where?** :func:`admit` and :func:`admit_many`
   (:mod:`~memkit.commands.admission`) apply the articles' admission rules; the layer always comes
   from :func:`memkit.schema.default_layer`, the one rule every write without a layer follows.

The patterns both use are data, in :mod:`~memkit.commands.patterns` (the text is normalized by
:func:`memkit.text.normalize`).

>>> parse("记住我喜欢美式咖啡").op, admit("好的！").store
('remember', False)
"""

from __future__ import annotations

from .admission import ROLES, Admission, admit, admit_many
from .parser import COMMAND_OPS, Command, is_question, parse

__all__ = ["COMMAND_OPS", "ROLES", "Admission", "Command", "admit", "admit_many", "is_question", "parse"]
