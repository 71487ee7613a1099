"""What the tests that open pages in Debian's headless chromium share: where it is, how it is
started, and the marks that skip them with a message where it is absent."""

from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
NEEDS_CHROMIUM = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(),
                       reason="Debian's chromium is not installed at /usr/bin/chromium "
                              "(.ci/run installs it with apt-get install chromium)"),
]
