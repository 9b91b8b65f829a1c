"""The README's promises about itself: its first command block holds exactly the two set-up commands."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_first_block_holds_exactly_the_two_commands():
    first = re.search(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert first is not None
    commands = [line.split("#")[0].strip() for line in first.group(1).splitlines() if line.strip()]
    assert commands == ["make results", "make test"]
