"""The documentation site (mkdocs.yml, docs/) and the README as its front door.

Quick checks that keep the pages true: the README stays short, every page is in the site's nav, every
`relayrl/...` path a page cites exists, and every public name has its API reference entry. The slow test
builds the site with `mkdocs build --strict` (a broken link, anchor or missing page fails it) and opens it in
headless Chromium (Debian's `chromium` and `chromium-driver`, driven by selenium): the home page and an API
page render with their navigation and log no console errors. Without Chromium that test skips, except in CI
(`CI` set), where .ci/run installs it and a missing browser is a failure.
"""
from __future__ import annotations

import functools
import http.server
import importlib
import itertools
import os
import pathlib
import re
import shutil
import subprocess
import sys
import threading

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
README_MAX_LINES = 150


def test_the_readme_is_a_short_front_page():
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines; keep it at most {README_MAX_LINES}: move details to a page in docs/ "
        "and link it from the README's feature table")


def _nav_pages(nav) -> list:
    """The page files a mkdocs nav lists (nested sections included)."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return [page for item in nav for page in _nav_pages(item)]


def test_every_docs_page_is_in_the_nav():
    nav = _nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"])
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    missing = sorted(set(pages) - set(nav))
    assert not missing, f"add each page to `nav` in mkdocs.yml (one line: `- Title: {missing[0]}`): {missing}"
    assert not sorted(set(nav) - set(pages)), "mkdocs.yml's nav names pages that are not in docs/"


# `relayrl/` then path characters; `{a,b}` groups (relayrl/connectors/{common,learner}/) are expanded.
CITED_PATH = re.compile(r"(?<![\w.~/-])relayrl/[\w./{},-]*")


def _expand_braces(path: str) -> list:
    parts = re.split(r"\{([^{}]*)\}", path)
    choices = [[part] if i % 2 == 0 else part.split(",") for i, part in enumerate(parts)]
    return ["".join(combo) for combo in itertools.product(*choices)]


def cited_paths(text: str) -> set:
    paths = set()
    for match in CITED_PATH.findall(text):
        for path in _expand_braces(match.rstrip(".,")):
            paths.add(path.rstrip("/") if path.endswith("/") else path)
    return paths


def test_cited_paths_are_expanded_and_trimmed():
    text = "see `relayrl/connectors/{common,learner}/` and relayrl/ops/gae.py, not ~/relayrl/x or pkg/relayrl/y."
    assert cited_paths(text) == {"relayrl/connectors/common", "relayrl/connectors/learner", "relayrl/ops/gae.py"}


def test_every_relayrl_path_the_pages_cite_exists():
    missing = {f"{page.relative_to(ROOT)}: {path}" for page in PAGES for path in cited_paths(page.read_text())
               if not (ROOT / path).exists()}
    assert not missing, "the pages cite files that do not exist:\n" + "\n".join(sorted(missing))


def _reference_entries() -> list:
    """The `::: dotted.path` entries of the API reference pages."""
    return [line[4:].strip() for page in sorted((DOCS / "reference").glob("*.md"))
            for line in page.read_text().splitlines() if line.startswith("::: ")]


def test_every_public_name_has_an_api_reference_entry():
    """Each name of `relayrl.__all__` is documented at the module relayrl's table of public names loads it from
    (checked without importing them: `import relayrl` stays light)."""
    import relayrl

    entries = set(_reference_entries())
    public = {name: f"{module}.{name}" for name, module in relayrl._PUBLIC.items()}
    assert sorted(public) == sorted(n for n in relayrl.__all__ if not n.startswith("__"))
    missing = sorted(path for path in public.values() if path not in entries)
    assert not missing, f"add a `::: <path>` line to a page of docs/reference/ for each of {missing}"


def test_the_test_extra_installs_the_site_and_the_browser_driver():
    """The README's install (the test extra) brings what the site's build and browser test need; Chromium itself
    comes from Debian (.ci/run)."""
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "relayrl[docs]" in extras["test"] and any(req.startswith("selenium") for req in extras["test"])
    for package in ("mkdocs", "mkdocs-material", "mkdocstrings[python]"):
        assert any(req.startswith(package + ">") for req in extras["docs"]), package


# -- the built site in a browser (slow: a strict build takes ~10 s, Chromium a few) -----------------------

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1280,1000"]


def _missing_browser_tools() -> list:
    missing = [exe for exe in ("chromium", "chromedriver") if shutil.which(exe) is None]
    for module in ("selenium", "mkdocs", "material", "mkdocstrings_handlers.python"):
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(module)
    return missing


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    missing = _missing_browser_tools()
    if missing:
        message = (f"{', '.join(missing)} missing: apt-get install chromium chromium-driver; "
                   'pip install -c constraints.txt -e ".[test]"')
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser test: {message}")
        pytest.skip(message)
    site = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-5000:]
    return site


@pytest.fixture(scope="module")
def site_url(built_site):
    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(QuietHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser(site_url, tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in [*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    logs = tmp_path_factory.mktemp("chromedriver-logs")
    driver = _start_chromedriver(webdriver, Service, options, logs)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def _start_chromedriver(webdriver, service_class, options, logs: pathlib.Path, tries: int = 3):
    """chromedriver, started again if it exits at once (it did once in a CI run on a busy machine, status 1, with
    nothing said: e.g. its port taken between selenium's pick and its bind). The last try's log is in the error."""
    from selenium.common.exceptions import WebDriverException

    for attempt in range(tries):
        log = logs / f"chromedriver-{attempt}.log"
        try:
            return webdriver.Chrome(options=options, service=service_class(
                executable_path=shutil.which("chromedriver"), log_output=str(log)))
        except WebDriverException as error:
            if attempt == tries - 1:
                said = log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)"
                raise WebDriverException(f"{error.msg} chromedriver's log:\n{said}") from error


def _open(browser, url: str, screenshot: pathlib.Path) -> list:
    """Load a page, save a screenshot, and return its console errors."""
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(url)
    WebDriverWait(browser, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")
    browser.save_screenshot(str(screenshot))
    return [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]


def _nav_titles(browser) -> list:
    from selenium.webdriver.common.by import By

    links = browser.find_elements(By.CSS_SELECTOR, "nav.md-nav--primary a.md-nav__link")
    return [link.get_attribute("textContent").strip() for link in links]


@pytest.mark.slow
def test_the_home_page_renders_with_its_navigation(browser, site_url, tmp_path):
    from selenium.webdriver.common.by import By

    errors = _open(browser, site_url + "/", tmp_path / "home.png")
    assert errors == [], errors
    assert browser.title.startswith("relayrl")
    assert browser.find_element(By.CSS_SELECTOR, "article h1").text == "relayrl"
    titles = _nav_titles(browser)
    for title in ("Getting started", "Benchmarks", "Architecture", "API reference", "Porting from RLlib"):
        assert title in titles, titles
    assert (tmp_path / "home.png").stat().st_size > 20_000  # a rendered page, not a blank one


@pytest.mark.slow
def test_an_api_page_renders_the_docstrings_and_the_generated_builders(browser, site_url, tmp_path):
    from selenium.webdriver.common.by import By

    errors = _open(browser, site_url + "/reference/algorithms/", tmp_path / "api.png")
    assert errors == [], errors
    assert "PPO, DQN, SAC, IMPALA, APPO" in browser.find_element(By.CSS_SELECTOR, "article h1").text
    assert "API reference" in _nav_titles(browser)
    config = browser.find_element(By.ID, "relayrl.algorithms.ppo.ppo_config.PPOConfig")
    assert config.text.startswith("PPOConfig")
    # `training()` exists only at run time (made from the option table); its docstring lists PPO's options
    training = browser.find_element(By.ID, "relayrl.algorithms.ppo.ppo_config.PPOConfig.training")
    contents = training.find_element(By.XPATH, "./following-sibling::div[contains(@class, 'doc-contents')][1]")
    text = contents.get_attribute("textContent")
    assert "clip_param" in text and "Default: 0.2" in text, text[:500]
