"""Build the fifth blind test set's logs and label sidecar from its sources (see README.md and ../blind_builder.py).

python tests/labelers/blind_test5/build.py
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parents[2]) not in sys.path:
    sys.path.insert(0, str(HERE.parents[2]))

from tests.labelers.blind_builder import main  # noqa: E402

if __name__ == "__main__":
    main(HERE)
