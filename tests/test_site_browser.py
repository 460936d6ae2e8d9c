"""The catalog's pages in Debian's headless Chromium, driven by selenium: a seed page's sections
in the seeds' order, the form answering an example issue with a link that opens the record's
page, a pasted <script> kept as text, dark mode and a phone width. Screenshots (desktop and
phone) are written to SITE_SCREENSHOTS (a folder) when it is set: docs/screenshots/ holds them."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest
from site_helpers import EXAMPLE, HEADINGS, PAGE_SEEDS, seed_headings, seed_record, serve

CHROMIUM = Path("/usr/bin/chromium")
DRIVER = Path("/usr/bin/chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (test extras)")
from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = pytest.mark.skipif(
    not (CHROMIUM.exists() and DRIVER.exists()),
    reason="needs Debian's chromium and chromium-driver (/usr/bin/chromium, /usr/bin/chromedriver)",
)
DESKTOP = (1280, 1000)
PHONE = (390, 844)
AVG_POOL = "8d1d2fa6df3880bd"
EXAMPLE_ID = "caa0d32853961b70"  # examples/issue.md: burn #3513


def browser(tmp: Path, size: tuple[int, int]):
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        f"--user-data-dir={tmp / 'profile'}",
        f"--window-size={size[0]},{size[1]}",
    ):
        options.add_argument(flag)
    service = webdriver.ChromeService(executable_path=str(DRIVER))
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(30)
    return driver


def emulate(driver, size: tuple[int, int], mobile: bool) -> None:
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": mobile},
    )


def shot(driver, name: str, tmp: Path, mobile: bool = False) -> Path:
    """A full-page screenshot (the view grown to the page's height), kept when asked."""
    width = driver.execute_script("return window.innerWidth")
    before = driver.execute_script("return window.innerHeight")
    height = driver.execute_script("return document.documentElement.scrollHeight")
    emulate(driver, (width, min(height, 4000)), mobile)
    path = tmp / f"{name}.png"
    driver.save_screenshot(str(path))
    emulate(driver, (width, before), mobile)
    keep = os.environ.get("SITE_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    assert path.stat().st_size > 10_000  # a page, not a blank image
    return path


async def drive(tmp_path: Path, script) -> None:
    server, store = await serve(tmp_path)
    base = str(server.make_url("/")).rstrip("/")
    try:
        await asyncio.to_thread(script, base)
    finally:
        await server.close()
        store.close()


async def test_seed_pages_show_their_sections_in_order(tmp_path):
    def script(base: str) -> None:
        driver = browser(tmp_path, DESKTOP)
        try:
            for seed in PAGE_SEEDS:
                record = seed_record(seed)
                driver.get(f"{base}/errors/{record['id']}")
                h1 = driver.find_element(By.TAG_NAME, "h1").text
                assert h1 == f'What causes "{record["errorMessage"]}" in tracel-ai/burn?'
                shown = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "h2")]
                assert [h for h in shown if h in HEADINGS] == seed_headings(seed)
                solutions = driver.find_elements(By.CSS_SELECTOR, "#solutions li")
                assert [s.text for s in solutions] == record["solutions"]
                marked = driver.find_element(By.CSS_SELECTOR, ".source li.panic")
                assert record["errorMessage"].split("{")[0].strip() in marked.text
                mono = marked.find_element(By.TAG_NAME, "code").value_of_css_property("font-family")
                assert "monospace" in mono or "Menlo" in mono or "Consolas" in mono
            shot(driver, "site_record_desktop", tmp_path)
        finally:
            driver.quit()

    await drive(tmp_path, script)


async def test_the_form_answers_an_example_and_links_to_the_record(tmp_path):
    text = EXAMPLE.read_text(encoding="utf-8")

    def script(base: str) -> None:
        driver = browser(tmp_path, DESKTOP)
        try:
            driver.get(base + "/")
            box = driver.find_element(By.ID, "text")
            # send_keys types slowly; the value is set as a user's paste would leave it
            driver.execute_script("arguments[0].value = arguments[1];", box, text)
            driver.find_element(By.CSS_SELECTOR, "form.paste button").click()
            WebDriverWait(driver, 20).until(EC.presence_of_element_located((By.ID, "answer")))
            answer = driver.find_element(By.CSS_SELECTOR, "#answer .answer").text
            assert "Node should have a step registered" in answer
            shot(driver, "site_form_desktop", tmp_path)
            link = driver.find_element(By.PARTIAL_LINK_TEXT, "Full write-up")
            link.click()
            WebDriverWait(driver, 20).until(EC.url_contains(f"/errors/{EXAMPLE_ID}"))
            assert "step registered" in driver.find_element(By.TAG_NAME, "h1").text
        finally:
            driver.quit()

    await drive(tmp_path, script)


async def test_a_pasted_script_stays_text(tmp_path):
    hostile = "thread 'main' panicked at src/main.rs:1:1:\n<script>alert('pwned')</script>\n"

    def script(base: str) -> None:
        driver = browser(tmp_path, DESKTOP)
        try:
            driver.get(base + "/")
            box = driver.find_element(By.ID, "text")
            driver.execute_script("arguments[0].value = arguments[1];", box, hostile)
            driver.find_element(By.CSS_SELECTOR, "form.paste button").click()
            WebDriverWait(driver, 20).until(EC.presence_of_element_located((By.ID, "answer")))
            with pytest.raises(NoAlertPresentException):
                driver.switch_to.alert.text  # noqa: B018  # the script never ran
            assert driver.find_elements(By.CSS_SELECTOR, "main script") == []
            assert "<script>alert('pwned')</script>" in driver.find_element(By.ID, "answer").text
            assert "<script>alert('pwned')</script>" in driver.find_element(
                By.ID, "text"
            ).get_property("value")
        finally:
            driver.quit()

    await drive(tmp_path, script)


async def test_phone_width_and_dark_mode(tmp_path):
    def script(base: str) -> None:
        driver = browser(tmp_path, DESKTOP)
        try:
            emulate(driver, PHONE, mobile=True)  # a phone's width: Chromium's window is wider
            driver.get(f"{base}/errors/{AVG_POOL}")
            assert driver.execute_script("return window.innerWidth") == PHONE[0]
            inner = driver.execute_script("return window.innerWidth")
            scroll = driver.execute_script("return document.documentElement.scrollWidth")
            assert scroll <= inner, (scroll, inner)  # no sideways scrolling of the page
            shot(driver, "site_record_phone", tmp_path, mobile=True)
            driver.get(f"{base}/errors?written=yes")
            scroll = driver.execute_script("return document.documentElement.scrollWidth")
            assert scroll <= driver.execute_script("return window.innerWidth")
            shot(driver, "site_list_phone", tmp_path, mobile=True)
            light = driver.find_element(By.TAG_NAME, "body").value_of_css_property(
                "background-color"
            )
            driver.execute_cdp_cmd(
                "Emulation.setEmulatedMedia",
                {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
            )
            dark = driver.find_element(By.TAG_NAME, "body").value_of_css_property(
                "background-color"
            )
            assert light != dark and dark in ("rgba(13, 17, 23, 1)", "rgb(13, 17, 23)"), dark
            driver.get(f"{base}/errors/{AVG_POOL}")
            shot(driver, "site_record_phone_dark", tmp_path, mobile=True)
        finally:
            driver.quit()

    await drive(tmp_path, script)
