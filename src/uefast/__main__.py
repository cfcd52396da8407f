"""``python -m uefast`` is ``uefast``."""
import sys

from uefast.cli import main

sys.exit(main())
