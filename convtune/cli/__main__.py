"""``python -m convtune.cli``: the ``convtune`` executable."""

from convtune.cli import console_main

console_main()
