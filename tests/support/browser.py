"""Headless Chromium for the HTML export tests, driven through chromedriver (Selenium).

Debian's ``chromium`` and ``chromium-driver`` packages (``.ci/run`` installs them). The browser
starts with the flags that keep it off the network on its own (no background fetches, no
component updates), so every request it logs was made by the page. Outside CI a missing
browser skips the tests; with ``CI`` set it fails them, like the other system parts.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.requires import unavailable

CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
DRIVER_CANDIDATES = ("chromedriver", "chromium-driver")


def _find(names: tuple[str, ...]) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


def browser_paths() -> tuple[str, str]:
    """The browser and driver executables, or skip (fail in CI) when they are missing."""
    browser, driver = _find(CHROMIUM_CANDIDATES), _find(DRIVER_CANDIDATES)
    if browser is None or driver is None:
        reason = "headless Chromium tests need the chromium and chromium-driver packages"
        unavailable(reason)
    return browser, driver


@contextmanager
def chromium(width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """A headless Chromium session logging network events (``performance``) and the console."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver_path = browser_paths()
    profile = tempfile.mkdtemp(prefix="pi-tui-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--allow-file-access-from-files",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    options.set_capability("unhandledPromptBehavior", "ignore")
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def open_page(driver: Any, path: Path, fragment: str = "") -> None:
    """Load an exported page from ``file://`` and wait until it says it has drawn."""
    from selenium.webdriver.support.ui import WebDriverWait

    url = path.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    driver.get(url)
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script("return document.documentElement.dataset.ready === 'true'")
    )


def requested_urls(driver: Any) -> list[str]:
    """Every URL the page asked the network stack for since the log was last read."""
    urls = []
    for record in driver.get_log("performance"):
        message = json.loads(record["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def console_errors(driver: Any) -> list[str]:
    return [entry["message"] for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]
