"""`python -m etikett_runner` = `etikett-runner`."""

import sys

from etikett_runner.cli import main

sys.exit(main())
