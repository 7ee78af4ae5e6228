"""The report tests' browser: a real headless Chromium (tests/browser_cdp.py),
installed from Debian's package when the machine has none."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def chromium(tmp_path_factory):
    from browser_cdp import Browser, find_or_install_chromium

    path, why = find_or_install_chromium(log=tmp_path_factory.mktemp("chromium") / "install.log")
    if path is None:
        pytest.skip(f"no headless Chromium: {why}")
    browser = Browser(path)
    yield browser
    browser.close()
