"""One field of a JSON document, for scripts: what jq -r would print.

    python3 -m ckptfs_tools.json_field FILE|- KEY[.KEY...]

Prints the field (a string bare, anything else as JSON); exits 1 naming
the key when the document lacks it, 2 when the document is not JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def field(document, path: str):
    """document[k1][k2]... for path "k1.k2"; KeyError names the missing key."""
    value = document
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            raise KeyError(key)
        value = value[key]
    return value


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    source, path = argv
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text()
        document = json.loads(text)
    except (OSError, ValueError) as e:
        print(f"json_field: {source}: {e}", file=sys.stderr)
        return 2
    try:
        value = field(document, path)
    except KeyError as e:
        print(f"json_field: {source} has no '{e.args[0]}' (of {path})", file=sys.stderr)
        return 1
    print(value if isinstance(value, str) else json.dumps(value))
    return 0


if __name__ == "__main__":
    sys.exit(main())
