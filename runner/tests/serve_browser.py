#!/usr/bin/env python3
"""Drives `spar serve` in a real browser (headless Chromium through Selenium), as a user:
opens the index, registers spar's own repository (SPAR_REPO, build `spar`) and a tiny
engine (REPO, build `make`) from the engines page, submits from the index form's engine
fields an SPRT of two option sets of spar at HEAD (the net against `option.Eval=hce`) at
a node limit — the server's builder builds that commit with cargo after the POST —, watches
the run page reach H1 without reloading (the page's live script updates it), finds the
run by search, and stops and resumes a second run (of the tiny engine at two revisions,
whose page shows the commits and the diff).

Usage: serve_browser.py URL REPO CHROMEDRIVER SPAR_REPO SPAR_SHA SPAR_BENCH
(SPAR_BENCH may be empty: not checked.)
Exit 0 when every step passed; otherwise a message and exit 1.
"""
import json
import re
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import (
    NoSuchElementException, StaleElementReferenceException, WebDriverException)
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

URL, REPO, DRIVER, SPAR_REPO, SPAR_SHA, SPAR_BENCH = sys.argv[1:7]

# How long the first spar run may wait for its build: the server's builder builds spar at
# SPAR_SHA (`cargo build --profile ci`: the test sets SPAR_BUILD_PROFILE=ci) in a cache that
# may be cold on a fresh clone.
BUILD_WAIT = 3600


def step(text):
    print("serve_browser:", text, flush=True)


def browser():
    opts = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        opts.add_argument(arg)
    opts.binary_location = "/usr/bin/chromium"
    # The driver's path is given: Selenium Manager downloads nothing.
    return webdriver.Chrome(service=Service(executable_path=DRIVER), options=opts)


def text(d, css):
    return d.find_element(By.CSS_SELECTOR, css).text


def wait(d, seconds, pred, poll=0.2):
    """Waits for `pred`, across the page changes a form's POST and redirect make."""
    ignored = (NoSuchElementException, StaleElementReferenceException)
    return WebDriverWait(d, seconds, poll_frequency=poll, ignored_exceptions=ignored).until(pred)


def click_and_load(d, xpath):
    """Clicks a form's button and waits for the page it leads to."""
    old = d.find_element(By.TAG_NAME, "html")
    d.find_element(By.XPATH, xpath).click()
    WebDriverWait(d, 60).until(lambda d: gone(old))


def gone(element):
    """Whether `element` left the document (its page was replaced). Chromium answers a look
    at a node of a page being replaced with a stale-element error, or during the swap with
    "Node with given id does not belong to the document": both mean gone."""
    try:
        element.is_enabled()
        return False
    except StaleElementReferenceException:
        return True
    except WebDriverException as e:
        if "does not belong to the document" in str(e):
            return True
        raise


def fill(d, name, value):
    el = d.find_element(By.NAME, name)
    el.clear()
    el.send_keys(value)


def submit_run(d, words, note):
    d.get(URL + "/")
    Select(d.find_element(By.NAME, "kind")).select_by_visible_text("sprt" if "--elo0" in words else "match")
    fill(d, "words", words)
    fill(d, "note", note)
    d.find_element(By.CSS_SELECTOR, "form[action='/runs'] button[type=submit]").click()
    wait(d, 120, lambda d: "/runs/" in d.current_url or d.find_elements(By.ID, "error"))
    if d.find_elements(By.ID, "error"):
        raise SystemExit("the run was refused: " + text(d, "#error"))
    return int(d.current_url.rstrip("/").rsplit("/", 1)[1])


def api_submit(words, note):
    """Submits an SPRT by the JSON API (not through the page): the new run's id."""
    import urllib.request
    body = json.dumps({"kind": "sprt", "words": words.split(), "note": note}).encode()
    req = urllib.request.Request(URL + "/api/runs", data=body,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.load(r)["id"]


def api_run(d, rid):
    """The run as `GET /api/runs/ID` answers it, fetched by the page (no navigation)."""
    body = d.execute_script(
        "const x = new XMLHttpRequest(); x.open('GET', arguments[0], false); x.send();"
        "return x.status + ' ' + x.responseText;", f"/api/runs/{rid}")
    status, _, body = body.partition(" ")
    assert status == "200", f"GET /api/runs/{rid}: {status} {body}"
    return json.loads(body)


def submit_spar(d):
    """Submits the SPRT of spar at SPAR_SHA from the index form's engine fields; the run's
    id and the seconds the POST took (the build)."""
    d.get(URL + "/")
    Select(d.find_element(By.NAME, "kind")).select_by_visible_text("sprt")
    Select(d.find_element(By.NAME, "engine")).select_by_value("spar")
    for side, words in (("dev", "option.Eval=nnue"), ("base", "option.Eval=hce")):
        fill(d, f"{side}_rev", SPAR_SHA)
        fill(d, f"{side}_bench", SPAR_BENCH)
        fill(d, f"{side}_words", words)
    fill(d, "words", "--each nodes=1500 --elo0 0 --elo1 20")
    fill(d, "note", "browser net-vs-hce")
    start = time.monotonic()
    # The click returns when the POST's page has loaded: after the build. Both the page-load
    # timeout and the driver connection's own read timeout (120 s by default) must allow it.
    config = d.command_executor.client_config
    read_timeout = config.timeout
    config.timeout = BUILD_WAIT
    d.set_page_load_timeout(BUILD_WAIT)
    d.find_element(By.CSS_SELECTOR, "form[action='/runs'] button[type=submit]").click()
    wait(d, BUILD_WAIT, lambda d: "/runs/" in d.current_url or d.find_elements(By.ID, "error"),
         poll=1)
    d.set_page_load_timeout(120)
    config.timeout = read_timeout
    if d.find_elements(By.ID, "error"):
        raise SystemExit("the run was refused: " + text(d, "#error"))
    return int(d.current_url.rstrip("/").rsplit("/", 1)[1]), time.monotonic() - start


def main():
    d = browser()
    try:
        d.set_page_load_timeout(120)
        d.get(URL + "/")
        assert "Runs" in d.title, d.title
        assert d.find_element(By.NAME, "words"), "no new-run form on the index"
        step("the index is open")

        # Register spar's own repository (built by the git= builder) and the tiny engine
        # from the engines page.
        d.find_element(By.LINK_TEXT, "engines").click()
        for name, repo, build in (("spar", SPAR_REPO, "spar"), ("tiny", REPO, "make")):
            form = d.find_element(By.CSS_SELECTOR, "form[action='/engines']")
            for field, value in (("name", name), ("repo", repo)):
                el = form.find_element(By.NAME, field)
                el.clear()
                el.send_keys(value)
            Select(form.find_element(By.NAME, "build")).select_by_value(build)
            form.find_element(By.TAG_NAME, "button").click()
            wait(d, 30, lambda d: d.find_elements(By.ID, f"engine-{name}")
                 or d.find_elements(By.ID, "error"))
            if d.find_elements(By.ID, "error"):
                raise SystemExit(f"engine {name} was refused: " + text(d, "#error"))
            step(f"engine {name} registered ({repo}, build {build})")

        # An SPRT of two option sets of spar at HEAD, from the form's engine fields: the
        # net against hce. The POST stores it at once; the server's builder builds the commit.
        rid, took = submit_spar(d)
        row = d.find_element(By.ID, "run")
        first = row.get_attribute("data-state")
        step(f"run {rid} submitted from the engine fields; the POST took {took:.0f} s; "
             f"its page shows it {first}")
        # A mark on the page: a reload would lose it.
        d.execute_script("window.__notReloaded = 42;")
        def built(d):
            run = api_run(d, rid)
            return run if all(e["sha"] for e in run["engines"]) else None
        api = wait(d, 900, built, poll=1)
        step(f"run {rid}: spar built at its commit by the server's builder")
        shas = [e["sha"] for e in api["engines"]]
        assert shas == [SPAR_SHA, SPAR_SHA], f"the run's commits {shas}, not HEAD {SPAR_SHA}"
        assert [e["engine"] for e in api["engines"]] == ["spar", "spar"], api["engines"]
        benches = {e["bench"] for e in api["engines"]}
        if SPAR_BENCH:
            assert benches == {int(SPAR_BENCH)}, f"bench {benches}, not {SPAR_BENCH}"
        assert "args=uci" in api["words"], api["words"]
        step(f"run {rid} plays spar at {SPAR_SHA[:12]} (bench {benches.pop()}) as cmd= … args=uci")
        wait(d, 600, lambda d: text(d, "td[data-f=verdict]") in ("H1", "H0"))
        verdict = text(d, "td[data-f=verdict]")
        state = wait(d, 60, 
            lambda d: text(d, "td[data-f=state]") in ("finished", "failed") and text(d, "td[data-f=state]"))
        assert state == "finished", state
        assert d.execute_script("return window.__notReloaded;") == 42, "the page was reloaded"
        assert first in ("queued", "running"), \
            f"the run was {first} when its page loaded: the live update was not seen"
        events = int(row.get_attribute("data-events") or 0)
        assert events >= 1, "the page got no event of the run's live stream (SSE)"
        step(f"run {rid} reached {verdict} ({text(d, 'td[data-f=llr]')}) without a reload "
             f"({events} live stream events)")
        assert verdict == "H1", verdict

        # The index updates live: the same SPRT again (in the words; the build is cached),
        # watched from the index (its stream, /api/events/runs): the row gets its numbers,
        # turns green and moves to Finished.
        sprt = (f"--engine name=dev engine=spar rev={SPAR_SHA} option.Eval=nnue "
                f"--engine name=base engine=spar rev={SPAR_SHA} option.Eval=hce "
                "--each nodes=1500 --elo0 0 --elo1 20")
        # Submitted by the API while the index is open: its row appears without a reload.
        d.get(URL + "/")
        d.execute_script("window.__notReloaded = 43;")
        rid2 = api_submit(sprt, "browser index live")
        wait(d, 120, lambda d: d.find_elements(By.CSS_SELECTOR, f"tr#run-{rid2}[data-added=live]"))
        step(f"run {rid2}, submitted by the API, appeared on the open index without a reload")
        wait(d, 600, lambda d: d.find_elements(
            By.CSS_SELECTOR, f"section#finished tr#run-{rid2}.H1"))
        row2 = d.find_element(By.ID, f"run-{rid2}")
        assert d.execute_script("return window.__notReloaded;") == 43, "the index was reloaded"
        events2 = int(row2.get_attribute("data-events") or 0)
        assert events2 >= 1, "the index got no event of its live stream (SSE)"
        assert row2.find_element(By.CSS_SELECTOR, "td[data-f=state]").text == "finished"
        step(f"run {rid2} turned H1 and moved to Finished on the index without a reload "
             f"({events2} index stream events)")

        # Find it by search (the form: text in the note).
        d.find_element(By.LINK_TEXT, "search").click()
        fill(d, "q", "net-vs-hce")
        Select(d.find_element(By.NAME, "kind")).select_by_visible_text("sprt")
        d.find_element(By.CSS_SELECTOR, "form[action='/search'] button").click()
        wait(d, 30, lambda d: "q=net-vs-hce" in d.current_url)
        assert d.find_elements(By.ID, f"run-{rid}"), "the run is not in the search"
        found = d.current_url
        step(f"found by search: {found}")

        # The event log: spar built once at its commit, then taken from the cache.
        d.get(URL + "/events")
        log = d.find_element(By.TAG_NAME, "body").text
        built = re.search(rf"engine spar at {SPAR_SHA[:12]}: built in ([0-9.]+) s", log)
        assert built, "no build event of spar on /events:\n" + log
        assert f"engine spar at {SPAR_SHA[:12]}: from the cache" in log, log
        step(f"/events: spar built in {built.group(1)} s (bench and the git= build "
             "included), then from the cache")

        # A second run: the registered engine at two revisions; stop it and resume it.
        long = ("--engine name=dev engine=tiny rev=main bench=2000 "
                "--engine name=base engine=tiny rev=base bench=1000 "
                "--each nodes=3000 --games 4000")
        rid2 = submit_run(d, long, "browser stop-resume")
        # Stored at once; the commits and the diff are on its page once the server's
        # builder has resolved and built both revisions.
        def built2(d):
            run = api_run(d, rid2)
            return run if all(e["sha"] for e in run["engines"]) else None
        wait(d, 600, built2, poll=1)
        d.get(URL + f"/runs/{rid2}")
        assert "a faster search" in text(d, "#log"), "no commit list on the run page"
        assert "search.c" in text(d, "#diffstat"), "no diff on the run page"
        step(f"run {rid2}: the page shows the commits and the diff")
        wait(d, 60, lambda d: text(d, "td[data-f=state]") == "running")
        click_and_load(d, "//form[contains(@action,'/stop')]/button")
        wait(d, 60, lambda d: text(d, "td[data-f=state]") == "stopped")
        step(f"run {rid2} stopped")
        click_and_load(d, "//form[contains(@action,'/resume')]/button")
        wait(d, 60, lambda d: text(d, "td[data-f=state]") in ("queued", "running"))
        wait(d, 60, lambda d: text(d, "td[data-f=state]") == "running")
        step(f"run {rid2} resumed")
        click_and_load(d, "//form[contains(@action,'/stop')]/button")
        wait(d, 60, lambda d: text(d, "td[data-f=state]") == "stopped")
        step("all steps passed")
    finally:
        d.quit()


if __name__ == "__main__":
    main()
